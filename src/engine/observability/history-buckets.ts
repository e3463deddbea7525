/**
 * The metrics history of one deployment as time buckets: one-minute buckets kept 24 hours and
 * one-hour buckets kept 30 days, each with the request count, errors by type, tool calls and tool
 * errors, bytes in and a latency histogram of fixed bounds (so buckets merge exactly and
 * percentiles can be estimated from merged ones). Pure: times are passed in.
 *
 * Size: at most 1,440 minute and 720 hour buckets per deployment, each a few numbers and a
 * histogram of LATENCY_BOUNDS_MS.length + 1 counts.
 */
import type { ErrorType } from './events.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** how long each resolution is kept */
export const MINUTES_KEPT_MS = DAY_MS;
export const HOURS_KEPT_MS = 30 * DAY_MS;

/** Upper bounds (ms) of the latency histogram's buckets; one more counts what is above the last. */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000, 30000,
];

export const ERROR_TYPES: readonly ErrorType[] = ['tool_error', 'client_gone', 'http_4xx', 'http_5xx'];

/** One interval's figures. */
export interface Bucket {
  /** the interval's start, ms since the epoch */
  t: number;
  requests: number;
  /** failed requests by error type */
  errors: Partial<Record<ErrorType, number>>;
  toolCalls: number;
  toolErrors: number;
  bytesIn: number;
  /** counts per LATENCY_BOUNDS_MS bucket, then the overflow */
  latency: number[];
  /** the slowest request, ms (the top of the overflow bucket) */
  maxMs: number;
}

/** The history of one deployment: buckets oldest first. */
export interface Series {
  minutes: Bucket[];
  hours: Bucket[];
}

/** What one request adds to a bucket. */
export interface Sample {
  at: number;
  latencyMs: number;
  errorType: ErrorType | undefined;
  tool: boolean;
  toolError: boolean;
  bytesIn: number;
}

export function emptyBucket(t: number): Bucket {
  return {
    t,
    requests: 0,
    errors: {},
    toolCalls: 0,
    toolErrors: 0,
    bytesIn: 0,
    latency: new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0),
    maxMs: 0,
  };
}

/** The index of the histogram bucket a latency falls in. */
export function latencySlot(ms: number): number {
  let at = 0;
  while (at < LATENCY_BOUNDS_MS.length && ms > LATENCY_BOUNDS_MS[at]!) at += 1;
  return at;
}

export function addSample(bucket: Bucket, sample: Sample): void {
  bucket.requests += 1;
  if (sample.errorType !== undefined) bucket.errors[sample.errorType] = (bucket.errors[sample.errorType] ?? 0) + 1;
  if (sample.tool) {
    bucket.toolCalls += 1;
    if (sample.toolError) bucket.toolErrors += 1;
  }
  bucket.bytesIn += sample.bytesIn;
  const ms = Math.max(0, sample.latencyMs);
  bucket.latency[latencySlot(ms)]! += 1;
  if (ms > bucket.maxMs) bucket.maxMs = ms;
}

/** Adds `from` into `into` (same histogram bounds): the figures of both intervals together. */
export function mergeInto(into: Bucket, from: Bucket): void {
  into.requests += from.requests;
  for (const type of ERROR_TYPES) {
    const n = from.errors[type];
    if (n !== undefined && n > 0) into.errors[type] = (into.errors[type] ?? 0) + n;
  }
  into.toolCalls += from.toolCalls;
  into.toolErrors += from.toolErrors;
  into.bytesIn += from.bytesIn;
  for (let i = 0; i < into.latency.length; i += 1) into.latency[i]! += from.latency[i] ?? 0;
  into.maxMs = Math.max(into.maxMs, from.maxMs);
}

export function errorCount(bucket: Bucket): number {
  let n = 0;
  for (const type of ERROR_TYPES) n += bucket.errors[type] ?? 0;
  return n;
}

/**
 * The p-th percentile (0–100) estimated from the histogram: linear within the bucket the rank falls
 * in (the overflow bucket reaches up to the slowest request); null when the bucket is empty.
 */
export function estimatePercentile(bucket: Pick<Bucket, 'latency' | 'maxMs'>, p: number): number | null {
  const total = bucket.latency.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let i = 0; i < bucket.latency.length; i += 1) {
    const n = bucket.latency[i]!;
    if (n === 0 || seen + n < rank) {
      seen += n;
      continue;
    }
    const low = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
    const high = Math.min(LATENCY_BOUNDS_MS[i] ?? bucket.maxMs, Math.max(bucket.maxMs, low));
    const value = low + ((high - low) * (rank - seen)) / n;
    return Math.round(value * 10) / 10;
  }
  return null;
}

/** The bucket of `series` starting at `t`, made (in time order) when there is none yet. */
function bucketAt(buckets: Bucket[], t: number): Bucket {
  // requests arrive nearly in order: the newest bucket is almost always the one
  for (let i = buckets.length - 1; i >= 0; i -= 1) {
    const bucket = buckets[i]!;
    if (bucket.t === t) return bucket;
    if (bucket.t < t) {
      const made = emptyBucket(t);
      buckets.splice(i + 1, 0, made);
      return made;
    }
  }
  const made = emptyBucket(t);
  buckets.unshift(made);
  return made;
}

/** Records one request in its minute and its hour; a request older than what is kept is dropped. */
export function recordSample(series: Series, sample: Sample, now: number): void {
  if (sample.at >= now - MINUTES_KEPT_MS) addSample(bucketAt(series.minutes, floorTo(sample.at, MINUTE_MS)), sample);
  if (sample.at >= now - HOURS_KEPT_MS) addSample(bucketAt(series.hours, floorTo(sample.at, HOUR_MS)), sample);
}

/** Drops the buckets past their retention; returns whether anything was dropped. */
export function expire(series: Series, now: number): boolean {
  const minutes = dropBefore(series.minutes, floorTo(now - MINUTES_KEPT_MS, MINUTE_MS));
  const hours = dropBefore(series.hours, floorTo(now - HOURS_KEPT_MS, HOUR_MS));
  return minutes || hours;
}

function dropBefore(buckets: Bucket[], t: number): boolean {
  let n = 0;
  while (n < buckets.length && buckets[n]!.t < t) n += 1;
  if (n > 0) buckets.splice(0, n);
  return n > 0;
}

export function floorTo(t: number, step: number): number {
  return Math.floor(t / step) * step;
}

/**
 * The buckets of [from, to) merged into consecutive intervals of `stepMs` (a multiple of the
 * resolution), every interval present, empty ones included; the first starts at `from` floored
 * to the step.
 */
export function mergeSteps(buckets: readonly Bucket[], from: number, to: number, stepMs: number): Bucket[] {
  const start = floorTo(from, stepMs);
  const count = Math.max(1, Math.ceil((to - start) / stepMs));
  const out: Bucket[] = [];
  for (let i = 0; i < count; i += 1) out.push(emptyBucket(start + i * stepMs));
  for (const bucket of buckets) {
    if (bucket.t < start || bucket.t >= to) continue;
    const slot = out[Math.floor((bucket.t - start) / stepMs)];
    if (slot !== undefined) mergeInto(slot, bucket);
  }
  return out;
}

/** Everything in `buckets` as one bucket. */
export function total(buckets: readonly Bucket[]): Bucket {
  const sum = emptyBucket(buckets[0]?.t ?? 0);
  for (const bucket of buckets) mergeInto(sum, bucket);
  return sum;
}
