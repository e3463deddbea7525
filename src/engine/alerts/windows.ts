/**
 * What the alert rules look at, kept per deployment: the requests of the longest window (fed by an
 * observer of RequestEvent) and the restarts its instances made (fed by each evaluation's snapshot).
 */
import {
  errorTypeOf,
  type DeploymentSnapshot,
  type RequestEvent,
  type RequestObserver,
} from '../observability/events.js';

interface Sample {
  at: number;
  ms: number;
  error: boolean;
}

/** Requests over a window: how many, how many failed, and their latencies. */
export interface WindowStats {
  requests: number;
  errors: number;
  /** latency at a percentile (0..100) of the window's requests, ms; null without requests */
  percentile(p: number): number | null;
}

/** Samples kept per deployment at most; beyond it the oldest go (a window then sees the newest). */
const MAX_SAMPLES = 100_000;
/** How much earlier than a window's start a request may have arrived and still be reported after a later one. */
const OUT_OF_ORDER_MS = 120_000;

export class RequestWindows implements RequestObserver {
  private readonly samples = new Map<string, Sample[]>();

  request(event: RequestEvent): void {
    let list = this.samples.get(event.deploymentId);
    if (list === undefined) this.samples.set(event.deploymentId, (list = []));
    list.push({ at: event.at, ms: event.latencyMs, error: errorTypeOf(event) !== undefined });
    // the oldest go a tenth at a time, so that a busy deployment does not pay a shift per request
    if (list.length > MAX_SAMPLES + MAX_SAMPLES / 10) list.splice(0, list.length - MAX_SAMPLES);
  }

  /** The requests of `deploymentId` that arrived at `since` or later. */
  stats(deploymentId: string, since: number): WindowStats {
    const list = this.samples.get(deploymentId) ?? [];
    // samples are in the order requests ended: walk back from the newest, a little past `since`
    // (a request that arrived earlier may have ended later)
    const inWindow: Sample[] = [];
    for (let i = list.length - 1; i >= 0; i--) {
      const sample = list[i]!;
      if (sample.at >= since) inWindow.push(sample);
      else if (sample.at < since - OUT_OF_ORDER_MS) break;
    }
    let errors = 0;
    for (const sample of inWindow) if (sample.error) errors++;
    let sorted: Float64Array | undefined;
    return {
      requests: inWindow.length,
      errors,
      percentile: (p) => {
        if (inWindow.length === 0) return null;
        sorted ??= Float64Array.from(inWindow, (sample) => sample.ms).sort();
        const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
        return sorted[rank - 1]!;
      },
    };
  }

  /** Forgets the requests of a deployment no rule looks at. */
  forget(deploymentId: string): void {
    this.samples.delete(deploymentId);
  }

  /** Forgets requests that arrived before `before`, and deployments left without any. */
  prune(before: number): void {
    for (const [id, list] of this.samples) {
      const keep = list.findIndex((sample) => sample.at >= before);
      if (keep === -1) this.samples.delete(id);
      else if (keep > 0) list.splice(0, keep);
    }
  }
}

/** The restarts each deployment's instances made, seen from one snapshot to the next. */
export class RestartWindows {
  private readonly last = new Map<string, Map<string, number>>();
  private readonly increases = new Map<string, Array<{ at: number; count: number }>>();

  /** Takes one snapshot of a deployment: restarts beyond those seen before count at `now`. */
  observe(snapshot: DeploymentSnapshot, now: number): void {
    const before = this.last.get(snapshot.deploymentId);
    const current = new Map(snapshot.instances.map((instance) => [instance.id, instance.restarts]));
    this.last.set(snapshot.deploymentId, current);
    if (before === undefined) return;
    let count = 0;
    for (const [id, restarts] of current) count += Math.max(0, restarts - (before.get(id) ?? 0));
    if (count === 0) return;
    let list = this.increases.get(snapshot.deploymentId);
    if (list === undefined) this.increases.set(snapshot.deploymentId, (list = []));
    list.push({ at: now, count });
  }

  /** Restarts of `deploymentId` seen at `since` or later. */
  count(deploymentId: string, since: number): number {
    return (this.increases.get(deploymentId) ?? [])
      .filter((increase) => increase.at >= since)
      .reduce((sum, increase) => sum + increase.count, 0);
  }

  /** Forgets deployments that are gone and increases older than `before`. */
  prune(live: ReadonlySet<string>, before: number): void {
    for (const id of this.last.keys()) if (!live.has(id)) this.last.delete(id);
    for (const [id, list] of this.increases) {
      const kept = list.filter((increase) => increase.at >= before);
      if (kept.length === 0 || !live.has(id)) this.increases.delete(id);
      else this.increases.set(id, kept);
    }
  }
}
