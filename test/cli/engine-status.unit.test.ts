import { describe, expect, it } from 'vitest';
import { runningEngineFields } from '../../src/cli/commands/engine.js';
import type { EngineStatus } from '../../src/cli/local-engine.js';

const running: EngineStatus = {
  running: true,
  home: '/home/me/.mcpctl',
  log_file: '/home/me/.mcpctl/engine.log',
  url: 'http://127.0.0.1:47321',
  pid: 4242,
  version: '1.2.3',
  mode: 'background',
  runner: 'docker',
  uptime_seconds: 75,
};

describe('mcpctl engine status fields', () => {
  it('shows when production deployments run as Swarm services', () => {
    const fields = new Map(
      runningEngineFields({ ...running, swarm: 'production as Swarm services (spread over node.labels.region)' }),
    );
    expect(fields.get('runner')).toBe('docker');
    expect(fields.get('swarm')).toBe('production as Swarm services (spread over node.labels.region)');
    expect(fields.get('uptime')).toBe('1 min 15 s');
  });

  it('has no swarm value when the runner does not use Swarm (the row is skipped)', () => {
    const fields = new Map(runningEngineFields({ ...running, runner: undefined }));
    expect(fields.get('runner')).toBe('process');
    expect(fields.get('swarm')).toBeUndefined();
  });
});
