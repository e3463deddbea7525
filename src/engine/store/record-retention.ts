/**
 * Which deployments and builds the engine removes on its own. Development deployments come and go
 * with every edit, and every build keeps a bundle on disk: without this, a home only grows.
 * Production and staging deployments are never removed here (their history is what a rollback and
 * an audit read); a person removes them with `mcpctl rm`. Pure: no IO.
 */

/** How long what the engine removes on its own is kept; 0 keeps it forever. */
export interface RecordRetention {
  /** a development deployment stopped or failed this long ago is removed */
  developmentMs: number;
  /** a build this old that no kept deployment uses, and that is not its server's newest, is removed */
  buildMs: number;
}

/** What retention needs of a deployment. */
export interface RetainedDeployment {
  id: string;
  mcpId: string;
  environment: string;
  status: string;
  /** when it stopped or failed (its last change); undefined when unknown */
  endedAt: number | undefined;
  /** the deployment it replaced: what a rollback of it goes back to (or through) */
  previousId: string | undefined;
  /** it was `deployed` at some point: a rollback can go back to it */
  wasDeployed: boolean;
}

/** What retention needs of a build. */
export interface RetainedBuild {
  mcpId: string;
  name: string;
  createdAt: number | undefined;
}

export interface PrunePlan {
  deployments: string[];
  builds: string[];
}

const ended = (status: string) => status === 'stopped' || status === 'failed';

/**
 * The deployments and builds to remove at `now`. Never one a deployment that runs (or starts)
 * needs: itself, the deployments its rollback goes back through, and their builds; never the
 * newest build of a server name; nothing whose age is unknown.
 */
export function recordsToPrune(
  deployments: readonly RetainedDeployment[],
  builds: readonly RetainedBuild[],
  retention: RecordRetention,
  now: number,
): PrunePlan {
  const protectedIds = rollbackChains(deployments);
  const drop = new Set<string>();
  if (retention.developmentMs > 0) {
    for (const d of deployments) {
      if (d.environment !== 'development' || !ended(d.status) || protectedIds.has(d.id)) continue;
      if (d.endedAt !== undefined && now - d.endedAt > retention.developmentMs) drop.add(d.id);
    }
  }
  const used = new Set(deployments.filter((d) => !drop.has(d.id)).map((d) => d.mcpId));
  const newest = newestBuilds(builds);
  const oldBuilds =
    retention.buildMs <= 0
      ? []
      : builds.filter(
          (b) =>
            !used.has(b.mcpId) &&
            !newest.has(b.mcpId) &&
            b.createdAt !== undefined &&
            now - b.createdAt > retention.buildMs,
        );
  return { deployments: [...drop], builds: oldBuilds.map((b) => b.mcpId) };
}

/**
 * Every deployment that runs or starts, and the ones its rollback goes back through, up to the
 * nearest that was deployed (the one it goes back to), as the deployment service walks them.
 */
function rollbackChains(deployments: readonly RetainedDeployment[]): Set<string> {
  const byId = new Map(deployments.map((d) => [d.id, d]));
  const kept = new Set<string>();
  for (const d of deployments) {
    if (ended(d.status)) continue;
    kept.add(d.id);
    let current = d.previousId === undefined ? undefined : byId.get(d.previousId);
    const seen = new Set<string>([d.id]);
    while (current !== undefined && !seen.has(current.id)) {
      seen.add(current.id);
      kept.add(current.id);
      if (current.wasDeployed) break;
      current = current.previousId === undefined ? undefined : byId.get(current.previousId);
    }
  }
  return kept;
}

/** The newest build of each server name. */
function newestBuilds(builds: readonly RetainedBuild[]): Set<string> {
  const newest = new Map<string, RetainedBuild>();
  for (const b of builds) {
    const held = newest.get(b.name);
    if (held === undefined || (b.createdAt ?? 0) > (held.createdAt ?? 0)) newest.set(b.name, b);
  }
  return new Set([...newest.values()].map((b) => b.mcpId));
}
