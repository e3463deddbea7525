import { describe, expect, it } from 'vitest';
import { configFromDefinition } from '../../src/cli/steps/deploy-config.js';
import { newDeploymentRecord } from '../../src/engine/deployments/new-record.js';
import type { ServerRecord } from '../../src/engine/types.js';

describe('deploy.resources', () => {
  it('merges an environment’s resources field by field over the defaults', async () => {
    const defaults = { resources: { memory_mb: 512, cpus: 1 }, environments: { production: { resources: { cpus: 2 } } } };
    expect(await configFromDefinition(defaults, 'production', {})).toEqual({ resources: { memory_mb: 512, cpus: 2 } });
    expect(await configFromDefinition(defaults, 'staging', {})).toEqual({ resources: { memory_mb: 512, cpus: 1 } });
  });

  it('are said not to be enforced when the engine runs instances as processes', () => {
    const server = { server: { mcp_id: 'mcp_abc123', name: 'calc' } } as unknown as ServerRecord;
    const input = {
      server,
      environment: 'production' as const,
      config: { resources: { memory_mb: 300 } },
      domain: undefined,
      desired: 2,
      previousId: undefined,
      baseUrl: 'http://127.0.0.1:1',
      now: 0,
    };
    const notEnforced = /not enforced by this engine’s process runner/;
    expect(newDeploymentRecord({ ...input, runner: 'process' }).deployment.notices!.some((n) => notEnforced.test(n))).toBe(true);
    const docker = newDeploymentRecord({ ...input, runner: 'docker' }).deployment;
    expect(docker.runner).toBe('docker');
    expect(docker.notices!.some((n) => notEnforced.test(n))).toBe(false);
  });
});
