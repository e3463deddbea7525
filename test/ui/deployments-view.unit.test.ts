import { describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/ui/api-types.js';
import { groupDeployments, instanceCounts } from '../../src/ui/deployments-view.js';

function deployment(id: string, environment: string, status: Deployment['status'], created_at: string): Deployment {
  return { deployment_id: id, environment, status, created_at, url: '', health_check: '', deploy_time: null };
}

describe('the deployments page', () => {
  it('groups by environment, production first, then any other by name, newest first', () => {
    const groups = groupDeployments([
      deployment('d1', 'development', 'deployed', '2026-01-01T00:00:00.000Z'),
      deployment('d2', 'qa', 'deployed', '2026-01-02T00:00:00.000Z'),
      deployment('d3', 'production', 'deployed', '2026-01-03T00:00:00.000Z'),
      deployment('d4', 'production', 'failed', '2026-01-04T00:00:00.000Z'),
      deployment('d5', 'staging', 'deploying', '2026-01-05T00:00:00.000Z'),
      deployment('d6', 'production', 'deployed', '2026-01-03T00:00:00.500Z'),
    ]);
    expect(groups.map((g) => [g.environment, g.deployments.map((d) => d.deployment_id)])).toEqual([
      ['production', ['d4', 'd6', 'd3']],
      ['staging', ['d5']],
      ['development', ['d1']],
      ['qa', ['d2']],
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
