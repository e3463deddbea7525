import { describe, expect, it } from 'vitest';
import { configFromDefinition } from '../../src/cli/steps/deploy-config.js';
import { newDeploymentRecord } from '../../src/engine/deployments/new-record.js';
import type { IsolationReport } from '../../src/engine/isolation.js';
import type { ServerRecord } from '../../src/engine/records.js';

describe('deploy.resources', () => {
  it('merges an environment’s resources field by field over the defaults', async () => {
    const defaults = {
      resources: { memory_mb: 512, cpus: 1 },
      environments: { production: { resources: { cpus: 2 } } },
    };
    expect(await configFromDefinition(defaults, 'production', {})).toEqual({ resources: { memory_mb: 512, cpus: 2 } });
    expect(await configFromDefinition(defaults, 'staging', {})).toEqual({ resources: { memory_mb: 512, cpus: 1 } });
  });

  it('are said to be held by Node’s heap only where the engine cannot make control groups, and a missing sandbox is said too', () => {
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
    const weak: IsolationReport = {
      sandbox: 'none',
      limits: 'node heap',
      reasons: ['bubblewrap (bwrap) is not installed'],
    };
    const strong: IsolationReport = { sandbox: 'bubblewrap', limits: 'cgroup v1', reasons: [] };
    const heapOnly = /memory is limited by Node’s heap size only, and CPU not at all/;
    const unsandboxed = /without a sandbox here \(bubblewrap \(bwrap\) is not installed\).*--runner docker/;
    const notices = (runner: string, isolation: IsolationReport) =>
      newDeploymentRecord({ ...input, runner, isolation }).deployment.notices!;
    expect(notices('process', weak).some((n) => heapOnly.test(n))).toBe(true);
    expect(notices('process', weak).some((n) => unsandboxed.test(n))).toBe(true);
    expect(notices('process', strong).some((n) => heapOnly.test(n) || unsandboxed.test(n))).toBe(false);
    const docker = newDeploymentRecord({ ...input, runner: 'docker', isolation: weak }).deployment;
    expect(docker.runner).toBe('docker');
    expect(docker.notices!.some((n) => heapOnly.test(n) || unsandboxed.test(n))).toBe(false);
  });
});
