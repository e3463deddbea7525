import { describe, expect, it } from 'vitest';
import { RunnerConfigError, runnerKind } from '../../../src/engine/runners/select.js';
import { engineLimits } from '../../../src/engine/engine-limits.js';

const file = (values: Record<string, unknown>) => ({ path: '/home/me/engine-settings.json', values });

describe('choosing the runner of an engine', () => {
  it('takes the flag, else the variable, else the settings file, else process', () => {
    expect(runnerKind({ env: {} })).toBe('process');
    expect(runnerKind({ env: { MCPCTL_RUNNER: '' }, file: file({ runner: 'docker' }) })).toBe('docker');
    expect(runnerKind({ env: { MCPCTL_RUNNER: 'kubernetes' }, file: file({ runner: 'docker' }) })).toBe('kubernetes');
    expect(runnerKind({ flag: 'process', env: { MCPCTL_RUNNER: 'docker' } })).toBe('process');
  });

  it('names where a wrong kind came from and the kinds there are', () => {
    expect(() => runnerKind({ env: { MCPCTL_RUNNER: 'podman' } })).toThrow(RunnerConfigError);
    expect(() => runnerKind({ env: { MCPCTL_RUNNER: 'podman' } })).toThrow(
      'MCPCTL_RUNNER must be one of process, docker, kubernetes, not "podman"',
    );
    expect(() => runnerKind({ env: {}, file: file({ runner: 'podman' }) })).toThrow(
      /"runner" in \/home\/me\/engine-settings\.json must be one of process, docker, kubernetes/,
    );
  });
});

describe("the engine's tuning knobs", () => {
  it('are read from the `tuning` section of the settings file, the variable winning', () => {
    const tuned = engineLimits({ env: {}, file: file({ tuning: { warm_pool: 0, queue_max: 7 } }) });
    expect(tuned.warmPool).toBe(0);
    expect(tuned.admission.maxWaiting).toBe(7);
    expect(
      engineLimits({ env: { MCPCTL_QUEUE_MAX: '9' }, file: file({ tuning: { queue_max: 7 } }) }).admission.maxWaiting,
    ).toBe(9);
  });
});
