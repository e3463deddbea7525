/**
 * A deployment the engine is running: its instances, its state transitions, its log, its request
 * samples and its autoscaler. The service creates one per deploy (or restore) and the gateway
 * asks it for an instance per request.
 */
import type { Deployment, DeploymentState, LogLine } from '../../api/contract.js';
import { redact, type Redactor } from '../../runtime/server/logger.js';
import { deploymentRedactor } from '../secret-registry.js';
import { isoTime } from '../../shared/iso-time.js';
import type { LiveContext } from './live-context.js';
import { ServiceError } from '../service-error.js';
import type { DeploymentRecord } from '../records.js';
import type { ManagedInstance, InstanceHooks } from './instance.js';
import { failsWhenGivenUp } from './decisions.js';
import { isHealthCheckLine, toLogLine } from './log-lines.js';
import { SampleRing } from './samples.js';
import { applyTransition, canTransition, pendingStage } from './states.js';
import { Scaler } from './scaler.js';
import { DeploymentUpstream, type Backend } from '../gateway/upstream.js';
import { OrchestratedRun, ownerOf } from './orchestrated.js';
import type { LaunchVerb, Placement } from './placement.js';
import { SupervisedPlacement } from './supervised.js';
import { Idling } from './idling.js';
import { instanceEnvOf } from './instance-env.js';
import type { DeploymentSnapshot } from '../observability/events.js';

const RECENT_CHANGE_MS = 250;

export class LiveDeployment {
  readonly record: DeploymentRecord;
  readonly samples: SampleRing;
  /** the engine's values and its own env_vars values: hidden from its log lines, the engine's log and its reasons */
  private readonly secrets: Redactor & { release(): void };
  /** what the gateway sees of it */
  readonly upstream: DeploymentUpstream;
  /** where its instances run: supervised by the engine, or an orchestrator's workload */
  readonly placement: Placement;
  private readonly supervised: SupervisedPlacement | undefined;
  /** when the last gateway request arrived (or the deployment became deployed) */
  lastActivity: number;
  /** when it started serving, for throughput */
  servingSince: number | undefined;
  private readonly waiters = new Set<() => void>();
  /** woken by every change, written or not: the engine's own waits (a launch) */
  private readonly watchers = new Set<() => void>();
  private readonly scaler: Scaler;
  readonly idling: Idling; // scale to zero
  private persisting: Promise<void> = Promise.resolve();
  /**
   * The deployment as last written to disk: what the API reports. A state (deployed, stopped,
   * failed) becomes visible only once its record is durable, so no answer can report a state
   * that a crash would take back.
   */
  private published: Deployment;
  /** why the last write failed, until one succeeds */
  private writeFailure: Error | undefined;
  private lastChangeAt = 0;
  private settling = false;

  constructor(
    record: DeploymentRecord,
    readonly ctx: LiveContext,
  ) {
    this.record = record;
    this.secrets = deploymentRedactor(
      ctx.secrets,
      record.deployment.deployment_id,
      Object.values(record.config.env_vars ?? {}),
    );
    ctx.logs.redactWith(this.secrets);
    this.published = structuredClone(record.deployment);
    this.samples = new SampleRing(ctx.limits.samplesKept);
    this.lastActivity = ctx.clock();
    this.scaler = new Scaler(this, ctx);
    this.upstream = new DeploymentUpstream(this);
    if (ctx.orchestrator?.handles(this.environment) === true) {
      this.placement = new OrchestratedRun(ownerOf(this), ctx.orchestrator);
    } else {
      this.supervised = new SupervisedPlacement(this);
      this.placement = this.supervised;
    }
    this.idling = new Idling(this);
  }

  /** the instances the engine supervises (none when an orchestrator runs it) */
  get instances(): readonly ManagedInstance[] {
    return this.placement.instances;
  }

  /** Its values leave the engine's set (once no other deployment in memory holds them). */
  releaseSecrets(): void {
    this.secrets.release();
  }

  get id(): string {
    return this.record.deployment.deployment_id;
  }
  get status(): DeploymentState {
    return this.record.deployment.status;
  }
  get environment(): NonNullable<Deployment['environment']> {
    return this.record.deployment.environment ?? 'development';
  }
  get serverName(): string {
    return this.ctx.server.server.name;
  }
  get domain(): string | undefined {
    return this.record.config.domain;
  }
  get createdAt(): string {
    return this.record.deployment.created_at ?? '';
  }
  get routeName(): string {
    return this.ctx.routeName;
  }
  get desired(): number {
    return this.record.deployment.desired_instances ?? this.ctx.min;
  }
  /** the instances a request starts when it wakes the deployment from idle */
  get wakeCount(): number {
    return Math.max(1, this.ctx.min);
  }
  noteActivity(): void {
    this.lastActivity = this.ctx.clock();
  }

  // --- events and state ---------------------------------------------------------------------

  log(level: 'debug' | 'info' | 'warn' | 'error', text: string, extra: Partial<LogLine> = {}): void {
    // Every line at every level: a request's arguments or a process's stderr may quote a secret.
    const message = this.secrets.redactText(text);
    this.ctx.logs.append({ time: isoTime(this.ctx.clock()), level, message, ...extra });
    if (extra.instance === undefined) this.ctx.logger[level](message, { deployment_id: this.id });
  }

  /**
   * Something changed. Without `persist` it is live detail (instances, stage) and long-polls wake
   * at once; with `persist` the record is written and long-polls wake once it is on disk.
   */
  changed(persist = false): void {
    this.record.version += 1;
    this.lastChangeAt = this.ctx.clock();
    this.record.deployment.updated_at = new Date(this.lastChangeAt).toISOString();
    for (const watch of [...this.watchers]) watch();
    if (persist && this.ctx.writable()) this.persist();
    else this.wake();
  }

  private wake(): void {
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  private persist(): void {
    this.record.deployment.instances = this.describeInstances();
    const snapshot = structuredClone(this.record);
    // Writes go one after the other so the newest state is the one that stays; each is published
    // (shown by the API, long-polls woken) only after it is durable.
    this.persisting = this.persisting
      .then(() => this.ctx.store.putDeployment(snapshot))
      .then(
        () => {
          this.published = snapshot.deployment;
          this.writeFailure = undefined;
          this.lastChangeAt = this.ctx.clock();
          this.wake();
        },
        (error: unknown) => {
          this.writeFailure = error instanceof Error ? error : new Error(String(error));
          this.ctx.logger.error('could not save a deployment', { deployment_id: this.id, error: String(error) });
        },
      );
  }

  /** Waits for the writes so far; rejects when the last one failed (what it said is not on disk). */
  async flush(): Promise<void> {
    await this.persisting;
    if (this.writeFailure !== undefined) throw this.writeFailure;
  }

  /** What a deployment in progress is doing: live detail, written with the next state change. */
  setStage(stage: string): void {
    if (this.record.deployment.stage === stage) return;
    this.record.deployment.stage = stage;
    this.changed();
  }

  /** Moves to `to` if the state machine allows it; a wrong transition is a conflict. */
  transition(to: DeploymentState, reason?: string): void {
    const d = this.record.deployment;
    if (!canTransition(d.status, to)) {
      throw new ServiceError('conflict', `deployment ${this.id} is ${d.status}; it cannot become ${to}`);
    }
    const now = this.ctx.clock();
    applyTransition(d, to, now, reason === undefined ? undefined : this.secrets.redactText(reason));
    if (to === 'deployed') {
      this.servingSince ??= now;
      this.lastActivity = now;
    }
    this.log(
      to === 'failed' ? 'error' : 'info',
      `deployment ${to}${d.reason === undefined || reason === undefined ? '' : `: ${d.reason}`}`,
    );
    this.changed(true);
  }

  /**
   * Resolves at the next change, or after `timeoutMs`, or when `signal` aborts. A change in the
   * last RECENT_CHANGE_MS counts too: a caller that looks at the state, pauses, and asks again
   * must not sleep through a change that came in between.
   */
  waitForChange(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.ctx.clock() - this.lastChangeAt <= RECENT_CHANGE_MS) return Promise.resolve();
    return this.nextChange(timeoutMs, signal);
  }

  /**
   * The view once `done` holds for it, or as it is when `timeoutMs` runs out or `signal` aborts.
   * Each view is taken in the same turn as the wait for the next change is set up, so no change
   * falls between them; a wake-up lets the rest of its turn run first, so that changes made
   * together (the last instance healthy, then deployed) are seen as one.
   */
  async waitUntil(done: (view: Deployment) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<Deployment> {
    const deadline = this.ctx.clock() + timeoutMs;
    for (;;) {
      const view = this.toDeployment();
      const remaining = deadline - this.ctx.clock();
      if (done(view) || remaining <= 0 || signal?.aborted === true) return view;
      await this.nextChange(remaining, signal);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Resolves at the next change (none before the call counts), after `timeoutMs`, or when `signal` aborts. */
  private nextChange(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  // --- instances ----------------------------------------------------------------------------

  hooks(): InstanceHooks {
    return {
      log: (level, message, instance) => this.log(level, message, { instance }),
      output: (line, instance) => {
        if (isHealthCheckLine(line)) return;
        // an instance's span (src/runtime/server/trace-spans.ts): exported when tracing is on, never logged (an
        // instance started while it was on keeps writing them after an engine restart without it)
        if (line.event === 'span') return this.ctx.tracing?.instanceSpan(line, this, instance);
        const shown = this.secrets.size === 0 ? line : (redact(line, this.secrets) as Record<string, unknown>);
        this.ctx.logs.append(toLogLine(shown, instance, this.ctx.clock()));
      },
      changed: () => {
        this.supervised?.describeLaunch();
        this.changed();
      },
      gaveUp: () => this.onInstanceGaveUp(),
    };
  }

  /** the environment of each instance (instance-env.ts) */
  instanceEnv(): Record<string, string> {
    return instanceEnvOf(this.id, this.record, this.ctx);
  }

  /**
   * Brings up `count` instances through its placement. A deploy (`starting`) resolves when every
   * one serves and fails at the first instance given up (at once when the server refuses to
   * start); a restore keeps every instance that came up and fails only when none did. A deploy
   * that fails stops what it started.
   */
  async launch(count: number, verb: LaunchVerb): Promise<void> {
    await this.placement.launch(count, verb).catch(async (error: unknown) => {
      if (verb === 'starting') await this.stopInstances();
      throw error;
    });
  }

  /** Resolves with the first answer of `check` other than undefined, looking again at every change. */
  async until<T>(check: () => T | undefined): Promise<T> {
    for (;;) {
      const answer = check();
      if (answer !== undefined) return answer;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.watchers.delete(wake);
          resolve();
        };
        this.watchers.add(wake);
      });
    }
  }

  /** How many sessions `instance` holds: a drain waits for them. */
  sessionsHeldBy(instance: ManagedInstance): number {
    return this.upstream.sessions.heldBy(instance);
  }

  healthy(): number {
    return this.placement.healthy();
  }

  /** What the gateway may route to. */
  backends(): Backend[] {
    return this.placement.backends();
  }

  /** Lets every instance finish its requests and sessions (bounded), then stops it. */
  drainAll(): Promise<void> {
    return this.placement.drainAll();
  }

  async stopInstances(): Promise<void> {
    this.scaler.stop();
    await this.placement.stop();
    this.changed();
  }

  private onInstanceGaveUp(): void {
    if (this.status !== 'deployed' || this.settling) return;
    if (!failsWhenGivenUp(this.instances)) {
      this.log('warn', `running with ${this.healthy()} of ${this.desired} instances`);
      return;
    }
    this.settling = true;
    this.transition('failed', 'every instance kept failing and its restarts are exhausted; see the logs');
    void this.stopInstances();
  }

  // --- autoscaling --------------------------------------------------------------------------

  /** Requests in flight went up or down by `delta` (the gateway's tries): the autoscaler's load. */
  trackLoad(delta: number): void {
    this.scaler.track(delta);
  }

  startAutoscaler(): void {
    this.scaler.start();
  }
  stopAutoscaler(): void {
    this.scaler.stop();
  }

  /** The autoscaler's decision: starts instances or drains the ones that matter least. */
  scaleTo(desired: number, load: number): void {
    const from = this.desired;
    this.record.deployment.desired_instances = desired;
    const why = `mean ${load.toFixed(1)} requests in flight, target ${this.ctx.limits.targetOutstandingPerInstance} per instance`;
    this.log('info', `scaling from ${from} to ${desired} instances (${why})`);
    this.placement.scale(desired);
    this.changed(true);
  }

  // --- views --------------------------------------------------------------------------------

  /** What the engine's observers see of it now. */
  snapshot(): DeploymentSnapshot {
    return {
      deploymentId: this.id,
      server: this.serverName,
      environment: this.environment,
      status: this.status,
      // an idle deployment wants no instance: it is healthy without one
      desired: this.idling.idle ? 0 : this.desired,
      instances: this.describeInstances().map(({ id, state, restarts }) => ({ id, state, restarts: restarts ?? 0 })),
    };
  }

  describeInstances(): NonNullable<Deployment['instances']> {
    return this.placement.describe();
  }

  /**
   * The API's view: the states as they are on disk (status, reason, transitions, times), with the
   * live detail (stage, idle, instances, desired count) as it is now.
   */
  toDeployment(): Deployment {
    const live = this.record.deployment;
    // While a new state is on its way to the disk, the stage it brought (`running`) waits with it.
    const stage = live.status === this.published.status ? live.stage : pendingStage(live.status);
    const { idle: _written, ...published } = structuredClone(this.published);
    return {
      ...published,
      ...(stage === undefined ? {} : { stage }),
      ...(live.idle === true ? { idle: true } : {}),
      ...(live.desired_instances === undefined ? {} : { desired_instances: live.desired_instances }),
      instances: this.describeInstances(),
    };
  }
}
