/**
 * How many runs of `POST /v1/test` the store keeps. Every run is kept as a file, and a CI job that
 * tests on every push would otherwise fill the disk and the engine's memory (the store reads every
 * record at start). The newest runs are the ones worth looking at. Pure: no IO.
 */

/** At most this many runs in all, and this many of any one server. */
export const TEST_RUN_RETENTION = { total: 1000, perServer: 200 } as const;

export interface RetentionLimits {
  total: number;
  perServer: number;
}

/** What retention needs of a run. */
export interface RetainedRun {
  id: string;
  mcpId: string;
  createdAt: string;
}

/**
 * The ids of the runs to drop so that at most `limits.perServer` of each server and
 * `limits.total` in all remain, the newest kept. `runs` must be newest first.
 */
export function testRunsToDrop(runs: readonly RetainedRun[], limits: RetentionLimits = TEST_RUN_RETENTION): string[] {
  const drop: string[] = [];
  const perServer = new Map<string, number>();
  let kept = 0;
  for (const run of runs) {
    const ofServer = perServer.get(run.mcpId) ?? 0;
    if (kept >= limits.total || ofServer >= limits.perServer) {
      drop.push(run.id);
      continue;
    }
    perServer.set(run.mcpId, ofServer + 1);
    kept += 1;
  }
  return drop;
}
