/**
 * The engine's metrics history and usage analytics: an observer of every request the gateway
 * passes on, keeping per deployment one-minute buckets for 24 hours, one-hour buckets for 30 days
 * (history-buckets.ts) and per-day usage for 30 days (usage-tally.ts). Written to the engine's
 * store (history-file.ts) every FLUSH_MS and when the engine stops, read back when it starts, so
 * `mcpctl metrics --since` and `mcpctl usage` look back across restarts.
 */
import type { MetricsHistory, Usage } from '../../api/usage.js';
import type { Logger } from '../engine-log.js';
import { errorTypeOf, type RequestEvent, type RequestObserver } from './events.js';
import { expire, recordSample } from './history-buckets.js';
import { loadHistories, saveHistory, type DeploymentHistory } from './history-file.js';
import { viewMetrics, viewUsage } from './history-view.js';
import { expireDays, recordUsage } from './usage-tally.js';

/** How often what changed is written: a crash loses at most this much. */
export const FLUSH_MS = 15_000;

/** What the API reads of the history. */
export interface HistoryReader {
  /** the metrics of the last `sinceMs` as at most `points` points, plus totals */
  metrics(deploymentId: string, sinceMs: number, points?: number): MetricsHistory;
  /** the usage of the UTC days from the one `sinceMs` ago on */
  usage(deploymentId: string, sinceMs: number): Usage;
}

export interface HistoryOptions {
  /** the folder of the files, `<home>/store/history` */
  dir: string;
  clock: () => number;
  logger: Logger;
  /** default FLUSH_MS */
  flushMs?: number;
}

export class History implements RequestObserver, HistoryReader {
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly options: HistoryOptions,
    private readonly byDeployment: Map<string, DeploymentHistory>,
  ) {}

  /** The history kept in `options.dir`, then written there every `flushMs`. */
  static async open(options: HistoryOptions): Promise<History> {
    const history = new History(options, await loadHistories(options.dir, options.logger));
    history.timer = setInterval(() => void history.flush(), options.flushMs ?? FLUSH_MS);
    history.timer.unref();
    return history;
  }

  request(event: RequestEvent): void {
    if (this.closed) return;
    const now = this.options.clock();
    let kept = this.byDeployment.get(event.deploymentId);
    if (kept === undefined) {
      kept = { series: { minutes: [], hours: [] }, days: [] };
      this.byDeployment.set(event.deploymentId, kept);
    }
    const errorType = errorTypeOf(event);
    const tool = event.method === 'tools/call';
    const toolError = tool && event.toolError === true;
    recordSample(
      kept.series,
      { at: event.at, latencyMs: event.latencyMs, errorType, tool, toolError, bytesIn: event.bytesIn ?? 0 },
      now,
    );
    recordUsage(
      kept.days,
      {
        at: event.at,
        failed: errorType !== undefined,
        tool: tool ? (event.tool ?? '(no name)') : undefined,
        toolError,
        client: event.client,
        user: event.user,
      },
      now,
    );
    this.dirty.add(event.deploymentId);
  }

  metrics(deploymentId: string, sinceMs: number, points?: number): MetricsHistory {
    const now = this.options.clock();
    const kept = this.expired(deploymentId, now);
    return viewMetrics(kept?.series, { deploymentId, now, sinceMs, points });
  }

  usage(deploymentId: string, sinceMs: number): Usage {
    const now = this.options.clock();
    return viewUsage(this.expired(deploymentId, now)?.days, { deploymentId, now, sinceMs });
  }

  /** Writes every deployment whose history changed since the last write (one write at a time). */
  flush(): Promise<void> {
    const run = this.writing.then(() => this.writeChanged());
    this.writing = run.catch(() => {});
    return run;
  }

  /** Forgets a deployment's history and removes its file (a deployment removed from the engine). */
  forget(deploymentId: string): Promise<void> {
    this.byDeployment.delete(deploymentId);
    this.dirty.delete(deploymentId);
    const empty: DeploymentHistory = { series: { minutes: [], hours: [] }, days: [] };
    // after the write under way, so that write cannot bring the file back
    const run = this.writing.then(() => saveHistory(this.options.dir, deploymentId, empty, this.options.clock()));
    this.writing = run.catch(() => {});
    return run;
  }

  /** Stops the timer and writes what is left; requests after this are not counted. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.flush().catch((error: unknown) =>
      this.options.logger.error('writing the metrics history failed', { error: String(error) }),
    );
  }

  private async writeChanged(): Promise<void> {
    const now = this.options.clock();
    // past their retention: dropped, and the file shrinks with them
    for (const [id, kept] of this.byDeployment) if (expireAll(kept, now)) this.dirty.add(id);
    const ids = [...this.dirty];
    this.dirty.clear();
    for (const id of ids) {
      const kept = this.byDeployment.get(id);
      if (kept === undefined) continue;
      try {
        await saveHistory(this.options.dir, id, kept, now);
      } catch (error) {
        // tried again at the next flush
        this.dirty.add(id);
        this.options.logger.warn('writing the metrics history failed', { deployment_id: id, error: String(error) });
      }
      if (kept.series.minutes.length === 0 && kept.series.hours.length === 0 && kept.days.length === 0) {
        this.byDeployment.delete(id);
      }
    }
  }

  private expired(deploymentId: string, now: number): DeploymentHistory | undefined {
    const kept = this.byDeployment.get(deploymentId);
    if (kept !== undefined && expireAll(kept, now)) this.dirty.add(deploymentId);
    return kept;
  }
}

/** Drops what is past its retention; whether anything was. */
function expireAll(kept: DeploymentHistory, now: number): boolean {
  const series = expire(kept.series, now);
  const days = expireDays(kept.days, now);
  return series || days;
}
