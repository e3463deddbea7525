/**
 * One supervised runtime instance: a child process on its own loopback port, health-checked on
 * an interval, restarted with back-off when it crashes or stops answering, and given up after
 * too many consecutive restarts. An answer to a request the gateway passed on counts as a passed
 * check, and an idle instance is checked less often (see watchHealth). Every start (the first,
 * restarts, restores) waits for a slot of the engine's start queue; its time limit counts from
 * when it has one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { START_PRIORITY, type WorkQueue } from '../admission.js';
import { createProcessRunner } from '../runners/process/process-runner.js';
import {
  RunnerStartError,
  type ExitInfo,
  type InstanceLabels,
  type Runner,
  type RunnerInstance,
} from '../runners/runner.js';
import type { StartRuntimeProcess } from '../services.js';
import type { DeploymentLimits } from './limits.js';
import { restartDelay } from './limits.js';

export type { RuntimeProcessHandle, StartRuntimeProcess } from '../services.js';

export type InstanceState = 'starting' | 'healthy' | 'unhealthy' | 'restarting' | 'draining' | 'stopped' | 'failed';

export interface InstanceHooks {
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, instance: string): void;
  /** a log line of the process (the runtime logs JSON objects: time, level, msg, fields) */
  output(line: Record<string, unknown>, instance: string): void;
  /** the state, pid or restart count changed */
  changed(): void;
  /** restarts are exhausted: the instance is `failed` for good */
  gaveUp(instance: ManagedInstance, reason: string): void;
}

export interface InstanceSpec {
  /** the engine and deployment it belongs to, for its runner's labels */
  owner?: Omit<InstanceLabels, 'instance'>;
  bundleDir: string;
  env: Record<string, string>;
  logLevel: 'debug' | 'info';
  /** the deployment's resources, for runners that enforce them */
  resources?: { memoryMb?: number; cpus?: number };
}

export interface InstanceDeps {
  /** what runs it */
  runner?: Runner;
  /** without a runner: the process runner with this starter */
  startRuntime?: StartRuntimeProcess;
  /** the engine's start queue: at most so many instances start at once */
  starts: WorkQueue;
  limits: DeploymentLimits;
  clock: () => number;
  hooks: InstanceHooks;
}

const OUTPUT_TAIL = 5;
/** an idle, healthy instance is checked at most this many health intervals apart */
export const IDLE_CHECK_FACTOR = 8;

/** A start that did not come up. `transient` when trying again may work (a time-out, a kill). */
export class StartFailure extends Error {
  override readonly name = 'StartFailure';
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

export interface StartOptions {
  /** on failure, restart with back-off (and resolve at once) instead of rejecting */
  retry: boolean;
  /** with retry: a failure that cannot go away by itself (the server refused to start) gives up at once */
  failFast?: boolean;
  /** priority in the start queue (START_PRIORITY) */
  priority?: number;
}

export class ManagedInstance {
  state: InstanceState = 'starting';
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
  private checking = false;
  private startedAt = 0;
  private stopping = false;
  /** while `launch` runs, it handles an early exit itself */
  private launching = false;
  private healthTimer: NodeJS.Timeout | undefined;
  /** the delay before the next check: the interval, longer while the instance is idle */
  private checkDelay = 0;
  /** when the gateway last sent it a request, and when it last answered one */
  private requestedAt = 0;
  private answeredAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly tail: string[] = [];

  constructor(
    readonly id: string,
    private readonly spec: InstanceSpec,
    private readonly deps: InstanceDeps,
  ) {
    if (deps.runner === undefined && deps.startRuntime === undefined) throw new Error('an instance needs a runner');
    this.runner = deps.runner ?? createProcessRunner(deps.startRuntime!);
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
    return (
      this.handle !== undefined && (this.state === 'healthy' || this.state === 'unhealthy' || this.state === 'draining')
    );
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
        if (!this.stopping) {
          const permanent = error instanceof StartFailure && !error.transient;
          this.scheduleRestart(reason, options.failFast === true && permanent);
          this.watchHealth();
        }
        return;
      }
      this.state = 'stopped';
      this.deps.hooks.changed();
      throw error;
    }
  }

  /** Stops the process (SIGTERM, then SIGKILL after the grace period). Idempotent. */
  async stop(graceMs = this.deps.limits.stopGraceMs): Promise<void> {
    this.stopping = true;
    this.waitingStart?.abort(new Error('stopped while waiting to start'));
    clearTimeout(this.healthTimer);
    clearTimeout(this.restartTimer);
    const handle = this.handle;
    this.handle = undefined;
    if (this.state !== 'failed') this.state = 'stopped';
    this.deps.hooks.changed();
    if (handle !== undefined) await handle.stop(graceMs).catch(() => undefined);
  }

  /**
   * Takes the instance out of balancing, lets its requests finish (and, while `busy` says so, its
   * sessions end), at most for the drain time-out, then stops it.
   */
  async drain(busy: () => boolean = () => false): Promise<void> {
    this.state = 'draining';
    this.deps.hooks.changed();
    const deadline = this.deps.clock() + this.deps.limits.drainTimeoutMs;
    while ((this.outstanding > 0 || busy()) && this.deps.clock() < deadline && !this.stopping)
      await sleep(50, undefined, { ref: false });
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
    if (this.state === 'healthy') {
      this.state = 'unhealthy';
      this.deps.hooks.changed();
      void this.checkHealth();
    }
  }

  /** Why the last start failed or the process ended, with its last output lines. */
  private describe(reason: string): string {
    return this.tail.length === 0 ? reason : `${reason}; last output: ${this.tail.join(' | ')}`;
  }

  /** One start: a slot of the start queue, then the process, until it answers its health check. */
  private async launch(priority: number): Promise<void> {
    this.launching = true;
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
      if (this.stopping) throw new Error('stopped while starting', { cause: error });
      throw error;
    } finally {
      this.launching = false;
      this.waitingStart = undefined;
      this.setQueued(undefined);
    }
  }

  private setQueued(ahead: number | undefined): void {
    if (this.queued === ahead) return;
    this.queued = ahead;
    this.deps.hooks.changed();
  }

  private async launchProcess(): Promise<void> {
    const { hooks, limits, clock } = this.deps;
    if (this.stopping) throw new Error('stopped while starting');
    this.tail.length = 0;
    this.failedChecks = 0;
    this.answeredAt = 0;
    // What a runner does once per build (the Docker runner builds its image) is not part of the start time-out.
    await this.runner.prepare?.(this.spec.bundleDir).catch((error: unknown) => {
      const transient = error instanceof RunnerStartError && error.transient;
      throw new StartFailure(
        this.describe(`could not start: ${error instanceof Error ? error.message : String(error)}`),
        transient,
      );
    });
    // The documented start time-out covers the whole start, from now (not from the request,
    // which may have waited in the queue): the process reporting its port, then its health.
    const deadline = clock() + limits.startTimeoutMs;
    const handle = await this.runner
      .start({
        labels: {
          engine: this.spec.owner?.engine ?? '',
          deployment: this.spec.owner?.deployment ?? '',
          instance: this.id,
        },
        bundleDir: this.spec.bundleDir,
        env: this.spec.env,
        logLevel: this.spec.logLevel,
        limits: { startTimeoutMs: limits.startTimeoutMs },
        ...(this.spec.resources === undefined ? {} : { resources: this.spec.resources }),
        onLog: (raw) => {
          const line = parseLogLine(raw);
          const text = typeof line.msg === 'string' ? line.msg : raw;
          this.tail.push(text.length > 300 ? `${text.slice(0, 300)}…` : text);
          if (this.tail.length > OUTPUT_TAIL) this.tail.shift();
          hooks.output(line, this.id);
        },
      })
      .catch((error: unknown) => {
        const transient = error instanceof RunnerStartError && error.transient;
        throw new StartFailure(
          this.describe(`could not start: ${error instanceof Error ? error.message : String(error)}`),
          transient,
        );
      });
    if (this.stopping) {
      await handle.stop(0).catch(() => undefined);
      throw new Error('stopped while starting');
    }
    this.handle = handle;
    this.generation += 1;
    this.startedAt = clock();
    hooks.changed();
    let exit: ExitInfo | undefined;
    void handle.exited.then((result) => {
      exit = result;
      this.onExit(handle, exit);
    });
    while (!this.stopping) {
      if (exit !== undefined) {
        this.handle = undefined;
        throw new StartFailure(
          this.describe(`${describeExit(exit)} before answering its health check`),
          exit.signal !== null,
        );
      }
      if (await handle.health(Math.min(limits.healthTimeoutMs, Math.max(1, deadline - clock())))) break;
      if (clock() >= deadline) {
        this.handle = undefined;
        await handle.stop(0).catch(() => undefined);
        throw new StartFailure(
          this.describe(`not healthy ${Math.round(limits.startTimeoutMs / 1000)} s after start`),
          true,
        );
      }
      await sleep(Math.min(100, limits.healthIntervalMs), undefined, { ref: false });
    }
    if (this.stopping) throw new Error('stopped while starting');
    if (exit !== undefined) {
      this.handle = undefined;
      throw new StartFailure(this.describe(describeExit(exit)), exit.signal !== null);
    }
    this.lastCheck = clock();
    this.state = 'healthy';
    // checks at the usual interval again (a restart after a quiet spell)
    this.checkDelay = 0;
    this.watchHealth();
    hooks.log(
      'info',
      `instance ${this.id} healthy (${handle.pid === undefined ? '' : `pid ${handle.pid}, `}port ${handle.port})`,
      this.id,
    );
    hooks.changed();
  }

  private onExit(handle: RunnerInstance, exit: ExitInfo): void {
    // A process this instance already let go of (stopped, or killed for a restart) is not news.
    if (this.stopping || this.launching || handle !== this.handle) return;
    this.handle = undefined;
    const reason = this.describe(describeExit(exit));
    this.deps.hooks.log('error', `instance ${this.id} ${reason}`, this.id);
    this.scheduleRestart(reason);
  }

  /** Restarts after a back-off, or gives up (now, or after too many restarts in a row). */
  private scheduleRestart(reason: string, giveUpNow = false): void {
    const { hooks, limits } = this.deps;
    this.consecutive += 1;
    if (giveUpNow || this.consecutive > limits.maxRestarts) {
      this.state = 'failed';
      this.failure = reason;
      const why = giveUpNow
        ? 'not restarted: the server refused to start'
        : `given up after ${limits.maxRestarts} restarts in a row`;
      hooks.log('error', `instance ${this.id} ${why}: ${reason}`, this.id);
      hooks.changed();
      hooks.gaveUp(this, reason);
      return;
    }
    const delay = restartDelay(this.consecutive, limits);
    this.state = 'restarting';
    hooks.log(
      'warn',
      `instance ${this.id} restarting in ${delay} ms (restart ${this.consecutive} of at most ${limits.maxRestarts} in a row)`,
      this.id,
    );
    hooks.changed();
    this.restartTimer = setTimeout(() => {
      if (this.stopping) return;
      this.restarts += 1;
      this.launch(START_PRIORITY.restart).catch((error: unknown) => {
        if (this.stopping) return;
        const why = error instanceof Error ? error.message : String(error);
        hooks.log('error', `instance ${this.id} restart failed: ${why}`, this.id);
        this.scheduleRestart(why);
      });
    }, delay);
    this.restartTimer.unref();
  }

  /**
   * The next health check, after `delay` (default: the interval, spread by ±10% so the checks of
   * many instances do not come in step). A check is skipped when the instance answered a request
   * since the last one; the delay doubles, up to IDLE_CHECK_FACTOR intervals, while it is healthy
   * and gets no requests; anything else brings it back to the interval.
   */
  private watchHealth(delay = this.deps.limits.healthIntervalMs * (0.5 + Math.random())): void {
    clearTimeout(this.healthTimer);
    if (this.stopping) return;
    this.healthTimer = setTimeout(() => void this.healthTick(), delay);
    this.healthTimer.unref();
  }

  private async healthTick(): Promise<void> {
    const { limits, clock } = this.deps;
    const interval = limits.healthIntervalMs;
    const since = clock() - Math.max(this.checkDelay, interval);
    // An instance that failed a check and still took requests (no other was serving) counts only
    // the answers it gave after that check.
    const answeredSince = this.state === 'unhealthy' ? Math.max(since, this.lastCheck ?? 0) : since;
    if (
      (this.state === 'healthy' || this.state === 'unhealthy') &&
      this.handle !== undefined &&
      this.answeredAt > answeredSince
    ) {
      this.passed(this.answeredAt);
      this.checkDelay = interval;
    } else {
      await this.checkHealth();
      const idle = this.state === 'healthy' && this.outstanding === 0 && this.requestedAt <= since;
      this.checkDelay = idle
        ? Math.min(Math.max(this.checkDelay, interval) * 2, interval * IDLE_CHECK_FACTOR)
        : interval;
    }
    this.watchHealth(this.checkDelay * (0.9 + Math.random() * 0.2));
  }

  /** A passed check (or an answered request) at `at`. */
  private passed(at: number): void {
    const { hooks, limits } = this.deps;
    this.lastCheck = Math.max(this.lastCheck ?? 0, at);
    this.failedChecks = 0;
    if (this.consecutive > 0 && at - this.startedAt >= limits.stableAfterMs) this.consecutive = 0;
    if (this.state === 'unhealthy') {
      this.state = 'healthy';
      hooks.log('info', `instance ${this.id} answers again`, this.id);
      hooks.changed();
    }
  }

  private async checkHealth(): Promise<void> {
    const handle = this.handle;
    if (this.checking || handle === undefined || (this.state !== 'healthy' && this.state !== 'unhealthy')) return;
    const { hooks, limits, clock } = this.deps;
    this.checking = true;
    const ok = await handle.health(limits.healthTimeoutMs);
    this.checking = false;
    if (handle !== this.handle || this.stopping) return;
    if (ok) {
      this.passed(clock());
      return;
    }
    this.lastCheck = clock();
    this.failedChecks += 1;
    if (this.state === 'healthy') {
      this.state = 'unhealthy';
      hooks.log('warn', `instance ${this.id} failed a health check`, this.id);
      hooks.changed();
    }
    if (this.failedChecks >= limits.unhealthyThreshold) {
      const reason = `did not answer ${this.failedChecks} health checks in a row`;
      hooks.log('error', `instance ${this.id} ${reason}; replacing its process`, this.id);
      this.handle = undefined;
      await handle.stop(0).catch(() => undefined);
      if (!this.stopping) this.scheduleRestart(reason);
    }
  }
}

/** The runtime writes JSON log lines; anything else (stderr text) is kept as a warning. */
export function parseLogLine(raw: string): Record<string, unknown> {
  if (raw.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // not JSON after all
    }
  }
  return { level: 'warn', msg: raw };
}

function describeExit(exit: ExitInfo): string {
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? 'unknown'}`;
}
