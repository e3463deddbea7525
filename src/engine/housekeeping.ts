/**
 * Removing what the engine keeps: a deployment that has ended (its record, its log files, its
 * metrics history), a build that no running deployment uses (its record and its bundle), and, on
 * its own (once at start, then every `everyMs`), what the retention says is old
 * (store/record-retention.ts). Stopped deployments of a removed build stay listed; a rollback to
 * one of them says its build no longer exists.
 */
import { rm } from 'node:fs/promises';
import { relative, isAbsolute } from 'node:path';
import type { Deployment } from '../api/contract.js';
import type { Logger } from './engine-log.js';
import type { ServerRecord } from './records.js';
import { ServiceError } from './service-error.js';
import type { DeploymentService } from './services.js';
import { recordsToPrune, type PrunePlan, type RecordRetention } from './store/record-retention.js';
import type { Store } from './store/store.js';
import { MCP_ID_PATTERN } from '../api/operations.js';

export interface HousekeepingDeps {
  store: Store;
  deployments: DeploymentService | undefined;
  /** the metrics history, when the engine keeps one */
  history: { forget(deploymentId: string): Promise<void> } | undefined;
  /** `<home>/bundles`: only bundles inside it are removed */
  bundlesDir: string;
  logger: Logger;
  clock: () => number;
  retention: RecordRetention;
  everyMs: number;
}

const ACTIVE = new Set(['deploying', 'deployed']);

export class Housekeeping {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly deps: HousekeepingDeps) {}

  /** Removes a stopped or failed deployment; `conflict` while it runs, `not_found` when there is none. */
  async removeDeployment(deploymentId: string): Promise<Deployment> {
    const { deployments, history, store } = this.deps;
    if (deployments?.remove === undefined) {
      // an unknown id is not found on any engine, whether or not it can remove
      if ((await store.getDeployment(deploymentId)) === undefined) {
        throw new ServiceError('not_found', `no deployment ${deploymentId}; list them with \`mcpctl ls\``);
      }
      throw new ServiceError('not_implemented', 'this engine cannot remove deployments');
    }
    const removed = await deployments.remove(deploymentId);
    await history?.forget(deploymentId);
    return removed;
  }

  /** Removes a build that no deployment runs; `conflict` naming the one that does. */
  async removeServer(mcpId: string): Promise<ServerRecord> {
    const { store, deployments } = this.deps;
    const record = MCP_ID_PATTERN.test(mcpId) ? await store.getServer(mcpId) : undefined;
    if (record === undefined) {
      throw new ServiceError('not_found', `no server ${mcpId}; list them with \`mcpctl ls --servers\``);
    }
    for (const stored of await store.listDeployments({ mcpId })) {
      const id = stored.deployment.deployment_id;
      const status = (await deployments?.status(id))?.status ?? stored.deployment.status;
      if (!ACTIVE.has(status)) continue;
      const where = `${record.server.name}.${stored.deployment.environment ?? 'development'}`;
      throw new ServiceError(
        'conflict',
        `build ${mcpId} is used by deployment ${id} (${where}, ${status}); stop it first (mcpctl stop ${id}), then remove the build`,
      );
    }
    await store.deleteServer(mcpId);
    await this.removeBundle(record);
    return record;
  }

  /** Removes what is past the retention, once; what it removed. */
  prune(): Promise<PrunePlan> {
    const run = this.running.then(() => this.pruneNow());
    this.running = run.catch(() => undefined);
    return run;
  }

  /** Prunes now, then every `everyMs`, until close. */
  start(): void {
    void this.prune().catch(() => undefined);
    this.timer = setInterval(() => void this.prune().catch(() => undefined), this.deps.everyMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.running;
  }

  private async pruneNow(): Promise<PrunePlan> {
    const { store, logger, clock, retention } = this.deps;
    const empty: PrunePlan = { deployments: [], builds: [] };
    if (this.closed) return empty;
    const records = await store.listDeployments();
    const deployments = records.map(({ deployment: d, mcpId, previousId }) => ({
      id: d.deployment_id,
      mcpId,
      environment: d.environment ?? 'development',
      status: d.status,
      endedAt: timeOf(d.updated_at ?? d.transitions?.at(-1)?.at),
      previousId,
      wasDeployed: (d.transitions ?? []).some((t) => t.status === 'deployed'),
    }));
    const builds = (await store.listServers()).map(({ server }) => ({
      mcpId: server.mcp_id,
      name: server.name,
      createdAt: timeOf(server.created_at),
    }));
    const plan = recordsToPrune(deployments, builds, retention, clock());
    const done: PrunePlan = { deployments: [], builds: [] };
    for (const id of plan.deployments) {
      if (this.closed) break;
      await this.attempt(() => this.removeDeployment(id), id, done.deployments);
    }
    for (const mcpId of plan.builds) {
      if (this.closed) break;
      await this.attempt(() => this.removeServer(mcpId), mcpId, done.builds);
    }
    if (done.deployments.length + done.builds.length > 0) {
      logger.info('removed old records past their retention', {
        deployments: done.deployments,
        builds: done.builds,
        development_days: retention.developmentMs / 86_400_000,
        build_days: retention.buildMs / 86_400_000,
      });
    }
    return done;
  }

  /** One removal; one that fails (started again meanwhile, a file that will not go) waits for the next round. */
  private async attempt(remove: () => Promise<unknown>, id: string, done: string[]): Promise<void> {
    try {
      await remove();
      done.push(id);
    } catch (error) {
      this.deps.logger.warn('an old record could not be removed', {
        id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /** The bundle of a removed build, when it is the engine's own and no other build shares it. */
  private async removeBundle(record: ServerRecord): Promise<void> {
    const inside = relative(this.deps.bundlesDir, record.bundleDir);
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return;
    const shared = (await this.deps.store.listServers({ digest: record.digest })).length > 0;
    if (shared) return;
    await rm(record.bundleDir, { recursive: true, force: true });
  }
}

function timeOf(iso: string | undefined): number | undefined {
  const time = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isFinite(time) ? time : undefined;
}
