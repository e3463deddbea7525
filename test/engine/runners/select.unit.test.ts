import { describe, expect, it } from 'vitest';
import { chooseRunner, RunnerConfigError } from '../../../src/engine/runners/select.js';

describe('choosing the runner of an engine', () => {
  it('takes the first choice that is set, and process when none is', () => {
    expect(chooseRunner([])).toBe('process');
    expect(
      chooseRunner([
        { value: undefined, from: '--runner' },
        { value: '', from: 'MCPCTL_RUNNER' },
        { value: 'docker', from: 'settings' },
      ]),
    ).toBe('docker');
    expect(
      chooseRunner([
        { value: 'process', from: '--runner' },
        { value: 'docker', from: 'MCPCTL_RUNNER' },
      ]),
    ).toBe('process');
  });

  it('names where a wrong kind came from and the kinds there are', () => {
    expect(() => chooseRunner([{ value: 'podman', from: 'MCPCTL_RUNNER' }])).toThrow(RunnerConfigError);
    expect(() => chooseRunner([{ value: 'podman', from: 'MCPCTL_RUNNER' }])).toThrow(
      'MCPCTL_RUNNER must be one of process, docker, kubernetes, not "podman"',
    );
  });
});
