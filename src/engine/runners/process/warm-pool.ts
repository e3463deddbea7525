/**
 * The warm pool: a few runtime processes that have loaded Node, the MCP SDK and the runtime and
 * wait for a bundle (`serve-bundle --warm`), so that a start (a build's check, a test's instance,
 * a deployment's instance) costs reading the bundle and listening, not loading Node and the SDK.
 *
 * - Isolation is a cold start's: a warm process serves one bundle and ends with it; the
 *   environment it serves with replaces its own whole (the one a cold start would have had).
 * - A start whose environment sets what Node (or the loader) reads only when a process starts
 *   (NODE_OPTIONS, UV_THREADPOOL_SIZE, LD_PRELOAD, …) is a cold start: a warm process could not honour it.
 * - Refills run in the background, only once no start is under way (the taking request has had
 *   its answer) and no start or build waits; one process at a time, or as many as there are
 *   cores when none is ready. A loading process holds no slot of the start queue: a start that
 *   comes meanwhile is not delayed by it (it takes it, if none is ready, ahead of a cold start).
 * - Each warm process carries labels (MCPCTL_INSTANCE) naming the engine, so an engine that was
 *   killed finds and stops them when it starts again; waiting ones also end when their standard
 *   input (the pipe from the engine) ends.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WarmRuntimeOptions, WarmRuntimeProcess } from '../../../runtime/host/process.js';
import type { Logger } from '../../engine-log.js';
import type { RuntimeProcessHandle, RuntimeProcessOptions, StartRuntimeProcess } from '../../services.js';
import { LABELS_ENV } from './process-runner.js';
import type { InstanceLabels } from '../runner.js';

export type SpawnWarmRuntime = (options: WarmRuntimeOptions) => WarmRuntimeProcess;

/** The deployment label of a warm process not yet given a bundle. */
export const WARM_DEPLOYMENT_LABEL = 'warm-pool';
/** After a start, the time its request has to get its answer before a refill may begin. */
const ANSWER_MARGIN_MS = 150;
/** How often a refill looks whether the engine is quiet. */
const QUIET_POLL_MS = 50;
/** Refills stop after this many failures in a row, until the next start. */
const MAX_FAILURES = 3;

/**
 * Variables Node, libuv, OpenSSL or the dynamic loader read when a process starts: a process
 * spawned before they were known cannot honour them, so such a start is cold.
 */
const START_ONLY = /^(NODE_|UV_|OPENSSL_|SSL_CERT_|LD_|DYLD_|MALLOC_)/;

export interface WarmPoolOptions {
  /** how many processes wait; 0 turns the pool off */
  size: number;
  /** the engine's home: the label that lets a restarted engine find its processes */
  engine: string;
  /** the runtime's spawner of warm processes, loaded on first use; undefined when the runtime has none */
  load: () => Promise<SpawnWarmRuntime | undefined>;
  /** true while other work that starts processes runs or waits: refills wait for it */
  busy?: () => boolean;
  /** how many processes may load at once when none is ready; default the number of cores */
  parallel?: number;
  logger: Logger;
  /** control groups enforce `resources` on a process already running (else a memory limit is a cold start's) */
  limitsEnforced?: boolean;
  /** how long a warm process may take to load; default the runtime's start time-out */
  readyTimeoutMs?: number;
}

export interface WarmPoolStats {
  /** how many processes the pool keeps */
  size: number;
  /** loaded and waiting for a bundle */
  ready: number;
  /** spawned, still loading */
  warming: number;
}

interface Entry {
  process: WarmRuntimeProcess;
  ready: boolean;
}

export class WarmPool {
  private readonly entries: Entry[] = [];
  private serving = 0;
  private filling = false;
  private failures = 0;
  private closed = false;
  /** the runtime cannot spawn warm processes: every start is cold */
  private unavailable = false;
  private serial = 0;
  private spawner: Promise<SpawnWarmRuntime | undefined> | undefined;
  /** how many may load at once when none is ready */
  private readonly parallel: number;

  constructor(private readonly options: WarmPoolOptions) {
    this.parallel = Math.max(1, Math.floor(options.parallel ?? availableParallelism()));
  }

  get size(): number {
    return this.options.size;
  }

  stats(): WarmPoolStats {
    const ready = this.entries.filter((entry) => entry.ready).length;
    return { size: this.options.size, ready, warming: this.entries.length - ready };
  }

  /** The process ids of the processes that wait (ready or still loading). */
  pids(): number[] {
    return this.entries.map((entry) => entry.process.pid);
  }

  /** A starter that takes a warm process when it can, and starts `cold` otherwise. */
  wrap(cold: StartRuntimeProcess): StartRuntimeProcess {
    return (options) => this.start(options, cold);
  }

  /** Brings the pool up to its size, in the background. */
  fill(): void {
    if (this.closed || this.unavailable || this.options.size <= 0 || this.filling || this.failures >= MAX_FAILURES)
      return;
    this.filling = true;
    void this.refill().finally(() => {
      this.filling = false;
      // a process that ended while the last one was spawned
      if (this.entries.length < this.options.size) this.fill();
    });
  }

  /** Stops every process that waits; the pool spawns no more. */
  async close(): Promise<void> {
    this.closed = true;
    const waiting = this.entries.splice(0);
    await Promise.all(waiting.map((entry) => entry.process.stop(1_000).catch(() => undefined)));
  }

  private async start(options: RuntimeProcessOptions, cold: StartRuntimeProcess): Promise<RuntimeProcessHandle> {
    if (this.options.size <= 0 || this.unavailable || !poolable(options, this.options.limitsEnforced))
      return cold(options);
    this.serving += 1;
    this.failures = 0;
    try {
      const entry = this.take();
      if (entry === undefined) return await cold(options);
      try {
        await entry.process.ready;
      } catch {
        // it ended while it loaded: this start is cold
        return await cold(options);
      }
      return await entry.process.serve(options);
    } finally {
      setTimeout(() => {
        this.serving -= 1;
        this.fill();
      }, ANSWER_MARGIN_MS).unref();
    }
  }

  /** A ready process, else one still loading (it is ahead of a cold start), else none. */
  private take(): Entry | undefined {
    const at = this.entries.findIndex((entry) => entry.ready && entry.process.pid > 0);
    const index = at !== -1 ? at : this.entries.findIndex((entry) => !entry.ready);
    if (index === -1) return undefined;
    return this.entries.splice(index, 1)[0];
  }

  private async refill(): Promise<void> {
    while (
      !this.closed &&
      !this.unavailable &&
      this.entries.length < this.options.size &&
      this.failures < MAX_FAILURES
    ) {
      await this.quiet();
      if (this.closed || this.entries.length >= this.options.size) return;
      // With none ready, starts are about to be cold: load as many at once as there are cores.
      // Otherwise one at a time, so that a refill leaves the machine to the work it serves.
      const ready = this.entries.filter((entry) => entry.ready).length;
      const batch = ready === 0 ? Math.min(this.options.size - this.entries.length, this.parallel) : 1;
      const results = await Promise.all(Array.from({ length: batch }, () => this.spawnOne().catch(() => false)));
      const failed = results.filter((ok) => !ok).length;
      if (failed === 0) {
        this.failures = 0;
        continue;
      }
      if (this.closed || this.unavailable) return;
      this.failures += 1;
      if (this.failures >= MAX_FAILURES)
        this.options.logger.warn('warm runtime processes keep failing; starts are cold until the next one', {});
      else await sleep(500 * 2 ** this.failures, undefined, { ref: false });
    }
  }

  /** Until no start is under way and no other work that starts processes runs or waits. */
  private async quiet(): Promise<void> {
    while (!this.closed && (this.serving > 0 || this.options.busy?.() === true))
      await sleep(QUIET_POLL_MS, undefined, { ref: false });
  }

  /** Spawns one process and waits until it is loaded: true when it is. */
  private async spawnOne(): Promise<boolean> {
    if (this.closed) return false;
    this.spawner ??= this.options.load();
    const spawn = await this.spawner.catch(() => undefined);
    if (spawn === undefined) this.unavailable = true;
    if (spawn === undefined || this.closed) return false;
    this.serial += 1;
    const labels: InstanceLabels = {
      engine: this.options.engine,
      deployment: WARM_DEPLOYMENT_LABEL,
      instance: `warm-${this.serial}-${randomBytes(3).toString('hex')}`,
    };
    let process: WarmRuntimeProcess;
    try {
      process = spawn({
        env: { [LABELS_ENV]: JSON.stringify(labels) },
        ...(this.options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: this.options.readyTimeoutMs }),
      });
    } catch (error) {
      this.options.logger.warn('a warm runtime process could not be started', { error });
      return false;
    }
    const entry: Entry = { process, ready: false };
    this.entries.push(entry);
    // one that ends while it waits (killed, out of memory) leaves the pool, and is replaced
    void process.exited.then(() => {
      const at = this.entries.indexOf(entry);
      if (at === -1) return;
      this.entries.splice(at, 1);
      if (entry.ready) this.fill();
    });
    try {
      await process.ready;
      entry.ready = true;
      return true;
    } catch (error) {
      if (!this.closed)
        this.options.logger.warn('a warm runtime process did not get ready', { pid: process.pid, error });
      const at = this.entries.indexOf(entry);
      if (at !== -1) this.entries.splice(at, 1);
      await process.stop(1_000).catch(() => undefined);
      return false;
    }
  }
}

/** Whether a warm process can serve this start exactly as a cold process would. */
export function poolable(options: RuntimeProcessOptions, limitsEnforced = false): boolean {
  // a memory limit that only Node's heap size can enforce is set when a process starts
  if (options.resources?.memoryMb !== undefined && !limitsEnforced) return false;
  // a warm process's sandbox was made before its deployment was known: it cannot reach a task folder
  if (options.sharedDir !== undefined) return false;
  return !Object.keys(options.env ?? {}).some((name) => START_ONLY.test(name));
}
