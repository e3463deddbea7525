/**
 * Request samples recorded by the gateway, and the metrics computed from them. Pure: the clock
 * is passed in. Samples live in memory (a bounded ring), so metrics start afresh when the engine
 * restarts.
 */
import type { Metrics } from '../../api/contract.js';

export interface RequestSample {
  /** when the request arrived, ms since the epoch */
  t: number;
  latencyMs: number;
  /** HTTP status sent to the client (0 when the connection broke) */
  status: number;
  /** JSON-RPC method, when the body was a single request */
  method?: string;
  /** tool name for tools/call */
  tool?: string;
  /** for tools/call: the call failed (isError, a JSON-RPC error, or an HTTP failure) */
  toolError?: boolean;
}

/** A ring of the newest samples. */
export class SampleRing {
  private readonly items: RequestSample[] = [];
  private start = 0;
  constructor(private readonly capacity: number) {}

  push(sample: RequestSample): void {
    if (this.items.length < this.capacity) {
      this.items.push(sample);
      return;
    }
    this.items[this.start] = sample;
    this.start = (this.start + 1) % this.capacity;
  }

  /** samples with t >= from, oldest first */
  since(from: number): RequestSample[] {
    const ordered = this.start === 0 ? this.items : [...this.items.slice(this.start), ...this.items.slice(0, this.start)];
    return ordered.filter((sample) => sample.t >= from);
  }
}

/** Nearest-rank percentile of sorted values; null when there are none. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return round(sorted[Math.min(rank, sorted.length) - 1]!);
}

const SERIES_POINTS = 10;

export interface SummarizeOptions {
  deploymentId: string;
  windowSeconds: number;
  now: number;
  /** when the deployment started serving; throughput is over the shorter of the window and its age */
  startedAt?: number;
}

export function summarizeMetrics(samples: readonly RequestSample[], options: SummarizeOptions): Metrics {
  const { deploymentId, windowSeconds, now } = options;
  const from = now - windowSeconds * 1000;
  const inWindow = samples.filter((s) => s.t >= from && s.t <= now);
  const latencies = inWindow.map((s) => s.latencyMs).sort((a, b) => a - b);
  const perTool: Record<string, { calls: number; errors: number }> = {};
  let toolCalls = 0;
  let toolErrors = 0;
  for (const sample of inWindow) {
    if (sample.method !== 'tools/call') continue;
    toolCalls += 1;
    const name = sample.tool ?? '(unknown)';
    const entry = (perTool[name] ??= { calls: 0, errors: 0 });
    entry.calls += 1;
    if (sample.toolError === true) {
      toolErrors += 1;
      entry.errors += 1;
    }
  }
  const age = options.startedAt === undefined ? windowSeconds : (now - options.startedAt) / 1000;
  const seconds = Math.max(1, Math.min(windowSeconds, age));
  const bucketMs = (windowSeconds * 1000) / SERIES_POINTS;
  const buckets: number[][] = Array.from({ length: SERIES_POINTS }, () => []);
  for (const sample of inWindow) {
    const index = Math.min(SERIES_POINTS - 1, Math.floor((sample.t - from) / bucketMs));
    buckets[index]!.push(sample.latencyMs);
  }
  return {
    deployment_id: deploymentId,
    window_seconds: windowSeconds,
    requests: inWindow.length,
    throughput_rps: round(inWindow.length / seconds),
    latency_ms: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) },
    tool_calls: toolCalls,
    tool_errors: toolErrors,
    tool_error_rate: toolCalls === 0 ? null : round(toolErrors / toolCalls, 4),
    per_tool: perTool,
    series: buckets.map((bucket, i) => {
      const sorted = bucket.sort((a, b) => a - b);
      return {
        t: new Date(from + i * bucketMs).toISOString(),
        requests: bucket.length,
        p50_ms: percentile(sorted, 50),
        p95_ms: percentile(sorted, 95),
      };
    }),
  };
}

function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
