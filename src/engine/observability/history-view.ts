/**
 * A deployment's history as the API answers it: the metrics of a `since` span as points plus
 * totals (docs/api.md, `GET /v1/deploy/{id}/metrics?since=`), and its usage by tool, client, user
 * and day (`GET /v1/deploy/{id}/usage`). Pure.
 */
import { MAX_HISTORY_POINTS, MINUTE_RESOLUTION_UP_TO_MS, type MetricsHistory, type Usage } from '../../api/usage.js';
import {
  ERROR_TYPES,
  HOUR_MS,
  MINUTE_MS,
  errorCount,
  estimatePercentile,
  mergeSteps,
  total,
  type Bucket,
  type Series,
} from './history-buckets.js';
import { splitClientKey, sumDays, type Counts, type UsageDay } from './usage-tally.js';

export interface ViewOptions {
  deploymentId: string;
  now: number;
  sinceMs: number;
  /** the most points wanted (the step grows to fit); default and at most MAX_HISTORY_POINTS */
  points?: number | undefined;
}

export function viewMetrics(series: Series | undefined, options: ViewOptions): MetricsHistory {
  const { now, sinceMs } = options;
  const resolution = sinceMs <= MINUTE_RESOLUTION_UP_TO_MS ? MINUTE_MS : HOUR_MS;
  const from = now - sinceMs;
  const wanted = Math.max(1, Math.min(options.points ?? MAX_HISTORY_POINTS, MAX_HISTORY_POINTS));
  // the step: the smallest multiple of the resolution whose intervals (aligned to it) fit in `wanted`
  let step = resolution * Math.max(1, Math.ceil(sinceMs / resolution / wanted));
  while (Math.ceil((now + 1 - Math.floor(from / step) * step) / step) > wanted) step += resolution;
  const source = resolution === MINUTE_MS ? (series?.minutes ?? []) : (series?.hours ?? []);
  const steps = mergeSteps(source, from, now + 1, step);
  const sum = total(steps);
  const errors = errorCount(sum);
  const errorsByType: Record<string, number> = {};
  for (const type of ERROR_TYPES) if ((sum.errors[type] ?? 0) > 0) errorsByType[type] = sum.errors[type]!;
  return {
    deployment_id: options.deploymentId,
    since: new Date(steps[0]!.t).toISOString(),
    until: new Date(now).toISOString(),
    resolution_seconds: resolution / 1000,
    step_seconds: step / 1000,
    totals: {
      requests: sum.requests,
      errors,
      error_rate: ratio(errors, sum.requests),
      errors_by_type: errorsByType,
      tool_calls: sum.toolCalls,
      tool_errors: sum.toolErrors,
      tool_error_rate: ratio(sum.toolErrors, sum.toolCalls),
      bytes_in: sum.bytesIn,
      latency_ms: {
        p50: estimatePercentile(sum, 50),
        p95: estimatePercentile(sum, 95),
        p99: estimatePercentile(sum, 99),
      },
    },
    points: steps.map(point),
  };
}

function point(bucket: Bucket): MetricsHistory['points'][number] {
  return {
    t: new Date(bucket.t).toISOString(),
    requests: bucket.requests,
    errors: errorCount(bucket),
    tool_calls: bucket.toolCalls,
    tool_errors: bucket.toolErrors,
    bytes_in: bucket.bytesIn,
    p50_ms: estimatePercentile(bucket, 50),
    p95_ms: estimatePercentile(bucket, 95),
    p99_ms: estimatePercentile(bucket, 99),
  };
}

export function viewUsage(days: readonly UsageDay[] | undefined, options: ViewOptions): Usage {
  const sum = sumDays(days ?? [], options.now - options.sinceMs);
  const counts = (c: Counts) => ({ requests: c.requests, tool_calls: c.toolCalls, tool_errors: c.toolErrors });
  return {
    deployment_id: options.deploymentId,
    since: new Date(sum.first).toISOString(),
    until: new Date(options.now).toISOString(),
    totals: { requests: sum.requests, errors: sum.errors, tool_calls: sum.toolCalls, tool_errors: sum.toolErrors },
    tools: rows(sum.tools, (c) => c.toolCalls).map(([name, c]) => ({ name, calls: c.toolCalls, errors: c.toolErrors })),
    clients: rows(sum.clients, (c) => c.requests).map(([key, c]) => ({ ...splitClientKey(key), ...counts(c) })),
    users: rows(sum.users, (c) => c.requests).map(([user, c]) => ({ user, ...counts(c) })),
    days: sum.days.map((day) => ({
      day: new Date(day.t).toISOString().slice(0, 10),
      requests: day.requests,
      errors: day.errors,
      tool_calls: day.toolCalls,
      tool_errors: day.toolErrors,
    })),
  };
}

/** The rows of a table, most first, then by name. */
function rows(table: Record<string, Counts>, by: (c: Counts) => number): Array<[string, Counts]> {
  return Object.entries(table).sort(([a, x], [b, y]) => by(y) - by(x) || a.localeCompare(b));
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}
