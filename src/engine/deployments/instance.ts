/**
 * One supervised runtime instance: a child process on its own loopback port, health-checked on
 * an interval, restarted with back-off when it crashes or stops answering, and given up after
 * too many consecutive restarts. An answer to a request the gateway passed on counts as a passed
 * check, and an idle instance is checked less often (see watchHealth). Every start (the first,
 * restarts, restores) waits for a slot of the engine's start queue; its time limit counts from
 * when it has one.
 */
import { START_PRIORITY } from '../admission.js';
import { createProcessRunner } from '../runners/process/process-runner.js';
import type { ExitInfo, Runner, RunnerInstance } from '../runners/runner.js';
import {
  answerStandsForCheck,
  decideRestart,
  nextCheckDelay,
  shouldReplace,
  type CheckObservation,
} from './decisions.js';
import { isLaunching, isRunning, mayHoldSessions, nextState, type InstanceEvent } from './instance-states.js';
import type { InstanceState } from './instance-states.js';
import { describeExit } from './log-lines.js';
import {
  awaitFirstAnswer,
  OutputTail,
  pause,
  runnerSpec,
  startProcess,
  StartFailure,
  type StartContext,
} from './instance-start.js';
import type { InstanceDeps, InstanceSpec, StartOptions } from './instance-deps.js';

export type { RuntimeProcessHandle, StartRuntimeProcess } from '../services.js';
export type { InstanceState } from './instance-states.js';
export { IDLE_CHECK_FACTOR } from './decisions.js';
export { StartFailure } from './instance-start.js';
export type { InstanceDeps, InstanceHooks, InstanceSpec, StartOptions } from './instance-deps.js';

export class ManagedInstance {
  private current: InstanceState = 'starting';
  /** requests the gateway has sent and not yet finished */
  outstanding = 0;
  /** restarts since the instance was created */
  restarts = 0;
  lastCheck: number | undefined;
  /** while waiting for a start slot: how many starts are ahead */
  queued: number | undefined;
  /** why it was given up, once `failed` */
  failure: string | undefined;
  /** bumped at every start: a session held by an earlier process is gone */
  generation = 0;
  private handle: RunnerInstance | undefined;
  private readonly runner: Runner;
  /** drops a start that still waits for its slot */
  private waitingStart: AbortController | undefined;
  private consecutive = 0;
  private failedChecks = 0;
  /** a health check is under way: the next tick does not start another */
  private checkInFlight = false;
  private startedAt = 0;
  private healthTimer: NodeJS.Timeout | undefined;
  /** the delay before the next check: the interval, longer while the instance is idle */
  private checkDelay = 0;
  /** when the gateway last sent it a request, and when it last answered one */
  private requestedAt = 0;
  private answeredAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  /** the process's last output lines, for the reason of a failure */
  private readonly tail = new OutputTail();

  constructor(
    readonly id: string,
    private readonly spec: InstanceSpec,
    private readonly deps: InstanceDeps,
  ) {
    if (deps.runner === undefined && deps.startRuntime === undefined) throw new Error('an instance needs a runner');
    this.runner = deps.runner ?? createProcessRunner(deps.startRuntime!);
  }

  /** where it is in its life (instance-states.ts) */
  get state(): InstanceState {
    return this.current;
  }

  /** stopped or given up: nothing starts, restarts or checks it any more */
  private get ended(): boolean {
    return !isRunning(this.current);
  }

  /** Moves it as the state table says `event` does; false (and no change) when the table refuses. */
  private moveTo(event: InstanceEvent): boolean {
    const next = nextState(this.current, event);
    if (next === undefined) return false;
    this.current = next;
    return true;
  }

  get pid(): number | undefined {
    return this.handle?.pid;
  }
  get port(): number | undefined {
    return this.handle?.port;
  }
  get host(): string | undefined {
    return this.handle?.host;
  }
  get socketPath(): string | undefined {
    return this.handle?.socketPath;
  }
  /** true while a process runs that may hold sessions (serving, failing checks, or draining) */
  get reachable(): boolean {
    return this.handle !== undefined && mayHoldSessions(this.state);
  }
  /** true when the gateway may send it requests */
  get serving(): boolean {
    return this.state === 'healthy' && this.handle !== undefined;
  }
  /** its process runs but failed its last health check: it takes requests while no instance serves */
  get standby(): boolean {
    return this.state === 'unhealthy' && this.handle !== undefined;
  }

  /**
   * Starts the process and resolves once it answers its health check. With `retry`, a failed
   * start is handled like a crash (restart with back-off) and this resolves at once; without
   * it the error is thrown and the instance is left stopped.
   */
  async start(options: StartOptions): Promise<void> {
    try {
      await this.launch(options.priority ?? START_PRIORITY.deploy);
      this.watchHealth();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      // With retry this never rejects: callers start such instances without awaiting them, and an
      // instance stopped while it was starting (scaled down, deployment stopped) is no failure.
      if (options.retry) {
        if (!this.ended) {
          const permanent = error instanceof StartFailure && !error.transient;
          this.scheduleRestart(reason, options.failFast === true && permanent);
          this.watchHealth();
        }
        return;
      }
      this.moveTo('stop');
      this.deps.hooks.changed();
      throw error;
    }
  }

  /** Stops the process (SIGTERM, then SIGKILL after the grace period). Idempotent. */
  async stop(graceMs = this.deps.limits.stopGraceMs): Promise<void> {
    this.moveTo('stop');
    this.waitingStart?.abort(new Error('stopped while waiting to start'));
    clearTimeout(this.healthTimer);
    clearTimeout(this.restartTimer);
    const handle = this.handle;
    this.handle = undefined;
    this.deps.hooks.changed();
    if (handle !== undefined) await handle.stop(graceMs).catch(() => undefined);
  }

  /**
   * Takes the instance out of balancing, lets its requests finish (and, while `busy` says so, its
   * sessions end), at most for the drain time-out, then stops it.
   */
  async drain(busy: () => boolean = () => false): Promise<void> {
    this.moveTo('drain');
    this.deps.hooks.changed();
    const deadline = this.deps.clock() + this.deps.limits.drainTimeoutMs;
    while ((this.outstanding > 0 || busy()) && this.deps.clock() < deadline && this.state === 'draining')
      await pause(50);
    await this.stop();
  }

  /** Whether its process answers a health check now. */
  async answers(): Promise<boolean> {
    const handle = this.handle;
    return handle !== undefined && (await handle.health(this.deps.limits.healthTimeoutMs));
  }

  /**
   * Called by the gateway for each request it sends here. After a quiet spell (checks spaced out)
   * the instance is checked at once and then at the usual interval again.
   */
  requested(now: number): void {
    this.requestedAt = now;
    if (this.checkDelay > this.deps.limits.healthIntervalMs) {
      this.checkDelay = this.deps.limits.healthIntervalMs;
      this.watchHealth(0);
    }
  }

  /** Called by the gateway when the instance answered a request (a status below 500): it serves. */
  answered(now: number): void {
    this.answeredAt = now;
  }

  /** Called by the gateway when a request to this instance could not connect: check now. */
  suspect(): void {
    if (this.moveTo('failedCheck')) {
      this.deps.hooks.changed();
      void this.checkHealth();
    }
  }

  /** One start: a slot of the start queue, then the process, until it answers its health check. */
  private async launch(priority: number): Promise<void> {
    const waiting = new AbortController();
    this.waitingStart = waiting;
    try {
      await this.deps.starts.run(
        async () => {
          this.setQueued(undefined);
          await this.launchProcess();
        },
        { priority, signal: waiting.signal, onWait: (ahead) => this.setQueued(ahead) },
      );
    } catch (error) {
      if (this.ended) throw new Error('stopped while starting', { cause: error });
      throw error;
    } finally {
      this.waitingStart = undefined;
      this.setQueued(undefined);
    }
  }

  private setQueued(ahead: number | undefined): void {
    if (this.queued === ahead) return;
    this.queued = ahead;
    this.deps.hooks.changed();
  }

  private startContext(): StartContext {
    const { limits, clock, hooks } = this.deps;
    return {
      runner: this.runner,
      spec: runnerSpec(this.id, this.spec, limits),
      limits,
      clock,
      onLog: (raw) => hooks.output(this.tail.add(raw), this.id),
      describe: (reason) => this.tail.describe(reason),
      ended: () => this.ended,
    };
  }

  private async launchProcess(): Promise<void> {
    const { hooks, clock } = this.deps;
    if (this.ended) throw new Error('stopped while starting');
    this.tail.clear();
    this.failedChecks = 0;
    this.answeredAt = 0;
    const ctx = this.startContext();
    const { handle, deadline } = await startProcess(ctx);
    this.handle = handle;
    this.generation += 1;
    this.startedAt = clock();
    hooks.changed();
    let exit: ExitInfo | undefined;
    void handle.exited.then((result) => {
      exit = result;
      this.onExit(handle, exit);
    });
    try {
      await awaitFirstAnswer(ctx, handle, deadline, () => exit);
    } catch (error) {
      if (this.handle === handle) this.handle = undefined;
      throw error;
    }
    this.lastCheck = clock();
    this.moveTo('ready');
    // checks at the usual interval again (a restart after a quiet spell)
    this.checkDelay = 0;
    this.watchHealth();
    const pid = handle.pid === undefined ? '' : `pid ${handle.pid}, `;
    hooks.log('info', `instance ${this.id} healthy (${pid}port ${handle.port})`, this.id);
    hooks.changed();
  }

  private onExit(handle: RunnerInstance, exit: ExitInfo): void {
    // A process this instance already let go of (stopped, or killed for a restart) is not news, and
    // a start under way handles an early exit itself.
    if (this.ended || isLaunching(this.state) || handle !== this.handle) return;
    this.handle = undefined;
    const reason = this.tail.describe(describeExit(exit));
    this.deps.hooks.log('error', `instance ${this.id} ${reason}`, this.id);
    this.scheduleRestart(reason);
  }

  /** Restarts after a back-off, or gives up (now, or after too many restarts in a row). */
  private scheduleRestart(reason: string, giveUpNow = false): void {
    const { hooks, limits } = this.deps;
    this.consecutive += 1;
    const decision = decideRestart(this.consecutive, giveUpNow, limits);
    if (decision.kind === 'giveUp') {
      if (!this.moveTo('gaveUp')) return;
      this.failure = reason;
      hooks.log('error', `instance ${this.id} ${decision.why}: ${reason}`, this.id);
      hooks.changed();
      hooks.gaveUp(this, reason);
      return;
    }
    if (!this.moveTo('crashed')) return;
    const most = `restart ${this.consecutive} of at most ${limits.maxRestarts} in a row`;
    hooks.log('warn', `instance ${this.id} restarting in ${decision.delayMs} ms (${most})`, this.id);
    hooks.changed();
    this.restartTimer = setTimeout(() => this.relaunch(), decision.delayMs);
    this.restartTimer.unref();
  }

  private relaunch(): void {
    if (this.ended) return;
    this.restarts += 1;
    this.launch(START_PRIORITY.restart).catch((error: unknown) => {
      if (this.ended) return;
      const why = error instanceof Error ? error.message : String(error);
      this.deps.hooks.log('error', `instance ${this.id} restart failed: ${why}`, this.id);
      this.scheduleRestart(why);
    });
  }

  /**
   * The next health check, after `delay` (default: the interval, spread by ±10% so the checks of
   * many instances do not come in step). A check is skipped when the instance answered a request
   * since the last one; the delay doubles, up to IDLE_CHECK_FACTOR intervals, while it is healthy
   * and gets no requests; anything else brings it back to the interval (decisions.ts).
   */
  private watchHealth(delay = this.deps.limits.healthIntervalMs * (0.5 + Math.random())): void {
    clearTimeout(this.healthTimer);
    if (this.ended) return;
    this.healthTimer = setTimeout(() => void this.healthTick(), delay);
    this.healthTimer.unref();
  }

  private observeCheck(): CheckObservation {
    return {
      state: this.state,
      running: this.handle !== undefined,
      checkDelay: this.checkDelay,
      intervalMs: this.deps.limits.healthIntervalMs,
      now: this.deps.clock(),
      lastCheck: this.lastCheck,
      answeredAt: this.answeredAt,
      requestedAt: this.requestedAt,
      outstanding: this.outstanding,
    };
  }

  private async healthTick(): Promise<void> {
    const before = this.observeCheck();
    if (answerStandsForCheck(before)) {
      this.passed(this.answeredAt);
      this.checkDelay = nextCheckDelay(before, false);
    } else {
      await this.checkHealth();
      // what the check found (the state) with the times of the tick
      this.checkDelay = nextCheckDelay(
        { ...before, state: this.state, outstanding: this.outstanding, requestedAt: this.requestedAt },
        true,
      );
    }
    this.watchHealth(this.checkDelay * (0.9 + Math.random() * 0.2));
  }

  /** A passed check (or an answered request) at `at`. */
  private passed(at: number): void {
    const { hooks, limits } = this.deps;
    this.lastCheck = Math.max(this.lastCheck ?? 0, at);
    this.failedChecks = 0;
    if (this.consecutive > 0 && at - this.startedAt >= limits.stableAfterMs) this.consecutive = 0;
    if (this.moveTo('passed')) {
      hooks.log('info', `instance ${this.id} answers again`, this.id);
      hooks.changed();
    }
  }

  private async checkHealth(): Promise<void> {
    const handle = this.handle;
    if (this.checkInFlight || handle === undefined || (this.state !== 'healthy' && this.state !== 'unhealthy')) return;
    const { hooks, limits, clock } = this.deps;
    this.checkInFlight = true;
    const ok = await handle.health(limits.healthTimeoutMs);
    this.checkInFlight = false;
    if (handle !== this.handle || this.ended) return;
    if (ok) return this.passed(clock());
    this.lastCheck = clock();
    this.failedChecks += 1;
    if (this.moveTo('failedCheck')) {
      hooks.log('warn', `instance ${this.id} failed a health check`, this.id);
      hooks.changed();
    }
    if (shouldReplace(this.failedChecks, limits)) {
      const reason = `did not answer ${this.failedChecks} health checks in a row`;
      hooks.log('error', `instance ${this.id} ${reason}; replacing its process`, this.id);
      this.handle = undefined;
      await handle.stop(0).catch(() => undefined);
      if (!this.ended) this.scheduleRestart(reason);
    }
  }
}
