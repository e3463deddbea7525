/** What the engine removes on its own: old development deployments, and old builds no one uses. */
import { describe, expect, it } from 'vitest';
import {
  recordsToPrune,
  type RetainedBuild,
  type RetainedDeployment,
} from '../../src/engine/store/record-retention.js';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.UTC(2026, 5, 1);
const RETENTION = { developmentMs: 7 * DAY, buildMs: 30 * DAY };

function deployment(id: string, fields: Partial<RetainedDeployment> = {}): RetainedDeployment {
  return {
    id,
    mcpId: `mcp_${id}`,
    environment: 'development',
    status: 'stopped',
    endedAt: NOW - 10 * DAY,
    previousId: undefined,
    wasDeployed: true,
    ...fields,
  };
}

function build(mcpId: string, daysOld: number, name = 'notes'): RetainedBuild {
  return { mcpId, name, createdAt: NOW - daysOld * DAY };
}

describe('recordsToPrune: deployments', () => {
  it.each([
    { what: 'a development deployment stopped long ago', d: deployment('a'), pruned: true },
    { what: 'one that failed long ago', d: deployment('a', { status: 'failed' }), pruned: true },
    { what: 'one stopped lately', d: deployment('a', { endedAt: NOW - DAY }), pruned: false },
    { what: 'one whose end is unknown', d: deployment('a', { endedAt: undefined }), pruned: false },
    { what: 'one that runs', d: deployment('a', { status: 'deployed' }), pruned: false },
    { what: 'one that starts', d: deployment('a', { status: 'deploying' }), pruned: false },
    { what: 'production, however old', d: deployment('a', { environment: 'production' }), pruned: false },
    { what: 'staging, however old', d: deployment('a', { environment: 'staging' }), pruned: false },
  ])('$what: pruned $pruned', ({ d, pruned }) => {
    expect(recordsToPrune([d], [], RETENTION, NOW).deployments).toEqual(pruned ? [d.id] : []);
  });

  it('keeps what the rollback of a running deployment goes back to, and nothing older', () => {
    const plan = recordsToPrune(
      [
        deployment('live', { status: 'deployed', previousId: 'never' }),
        // never deployed: the rollback goes through it to the one before
        deployment('never', { status: 'failed', wasDeployed: false, previousId: 'target' }),
        deployment('target', { previousId: 'older' }),
        deployment('older'),
      ],
      [],
      RETENTION,
      NOW,
    );
    expect(plan.deployments).toEqual(['older']);
  });

  it('a retention of 0 keeps everything', () => {
    const plan = recordsToPrune(
      [deployment('a')],
      [build('mcp_x', 90), build('mcp_y', 1)],
      { developmentMs: 0, buildMs: 0 },
      NOW,
    );
    expect(plan).toEqual({ deployments: [], builds: [] });
  });
});

describe('recordsToPrune: builds', () => {
  it('removes old builds no kept deployment uses, never the newest of a name', () => {
    const plan = recordsToPrune(
      [
        deployment('kept', { environment: 'production', mcpId: 'mcp_used' }),
        // pruned itself, so its build is no longer used
        deployment('old', { mcpId: 'mcp_of_old' }),
      ],
      [
        build('mcp_newest', 1),
        build('mcp_used', 90),
        build('mcp_of_old', 90),
        build('mcp_unused', 90),
        build('mcp_recent', 3),
        build('mcp_other', 90, 'weather'),
      ],
      RETENTION,
      NOW,
    );
    expect(plan.deployments).toEqual(['old']);
    expect(plan.builds.sort()).toEqual(['mcp_of_old', 'mcp_unused']);
  });
});
