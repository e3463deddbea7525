/**
 * The deployment service: deploy, status, stop, rollback, logs, metrics, the gateway, and the
 * engine's start (restore.ts, service-restore.ts) and stop (close). It owns every LiveDeployment (registry.ts) and
 * the rules between them: one active deployment per server name and environment (a newer one
 * replaces the older once it is deployed), domains, idle clean-up of development deployments.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createAdmission, type WorkQueue } from '../admission.js';
import type { Deployment, DeployRequest, LogLine, Metrics } from '../../api/contract.js';
import { ServiceError, storageServiceError } from '../service-error.js';
import type { DeploymentRecord, ServerRecord } from '../records.js';
import type { DeploymentService, DeploymentServiceDeps, LogReadOptions } from '../services.js';
import type { Logger } from '../engine-log.js';
import type { Store } from '../store/store.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProcessRunner } from '../runners/process/process-runner.js';
import { runnerKindFor, type Runner } from '../runners/runner.js';
import { createGateway, type Gateway } from '../gateway/gateway.js';
import { newRequestId } from '../ids.js';
import { originsFromEnv } from '../../shared/origins.js';
import { DEFAULT_LIMITS, devIdleFromEnv, type DeploymentLimits } from './limits.js';
import type { LiveDeployment } from './live-deployment.js';
import { LogBook } from './log-book.js';
import { checkExposure } from './exposure.js';
import { newDeploymentRecord } from './new-record.js';
import { followLogs, readLogs, readMetrics, storedView, type Observed } from './observe.js';
import { History } from './history.js';
import { Registry } from './registry.js';
import { failInterrupted } from './restore.js';
import { adoptDeployment, restoreContextOf, restoreDeployed, settled, type ServiceParts } from './service-restore.js';
import { applyTransition, canTransition } from './states.js';
import { idlePeriodMs, planReplacement, shouldIdle } from './decisions.js';
import { cannotStop, checkDomainFree, validateDeploy, withoutUndefined } from './deploy-checks.js';
import { planRollback, type RolledBackTo } from './rollback-plan.js';
import { removeDeployment } from './removal.js';
import type { DeploymentSnapshot } from '../observability/events.js';
import { SecretRegistry } from '../secret-registry.js';

/**
 * What the engine passes (services.ts), plus the timing knobs tests shorten (health checks, restarts,
 * autoscaling, idle clean-up; see limits.ts). Logs are kept in `<home>/deployment-logs/`.
 */
export interface DeploymentServiceOptions extends DeploymentServiceDeps {
  limits?: Partial<DeploymentLimits>;
}

/** The DeploymentService of services.ts, plus what tests and the engine may look at. */
export interface LocalDeploymentService extends DeploymentService {
  readonly limits: DeploymentLimits;
}

export function createDeploymentService(deps: DeploymentServiceOptions): LocalDeploymentService {
  return new Deployments(deps);
}

interface DeployOptions {
  /** for a rollback: the chain to keep (its target's predecessor) */
  previousId?: string | null;
  note?: string;
  rolledBackTo?: RolledBackTo;
}

class Deployments implements LocalDeploymentService {
  readonly limits: DeploymentLimits;
  private readonly store: Store;
  private readonly clock: () => number;
  private readonly logger: Logger;
  private readonly logDir: string;
  private readonly registry: Registry;
  private readonly runner: Runner;
  private readonly history: History;
  private readonly gateway: Gateway;
  private readonly starts: WorkQueue;
  private readonly secrets: SecretRegistry;
  private recovered: Promise<void> | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private closed = false;

  constructor(private readonly deps: DeploymentServiceOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...withoutUndefined({ devIdleMs: devIdleFromEnv(deps.env) }), ...deps.limits };
    this.store = deps.store;
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.secrets = deps.secrets ?? new SecretRegistry();
    this.logDir = join(deps.home, 'deployment-logs');
    this.starts = deps.starts ?? createAdmission(undefined, deps.clock).starts;
    this.registry = new Registry(deps.store);
    this.history = new History(deps.store, this.registry);
    this.runner = deps.runner ?? createProcessRunner(deps.startRuntime, { socketDir: join(deps.home, 'run') });
    this.gateway = createGateway(
      {
        byName: (name) => (this.registry.byName(name) ?? this.registry.stable(name))?.upstream,
        byDomain: (host) =>
          (this.registry.byDomain(host) ?? (host.endsWith('.localhost') ? this.registry.stable(host) : undefined))
            ?.upstream,
        inactive: (name) => this.registry.inactive(name),
      },
      {
        limits: this.limits,
        clock: this.clock,
        newRequestId,
        allowedOrigins: originsFromEnv(deps.env),
        publicUrl: deps.baseUrl,
      },
    );
    this.idleTimer = setInterval(() => void this.stopIdle(), this.limits.idleCheckMs);
    this.idleTimer.unref();
  }

  // --- deploy -------------------------------------------------------------------------------

  async deploy(server: ServerRecord, request: DeployRequest, options: DeployOptions = {}): Promise<Deployment> {
    if (this.closing) throw new ServiceError('unavailable', 'the engine is stopping; retry once it is up again');
    const { environment, scaling, domain } = validateDeploy(request, runnerKindFor(this.runner, request.environment));
    checkExposure(server, {
      domain,
      engineExposed: this.deps.exposed === true,
      runner: runnerKindFor(this.runner, environment),
    });
    this.starts.admit('instance starts');
    const name = server.server.name;
    if (domain !== undefined) checkDomainFree(this.registry.withDomain(domain), domain, name, environment);
    const previousId =
      options.previousId === undefined
        ? await this.history.previous(name, environment)
        : (options.previousId ?? undefined);
    const record = newDeploymentRecord({
      server,
      environment,
      config: request.config,
      domain,
      desired: scaling.min,
      previousId,
      baseUrl: this.deps.baseUrl,
      https: this.deps.https,
      isolation: this.deps.isolation,
      alerting: this.deps.alerting,
      now: this.clock(),
      runner: runnerKindFor(this.runner, environment),
    });
    if (options.rolledBackTo !== undefined) record.deployment.rolled_back_to = options.rolledBackTo;
    const id = record.deployment.deployment_id;
    const routeName = record.routeName!;
    this.history.knowServer(server.server.mcp_id, name);
    const live = this.adopt(
      record,
      server,
      routeName,
      scaling.min,
      scaling.max,
      new LogBook(this.logDir, id, this.limits.logLinesKept),
    );
    const what = options.note ?? `deploying ${name} (${server.server.mcp_id})`;
    live.log(
      'info',
      `${what} to ${environment}: ${scaling.min} instance${scaling.min === 1 ? '' : 's'} (at most ${scaling.max})`,
    );
    live.changed(true);
    try {
      await live.flush();
    } catch (error) {
      // Not on disk, so not accepted: nothing starts, and no answer shows it.
      this.registry.remove(live);
      throw (
        storageServiceError(error) ??
        new ServiceError(
          'unavailable',
          `the deployment could not be saved, so it was not started: ${error instanceof Error ? error.message : String(error)}`,
        )
      );
    }
    // The answer is the deployment as accepted (`deploying`); clients follow it with waitForChange.
    void this.bringUp(live);
    return live.toDeployment();
  }

  private async bringUp(live: LiveDeployment): Promise<void> {
    try {
      await live.launch(live.desired, 'starting');
    } catch (error) {
      if (this.closing || live.status !== 'deploying') return;
      live.transition('failed', `instances did not start: ${error instanceof Error ? error.message : String(error)}`);
      this.registry.retire();
      await settled(live);
      return;
    }
    if (live.status !== 'deploying') return;
    live.transition('deployed');
    live.startAutoscaler();
    await this.replaceOthers(live).catch(() => undefined);
    await settled(live);
  }

  /** One active deployment per server name and environment: the newest deployed one wins (decisions.ts). */
  private async replaceOthers(live: LiveDeployment): Promise<void> {
    const rivals = this.registry
      .ofServer(live.serverName, live.environment)
      .filter((other) => other !== live && other.status === 'deployed');
    for (const { stop, by } of planReplacement(live, rivals)) {
      if (stop === live) return this.stopLive(live, `replaced by ${by.id}`);
      await this.stopLive(stop, `replaced by ${by.id}`).catch(() => undefined);
    }
  }

  private async stopLive(live: LiveDeployment, reason: string): Promise<void> {
    if (!canTransition(live.status, 'stopped')) return;
    live.transition('stopped', reason);
    // No new requests reach it now; let the ones in flight finish.
    await live.drainAll();
    await live.stopInstances();
    this.registry.retire();
    // rejects when `stopped` did not reach the disk: a stop request must not be told it did
    await live.flush();
  }

  // --- reading ------------------------------------------------------------------------------

  async status(deploymentId: string): Promise<Deployment | undefined> {
    const live = this.registry.get(deploymentId);
    if (live !== undefined) return live.toDeployment();
    const record = await this.store.getDeployment(deploymentId);
    return record === undefined ? undefined : storedView(record.deployment);
  }

  async waitForChange(
    deploymentId: string,
    timeoutMs: number,
    signal?: AbortSignal,
    unchanged?: (deployment: Deployment) => boolean,
  ): Promise<Deployment | undefined> {
    const live = this.registry.get(deploymentId);
    if (live !== undefined && unchanged !== undefined)
      return live.waitUntil((view) => !unchanged(view), timeoutMs, signal);
    if (live !== undefined) {
      await live.waitForChange(timeoutMs, signal);
      return this.status(deploymentId);
    }
    const record = await this.store.getDeployment(deploymentId);
    if (record === undefined) return undefined;
    // Not running here, so nothing will change it: wait out the time as asked.
    await sleep(timeoutMs, undefined, { signal }).catch(() => undefined);
    return this.status(deploymentId);
  }

  async logs(deploymentId: string, options: LogReadOptions): Promise<LogLine[]> {
    return readLogs(this.observed(), deploymentId, options);
  }

  async followLogs(deploymentId: string, onLine: (line: LogLine) => void, signal: AbortSignal): Promise<void> {
    return followLogs(this.observed(), deploymentId, onLine, signal);
  }

  async metrics(deploymentId: string, windowSeconds: number): Promise<Metrics> {
    return readMetrics(this.observed(), deploymentId, windowSeconds);
  }

  snapshot(): DeploymentSnapshot[] {
    return this.registry.all().map((live) => live.snapshot());
  }

  private observed(): Observed {
    return {
      registry: this.registry,
      logDir: this.logDir,
      clock: this.clock,
      requireRecord: (id) => this.requireRecord(id),
    };
  }

  // --- changes ------------------------------------------------------------------------------

  async stop(deploymentId: string): Promise<Deployment> {
    const live = this.registry.get(deploymentId);
    if (live !== undefined) {
      if (live.status !== 'deployed') throw cannotStop(deploymentId, live.status);
      await this.stopLive(live, 'stopped on request').catch((error: unknown) => {
        throw new ServiceError(
          'unavailable',
          `the deployment stopped, but that could not be saved: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
      return live.toDeployment();
    }
    const record = await this.requireRecord(deploymentId);
    if (record.deployment.status !== 'deployed') throw cannotStop(deploymentId, record.deployment.status);
    // Deployed on record but not running here (for example its build is gone): just record it.
    applyTransition(record.deployment, 'stopped', this.clock(), 'stopped on request');
    record.version += 1;
    await this.store.putDeployment(record);
    return storedView(record.deployment);
  }

  async remove(deploymentId: string): Promise<Deployment> {
    return removeDeployment(this.parts(), await this.requireRecord(deploymentId));
  }

  async rollback(deploymentId: string): Promise<Deployment> {
    const record = await this.requireRecord(deploymentId);
    const plan = await planRollback({ history: this.history, store: this.store, registry: this.registry }, record);
    if (plan.kind === 'already') return { ...(await this.status(plan.deploymentId))!, unchanged: true };
    const { name, environment, target, server, rolledBackTo } = plan;
    const request: DeployRequest = { mcp_id: target.mcpId, environment, config: target.config };
    return this.deploy(server, request, {
      previousId: target.previousId ?? null,
      rolledBackTo,
      note: `rolling back ${name ?? ''} to the build and config of ${target.deployment.deployment_id} (${target.mcpId})`,
    });
  }

  // --- data plane ---------------------------------------------------------------------------

  handleGateway(req: IncomingMessage, res: ServerResponse, requestId?: string): Promise<boolean> {
    return this.gateway(req, res, requestId);
  }

  servesDomain(host: string): boolean {
    return this.registry.servesDomain(host);
  }

  // --- engine start and stop ----------------------------------------------------------------

  /**
   * First step of an engine start, before any request is answered: a deployment that was still
   * deploying when the engine stopped is failed (its instances are gone), so no answer shows it
   * as deploying on its way to nowhere.
   */
  recover(): Promise<void> {
    this.recovered ??= failInterrupted(restoreContextOf(this.parts()));
    return this.recovered;
  }

  /** Brings back every deployment that was deployed, through the start queue like any start. */
  async restore(): Promise<void> {
    await this.recover();
    await restoreDeployed(restoreContextOf(this.parts()));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    clearInterval(this.idleTimer);
    const lives = this.registry.all();
    for (const live of lives) {
      if (live.status === 'deploying') live.transition('failed', 'the engine stopped before the deployment finished');
    }
    // Instances stop; records keep `deployed`, so the next start restores them.
    await Promise.all(lives.map((live) => live.stopInstances()));
    await Promise.all(lives.map(async (live) => Promise.all([settled(live), live.ctx.logs.settle()])));
    await LogBook.settleAll();
    this.closed = true;
    this.gateway.close();
  }

  // --- helpers ------------------------------------------------------------------------------

  private adopt(
    record: DeploymentRecord,
    server: ServerRecord,
    routeName: string,
    min: number,
    max: number,
    logs: LogBook,
  ): LiveDeployment {
    return adoptDeployment(this.parts(), record, server, routeName, min, max, logs);
  }

  private parts(): ServiceParts {
    const { deps, store, registry, runner, starts, secrets, limits, logger, clock, logDir } = this;
    const common = { deps, store, registry, runner, starts, secrets, limits, logger, clock, logDir };
    return { ...common, closing: () => this.closing, closed: () => this.closed };
  }

  private async requireRecord(deploymentId: string): Promise<DeploymentRecord> {
    const record = await this.history.recordOf(deploymentId);
    if (record === undefined) throw new ServiceError('not_found', `no deployment ${deploymentId}`);
    return record;
  }

  /** Deployments idle past their period give up their instances (idling.ts); the next request wakes them. */
  private async stopIdle(): Promise<void> {
    const now = this.clock();
    for (const live of this.registry.values()) {
      // an idle (or not deployed) one has nothing to give up: looked at no further
      if (live.idling.idle || live.status !== 'deployed') continue;
      const periodMs = idlePeriodMs(live.environment, live.record.config.scaling, this.limits);
      const busy = live.instances.some((instance) => instance.outstanding > 0);
      const { status, lastActivity } = live;
      if (!live.idling.possible || !shouldIdle({ status, idle: live.idling.idle, lastActivity, busy, periodMs }, now))
        continue;
      void live.idling.park(`idle: no requests for ${Math.round(periodMs! / 1000)} s`).catch(() => undefined);
    }
  }
}
