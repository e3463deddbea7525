/**
 * How the deployment service makes a LiveDeployment of a record (for a new deploy and for an engine
 * start) and what an engine start needs from it (restore.ts): the parts every deployment shares.
 */
import { requestStateKeys } from './request-state-keys.js';
import type { WorkQueue } from '../admission.js';
import type { DeploymentRecord, ServerRecord } from '../records.js';
import type { DeploymentServiceDeps } from '../services.js';
import type { Logger } from '../engine-log.js';
import type { Store } from '../store/store.js';
import type { Runner } from '../runners/runner.js';
import type { SecretRegistry } from '../secret-registry.js';
import type { DeploymentLimits } from './limits.js';
import { LiveDeployment } from './live-deployment.js';
import type { LogBook } from './log-book.js';
import type { Registry } from './registry.js';
import { restoreOne, stopLeftInstances, type RestoreContext } from './restore.js';

/** What every deployment of one service shares. */
export interface ServiceParts {
  deps: DeploymentServiceDeps;
  store: Store;
  registry: Registry;
  runner: Runner;
  starts: WorkQueue;
  secrets: SecretRegistry;
  limits: DeploymentLimits;
  logger: Logger;
  clock: () => number;
  logDir: string;
  closing: () => boolean;
  closed: () => boolean;
}

/** Makes a LiveDeployment of a record and registers it. */
export function adoptDeployment(
  parts: ServiceParts,
  record: DeploymentRecord,
  server: ServerRecord,
  routeName: string,
  min: number,
  max: number,
  logs: LogBook,
): LiveDeployment {
  const { runner } = parts;
  const live = new LiveDeployment(record, {
    server,
    routeName,
    min,
    max,
    store: parts.store,
    runner,
    ...(runner.orchestrator === undefined ? {} : { orchestrator: runner.orchestrator }),
    engine: parts.deps.home,
    starts: parts.starts,
    limits: parts.limits,
    clock: parts.clock,
    logs,
    logger: parts.logger,
    secrets: parts.secrets,
    writable: () => !parts.closed(),
    observers: parts.deps.observers,
    tracing: parts.deps.tracing,
    requestStateKeys: requestStateKeys(parts.deps.home),
  });
  parts.registry.add(live);
  return live;
}

export function restoreContextOf(parts: ServiceParts): RestoreContext {
  return {
    store: parts.store,
    registry: parts.registry,
    runner: parts.runner,
    home: parts.deps.home,
    baseUrl: parts.deps.baseUrl,
    https: parts.deps.https,
    isolation: parts.deps.isolation,
    alerting: parts.deps.alerting,
    logDir: parts.logDir,
    limits: parts.limits,
    logger: parts.logger,
    clock: parts.clock,
    closing: parts.closing,
    adopt: (record, server, routeName, min, max, logs) =>
      adoptDeployment(parts, record, server, routeName, min, max, logs),
    finish: async (live) => {
      parts.registry.retire();
      await settled(live);
    },
  };
}

/** Brings back every deployment that was deployed and does not run here yet. */
export async function restoreDeployed(ctx: RestoreContext): Promise<void> {
  await stopLeftInstances(ctx);
  const records = await ctx.store.listDeployments({ status: 'deployed' });
  await Promise.all(
    records
      .filter((record) => !ctx.registry.has(record.deployment.deployment_id))
      .map((record) => restoreOne(ctx, record)),
  );
}

/** Waits for a deployment's writes in the background, where a failed one is already logged. */
export function settled(live: LiveDeployment): Promise<void> {
  return live.flush().catch(() => undefined);
}
