/**
 * Admission: work that needs a process of its own (instance starts, the checks of builds, test
 * runs) goes through bounded queues sized to the machine, instead of all starting at once and
 * starving each other (and the engine) of CPU until their time limits run out.
 *
 * - At most `concurrency` items of a queue run at once; the rest wait in order of priority, then
 *   of arrival. Waiting is reported (the number of items ahead), never a failure: the time limits
 *   of the work start when it leaves the queue.
 * - New work is refused with `503 unavailable` and `Retry-After` (an estimate from recent
 *   durations) only when more than `maxWaiting` items already wait; work the engine owes (the
 *   restart of a crashed instance, a restore) is never refused.
 *
 * p-queue does the scheduling; this adds what it does not keep: each waiting item's position,
 * and an estimate of the wait.
 */
import PQueue from 'p-queue';
import { HttpError } from './http/respond.js';
import { defaultAdmissionLimits, type AdmissionLimits } from './engine-limits.js';

export interface QueueOptions {
  /** items that run at once */
  concurrency: number;
  /** items that may wait before new work is refused */
  maxWaiting: number;
  clock?: () => number;
}

export interface RunOptions {
  /** higher runs first; equal priorities run in order of arrival (default 0) */
  priority?: number;
  /** told how many items are ahead, at once and whenever that changes, until the work starts */
  onWait?: (ahead: number) => void;
  /** drops the work while it waits: `run` then rejects with the signal's reason */
  signal?: AbortSignal;
}

export interface QueueStats {
  running: number;
  waiting: number;
  concurrency: number;
}

interface Waiting {
  priority: number;
  onWait: ((ahead: number) => void) | undefined;
  /** drops it from p-queue while it waits */
  drop: AbortController;
}

/** How much the newest duration counts in the running mean of durations. */
const SMOOTHING = 0.2;

export class WorkQueue {
  private readonly queue: PQueue;
  private readonly clock: () => number;
  /** the waiting items in the order p-queue will start them */
  private readonly waiting: Waiting[] = [];
  private meanMs: number | undefined;
  private closed = false;
  readonly maxWaiting: number;

  constructor(
    readonly name: string,
    options: QueueOptions,
  ) {
    this.queue = new PQueue({ concurrency: Math.max(1, Math.floor(options.concurrency)) });
    this.maxWaiting = options.maxWaiting;
    this.clock = options.clock ?? Date.now;
  }

  get concurrency(): number {
    return this.queue.concurrency;
  }

  stats(): QueueStats {
    return { running: this.queue.pending, waiting: this.waiting.length, concurrency: this.queue.concurrency };
  }

  /** Runs `work` once a slot is free. */
  run<T>(work: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(stopping());
    const entry: Waiting = { priority: options.priority ?? 0, onWait: options.onWait, drop: new AbortController() };
    // Same order as p-queue's: after every item of the same or a higher priority.
    let index = this.waiting.length;
    while (index > 0 && this.waiting[index - 1]!.priority < entry.priority) index -= 1;
    this.waiting.splice(index, 0, entry);
    const leave = (): void => {
      const at = this.waiting.indexOf(entry);
      if (at === -1) return;
      this.waiting.splice(at, 1);
      this.tell(at);
    };
    // The caller's signal drops the work only while it waits: once started, the work owns its
    // slot until it ends (p-queue would free the slot at the abort, with the work still running).
    const onAbort = () => {
      if (this.waiting.includes(entry)) entry.drop.abort(options.signal?.reason);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted === true) onAbort();
    const task = this.queue.add<T>(
      async () => {
        leave();
        options.signal?.removeEventListener('abort', onAbort);
        const started = this.clock();
        try {
          return await work();
        } finally {
          const took = this.clock() - started;
          this.meanMs = this.meanMs === undefined ? took : this.meanMs + SMOOTHING * (took - this.meanMs);
        }
      },
      { priority: entry.priority, signal: entry.drop.signal },
    );
    // Still waiting once p-queue had its chance to start it: say where it stands.
    const at = this.waiting.indexOf(entry);
    if (at !== -1) this.tell(at);
    return task.catch((error: unknown) => {
      leave();
      options.signal?.removeEventListener('abort', onAbort);
      throw error;
    });
  }

  /** Drops every item still waiting (they reject: the engine is stopping) and refuses new ones; what runs finishes. */
  close(): void {
    this.closed = true;
    for (const entry of [...this.waiting]) entry.drop.abort(stopping());
  }

  /** Seconds a new item would likely wait before it starts. */
  estimateWaitSeconds(): number {
    const { running, waiting, concurrency } = this.stats();
    if (running + waiting < concurrency) return 0;
    const rounds = Math.floor(waiting / concurrency) + 1;
    return Math.max(1, Math.ceil((rounds * (this.meanMs ?? 1000)) / 1000));
  }

  /** Refuses new work when too much already waits: `503 unavailable` with `Retry-After`. */
  admit(what: string): void {
    if (this.waiting.length < this.maxWaiting) return;
    const seconds = this.estimateWaitSeconds();
    throw new HttpError(
      'unavailable',
      `the engine is busy: ${this.waiting.length} ${what} are already waiting for one of its ${this.concurrency} slots; retry in ${seconds} s`,
      { 'Retry-After': String(seconds) },
    );
  }

  /** Tells the waiting items from `from` on their new position. */
  private tell(from: number): void {
    for (let i = from; i < this.waiting.length; i += 1) this.waiting[i]!.onWait?.(i);
  }
}

/** The engine's three queues. */
export interface Admission {
  starts: WorkQueue;
  builds: WorkQueue;
  tests: WorkQueue;
}

function stopping(): HttpError {
  return new HttpError('unavailable', 'the engine is stopping; retry once it is up again', { 'Retry-After': '1' });
}

/** Closes every queue of the engine (when it stops). */
export function closeAdmission(admission: Admission): void {
  for (const queue of [admission.starts, admission.builds, admission.tests]) queue.close();
}

export function createAdmission(limits: AdmissionLimits = defaultAdmissionLimits(), clock?: () => number): Admission {
  const make = (name: string, concurrency: number) =>
    new WorkQueue(name, { concurrency, maxWaiting: limits.maxWaiting, ...(clock === undefined ? {} : { clock }) });
  return {
    starts: make('starts', limits.starts),
    builds: make('builds', limits.builds),
    tests: make('tests', limits.tests),
  };
}

/** Priorities in the start queue: a request waiting for an idle deployment first, then what already served. */
export const START_PRIORITY = { wake: 4, restart: 3, restore: 2, scale: 1, deploy: 0 } as const;
