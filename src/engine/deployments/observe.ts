/**
 * Reading a deployment: its log (live, or from disk when it no longer runs here), following its
 * log, and its metrics over a window.
 */
import type { Deployment, LogLine, Metrics } from '../../api/contract.js';
import { ServiceError } from '../service-error.js';
import type { DeploymentRecord } from '../records.js';
import type { LogReadOptions } from '../services.js';
import { LogBook } from './log-book.js';
import { summarizeMetrics } from './samples.js';
import type { Registry } from './registry.js';

const MAX_LOG_LINES = 5000;
const MAX_WINDOW_SECONDS = 86_400;

export interface Observed {
  registry: Registry;
  logDir: string;
  clock: () => number;
  /** the record, or a not_found ServiceError */
  requireRecord(deploymentId: string): Promise<DeploymentRecord>;
}

export async function readLogs(ctx: Observed, deploymentId: string, options: LogReadOptions): Promise<LogLine[]> {
  const limit = Math.min(MAX_LOG_LINES, Math.max(1, options.limit ?? 200));
  const read = { limit, filter: options.filter, ...(options.since === undefined ? {} : { since: options.since }) };
  const live = ctx.registry.get(deploymentId);
  if (live !== undefined) return live.ctx.logs.read(read);
  await ctx.requireRecord(deploymentId);
  const book = new LogBook(ctx.logDir, deploymentId, MAX_LOG_LINES);
  await book.load();
  return book.read(read);
}

/**
 * Follows new log lines until the deployment has ended (stopped, replaced or failed, and its
 * instances' last lines written) or `signal` aborts. A deployment that does not run here writes no
 * more lines: the follow ends at once.
 */
export async function followLogs(
  ctx: Observed,
  deploymentId: string,
  onLine: (line: LogLine) => void,
  signal: AbortSignal,
): Promise<void> {
  const live = ctx.registry.get(deploymentId);
  if (live === undefined) {
    await ctx.requireRecord(deploymentId);
    return;
  }
  const unsubscribe = live.ctx.logs.subscribe(onLine);
  try {
    while (!signal.aborted && !hasEnded(live.status)) {
      await live.waitUntil((view) => hasEnded(view.status), FOLLOW_WAIT_MS, signal);
    }
    // The instances' last lines (drained, stopped) come after the state: wait for them, a while at most.
    const quiet = (view: Deployment) =>
      (view.instances ?? []).every((instance) => instance.state === 'stopped' || instance.state === 'failed');
    if (!signal.aborted) await live.waitUntil(quiet, LAST_LINES_MS, signal);
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    unsubscribe();
  }
}

/** How long one wait of a follow lasts before it looks again (a wait cannot be endless). */
const FOLLOW_WAIT_MS = 3_600_000;
/** How long a follow waits for the instances of an ended deployment to stop. */
const LAST_LINES_MS = 10_000;

function hasEnded(status: Deployment['status']): boolean {
  return status === 'stopped' || status === 'failed';
}

export async function readMetrics(ctx: Observed, deploymentId: string, windowSeconds: number): Promise<Metrics> {
  if (!Number.isFinite(windowSeconds) || windowSeconds < 1 || windowSeconds > MAX_WINDOW_SECONDS) {
    throw new ServiceError('bad_request', `window must be from 1 to ${MAX_WINDOW_SECONDS} seconds`, [
      { path: 'window', message: `must be from 1 to ${MAX_WINDOW_SECONDS}` },
    ]);
  }
  const now = ctx.clock();
  const live = ctx.registry.get(deploymentId);
  if (live === undefined) await ctx.requireRecord(deploymentId);
  const samples = live?.samples.since(now - windowSeconds * 1000) ?? [];
  return summarizeMetrics(samples, {
    deploymentId,
    windowSeconds,
    now,
    ...(live?.servingSince === undefined ? {} : { startedAt: live.servingSince }),
  });
}

/**
 * A deployment this engine does not run (stopped, failed, or not restored yet after a restart) as
 * the API shows it: its record, with no instance shown as running. The record keeps the instances
 * as they were at its last write, ports included; a client must not take them for live ones.
 */
export function storedView(deployment: Deployment): Deployment {
  return {
    ...deployment,
    instances: (deployment.instances ?? []).map((instance) => ({
      id: instance.id,
      state: 'stopped' as const,
      restarts: instance.restarts,
    })),
  };
}
