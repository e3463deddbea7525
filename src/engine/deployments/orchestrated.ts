/**
 * A deployment run by an orchestrator (runners/orchestrator.ts): the LiveDeployment's side of the
 * seam. It applies the deployment's spec (or, after an engine restart, takes over the workload that
 * runs it), waits for the rollout and says how it ended, turns the workload's endpoints into
 * backends for the gateway (each checked with /health by the engine before it gets requests, and
 * dropped as soon as the orchestrator shuts it down), follows the replicas' logs into the
 * deployment's log, scales, and removes the workload when the deployment stops.
 */
import {
  rolloutOutcome,
  type Endpoint,
  type Orchestrator,
  type Workload,
  type WorkloadHooks,
  type WorkloadSpec,
} from '../runners/orchestrator.js';
import type { Deployment } from '../../api/contract.js';
import type { Backend } from '../gateway/upstream.js';
import { parseLogLine } from './log-lines.js';
import { resourcesOf } from './limits.js';
import { hasTaskTools } from './task-folder.js';
import type { LiveDeployment } from './live-deployment.js';
import type { ManagedInstance } from './instance.js';
import type { LaunchVerb, Placement } from './placement.js';

/** What the run needs of its deployment. */
export interface OrchestratedOwner {
  readonly id: string;
  readonly serverName: string;
  readonly environment: string;
  readonly desired: number;
  spec(): Omit<WorkloadSpec, 'labels' | 'replicas'>;
  engine: string;
  healthTimeoutMs: number;
  stopGraceMs: number;
  startTimeoutMs: number;
  /** a replica's log line, raw */
  output(line: string, endpoint: string): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void;
  setStage(stage: string): void;
  /** something changed that the API shows (endpoints, their states) */
  changed(): void;
}

/** A LiveDeployment as the owner of its orchestrated run. */
export function ownerOf(live: LiveDeployment): OrchestratedOwner {
  const { ctx } = live;
  return {
    get id() {
      return live.id;
    },
    get serverName() {
      return live.serverName;
    },
    get environment() {
      return live.environment;
    },
    get desired() {
      return live.desired;
    },
    spec: () => ({
      bundleDir: ctx.server.bundleDir,
      env: live.instanceEnv(),
      logLevel: live.environment === 'development' ? 'debug' : 'info',
      ...resourcesOf(live.record.config.resources),
      ...(live.domain === undefined ? {} : { domain: live.domain }),
      ...(hasTaskTools(ctx.server.definition) ? { tasks: { maxReplicas: ctx.max } } : {}),
    }),
    engine: ctx.engine,
    healthTimeoutMs: ctx.limits.healthTimeoutMs,
    stopGraceMs: ctx.limits.stopGraceMs,
    startTimeoutMs: ctx.limits.startTimeoutMs,
    output: (line, endpoint) => live.hooks().output(parseLogLine(line), endpoint),
    log: (level, message) => live.log(level, message),
    setStage: (stage) => live.setStage(stage),
    changed: () => live.changed(),
  };
}

/** One replica as the gateway sees it. */
class ReplicaBackend implements Backend {
  outstanding = 0;
  readonly generation = 0;
  /** the engine's own /health check passed since the replica appeared (or since it was suspected) */
  checked = false;
  lastCheck: number | undefined;
  private probing = false;

  constructor(
    public endpoint: Endpoint,
    private readonly run: OrchestratedRun,
  ) {}

  get id(): string {
    return this.endpoint.id;
  }
  get host(): string {
    return this.endpoint.host;
  }
  get port(): number {
    return this.endpoint.port;
  }
  get reachable(): boolean {
    return this.endpoint.running;
  }
  get serving(): boolean {
    return this.endpoint.running && this.checked;
  }
  /** the port is a proxy (Docker's) that accepts a connection even when the replica behind it is gone */
  readonly proxied = true;

  answers(): Promise<boolean> {
    return this.run.health(this.endpoint);
  }

  /** the orchestrator checks its replicas' health itself: nothing to change here */
  requested(): void {}

  /** an answer shows the replica serves */
  answered(now: number): void {
    this.lastCheck = now;
  }

  suspect(): void {
    this.checked = false;
    this.probe();
  }

  /** Checks /health until it answers (every 250 ms), while the replica runs. */
  probe(): void {
    if (this.probing || this.checked) return;
    this.probing = true;
    void (async () => {
      try {
        while (!this.checked && this.endpoint.running && !this.run.released) {
          if (await this.run.health(this.endpoint)) {
            this.checked = true;
            this.lastCheck = Date.now();
            this.run.changed();
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 250).unref());
        }
      } finally {
        this.probing = false;
      }
    })();
  }
}

export class OrchestratedRun implements Placement {
  /** the orchestrator supervises the replicas: the engine has no instances of its own here */
  readonly instances: readonly ManagedInstance[] = [];
  private workload: Workload | undefined;
  private readonly replicas = new Map<string, ReplicaBackend>();
  private readonly waiters = new Set<() => void>();
  released = false;

  constructor(
    private readonly owner: OrchestratedOwner,
    private readonly orchestrator: Orchestrator,
  ) {}

  get kind(): string {
    return this.orchestrator.kind;
  }

  /**
   * Applies the deployment's spec (a deploy: a create or a rollout) or takes over the workload that
   * runs it (a restore: no rollout unless the workload runs another spec), and resolves once the
   * rollout completed and a replica answers (the count is the deployment's desired one); rejects with the reason when it did not (rolled back,
   * failed, paused).
   */
  async launch(_count: number, verb: LaunchVerb): Promise<void> {
    const owner = this.owner;
    const spec = { ...owner.spec(), replicas: owner.desired };
    owner.setStage('preparing the image');
    await this.orchestrator.prepare?.(spec.bundleDir);
    const labels = {
      engine: owner.engine,
      server: owner.serverName,
      environment: owner.environment,
      deployment: owner.id,
    };
    const hooks: WorkloadHooks = {
      onLog: (line, endpoint) => owner.output(line, endpoint),
      onChange: () => this.sync(),
      onNotice: (message) => owner.log('warn', message),
    };
    owner.setStage(`${verb === 'starting' ? 'rolling out' : 'restoring'} on ${this.orchestrator.kind}`);
    const adopted = verb === 'restoring' ? await this.orchestrator.adopt(labels, hooks) : undefined;
    if (adopted !== undefined) owner.log('info', `took over the ${this.orchestrator.kind} workload that runs it`);
    this.workload = adopted ?? (await this.orchestrator.apply({ ...spec, labels }, hooks));
    this.sync();
    for (;;) {
      if (this.released) throw new Error('stopped while starting');
      const outcome = rolloutOutcome(this.workload.rollout());
      if (outcome.done && !outcome.deployed) throw new Error(outcome.reason);
      if (outcome.done && this.healthy() > 0) return;
      await new Promise<void>((resolve) => this.waiters.add(resolve));
    }
  }

  /** The workload's endpoints changed: new replicas are checked, gone ones dropped. */
  private sync(): void {
    const workload = this.workload;
    if (workload === undefined) return;
    const seen = new Set<string>();
    for (const endpoint of workload.endpoints()) {
      seen.add(endpoint.id);
      let replica = this.replicas.get(endpoint.id);
      if (replica === undefined) {
        replica = new ReplicaBackend(endpoint, this);
        this.replicas.set(endpoint.id, replica);
      } else replica.endpoint = endpoint;
      if (endpoint.running) replica.probe();
    }
    for (const id of [...this.replicas.keys()]) if (!seen.has(id)) this.replicas.delete(id);
    const { phase } = workload.rollout();
    if (phase === 'progressing' || phase === 'rolling_back')
      this.owner.setStage(`${phase.replace('_', ' ')}: ${this.healthy()}/${this.owner.desired} replicas answer`);
    this.changed();
  }

  changed(): void {
    this.owner.changed();
    for (const wake of [...this.waiters]) wake();
    this.waiters.clear();
  }

  health(endpoint: Endpoint): Promise<boolean> {
    return this.workload === undefined
      ? Promise.resolve(false)
      : this.workload.health(endpoint, this.owner.healthTimeoutMs);
  }

  /** The replicas the gateway may use: running, and answering the engine's own check. */
  backends(): Backend[] {
    return [...this.replicas.values()];
  }

  healthy(): number {
    let count = 0;
    for (const replica of this.replicas.values()) if (replica.serving) count += 1;
    return count;
  }

  scale(replicas: number): void {
    this.workload
      ?.scale(replicas)
      .catch((error: unknown) => this.owner.log('warn', `could not scale: ${String(error)}`));
  }

  /** The orchestrator drains its replicas itself when the workload is removed. */
  async drainAll(): Promise<void> {}

  /** Removes the workload if this deployment still owns it; otherwise only stops watching it. */
  async stop(): Promise<void> {
    this.released = true;
    const workload = this.workload;
    this.workload = undefined;
    this.changed();
    if (workload !== undefined) await workload.remove(this.owner.stopGraceMs);
    this.replicas.clear();
    this.changed();
  }

  /** The replicas as the API shows a deployment's instances. */
  describe(): NonNullable<Deployment['instances']> {
    return [...this.replicas.values()].map((replica) => ({
      id: replica.id,
      state: replica.serving ? 'healthy' : replica.endpoint.running ? 'starting' : replica.endpoint.state,
      port: replica.port,
      restarts: 0,
      ...(replica.lastCheck === undefined ? {} : { last_check: new Date(replica.lastCheck).toISOString() }),
    }));
  }
}
