import { describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/ui/api-types.js';
import { groupDeployments, instanceCounts } from '../../src/ui/deployments-view.js';

function deployment(id: string, environment: string, status: Deployment['status'], created_at: string): Deployment {
  return { deployment_id: id, environment, status, created_at, url: '', health_check: '', deploy_time: null };
}

describe('the deployments page', () => {
  it('groups by environment, production first, stopped ones apart, newest first', () => {
    const groups = groupDeployments([
      deployment('d1', 'development', 'deployed', '2026-01-01'),
      deployment('d2', 'production', 'stopped', '2026-01-02'),
      deployment('d3', 'production', 'deployed', '2026-01-03'),
      deployment('d4', 'production', 'failed', '2026-01-04'),
      deployment('d5', 'staging', 'deploying', '2026-01-05'),
    ]);
    expect(
      groups.map((g) => [g.environment, g.active.map((d) => d.deployment_id), g.stopped.map((d) => d.deployment_id)]),
    ).toEqual([
      ['production', ['d4', 'd3'], ['d2']],
      ['staging', ['d5'], []],
      ['development', ['d1'], []],
    ]);
  });

  it('counts healthy instances against the desired number', () => {
    const d = {
      ...deployment('d1', 'production', 'deployed', ''),
      desired_instances: 3,
      instances: [
        { id: 'i1', state: 'healthy' },
        { id: 'i2', state: 'starting' },
      ],
    };
    expect(instanceCounts(d)).toEqual({ healthy: 1, desired: 3 });
  });
});
