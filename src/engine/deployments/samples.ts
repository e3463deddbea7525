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

/** Distinct method and tool names a ring keeps; later new names are counted under OTHER_NAMES. */
export const MAX_NAMES = 1024;
/** What a name past the first MAX_NAMES a deployment has seen is recorded as. */
export const OTHER_NAMES = '(other names)';
/** The first rows a ring makes room for; it doubles from there up to its capacity. */
const FIRST_ROWS = 1024;

/** `flags`: what a sample's toolError was (neither: not given) */
const TOOL_ERROR = 1;
const TOOL_OK = 2;

/**
 * A ring of the newest samples, held in columns of typed arrays rather than one object each: a
 * busy deployment keeps up to `capacity` samples for minutes, and as objects every one of them
 * would be moved out of the young generation and traced by every full collection after (about
 * 110 bytes each, against 23 here). Method and tool names are kept once, as numbers.
 */
export class SampleRing {
  private t = new Float64Array(0);
  private latency = new Float64Array(0);
  private status = new Uint16Array(0);
  private flags = new Uint8Array(0);
  private method = new Uint16Array(0);
  private tool = new Uint16Array(0);
  /** rows in use */
  private size = 0;
  /** the oldest row, once the ring is full */
  private start = 0;
  /** name number → name; 0 is "none"; tools/call is always known, as the metrics count by it */
  private readonly names: Array<string | undefined> = [undefined, 'tools/call'];
  private readonly numbers = new Map<string, number>([['tools/call', 1]]);

  constructor(private readonly capacity: number) {}

  get length(): number {
    return this.size;
  }

  push(sample: RequestSample): void {
    let row: number;
    if (this.size < this.capacity) {
      if (this.size === this.t.length) this.grow();
      row = this.size++;
    } else {
      row = this.start;
      this.start = (this.start + 1) % this.capacity;
    }
    this.t[row] = sample.t;
    this.latency[row] = sample.latencyMs;
    this.status[row] = sample.status;
    this.flags[row] = sample.toolError === true ? TOOL_ERROR : sample.toolError === false ? TOOL_OK : 0;
    this.method[row] = this.numberOf(sample.method);
    this.tool[row] = this.numberOf(sample.tool);
  }

  /** samples with t >= from, oldest first */
  since(from: number): RequestSample[] {
    const out: RequestSample[] = [];
    for (let i = 0; i < this.size; i++) {
      const row = (this.start + i) % this.size;
      if (this.t[row]! < from) continue;
      const sample: RequestSample = { t: this.t[row]!, latencyMs: this.latency[row]!, status: this.status[row]! };
      const method = this.names[this.method[row]!];
      if (method !== undefined) sample.method = method;
      const tool = this.names[this.tool[row]!];
      if (tool !== undefined) sample.tool = tool;
      const flags = this.flags[row]!;
      if ((flags & TOOL_ERROR) !== 0) sample.toolError = true;
      else if ((flags & TOOL_OK) !== 0) sample.toolError = false;
      out.push(sample);
    }
    return out;
  }

  private numberOf(name: string | undefined): number {
    if (name === undefined) return 0;
    const known = this.numbers.get(name);
    if (known !== undefined) return known;
    if (this.names.length > MAX_NAMES && name !== OTHER_NAMES) return this.numberOf(OTHER_NAMES);
    this.names.push(name);
    this.numbers.set(name, this.names.length - 1);
    return this.names.length - 1;
  }

  private grow(): void {
    const rows = Math.min(this.capacity, Math.max(FIRST_ROWS, this.t.length * 2));
    const widen = <T extends Float64Array | Uint16Array | Uint8Array>(column: T, make: (n: number) => T): T => {
      const next = make(rows);
      next.set(column);
      return next;
    };
    this.t = widen(this.t, (n) => new Float64Array(n));
    this.latency = widen(this.latency, (n) => new Float64Array(n));
    this.status = widen(this.status, (n) => new Uint16Array(n));
    this.flags = widen(this.flags, (n) => new Uint8Array(n));
    this.method = widen(this.method, (n) => new Uint16Array(n));
    this.tool = widen(this.tool, (n) => new Uint16Array(n));
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
