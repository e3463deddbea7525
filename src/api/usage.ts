/**
 * The answers of `GET /v1/deploy/{id}/metrics?since=` (a deployment's metrics history) and
 * `GET /v1/deploy/{id}/usage` (its usage by tool, client, user and day), and the `since` they take.
 * docs/api.md describes them. Pure: no IO.
 */
import { z } from 'zod';

const count = z.number().int().nonnegative();
const rate = z.number().nullable();
const ms = z.number().nullable();

/** The longest `since`: the hour buckets are kept 30 days. */
export const MAX_SINCE_MS = 30 * 24 * 3_600_000;
/** Up to this span the history answers from minute buckets, beyond from hour buckets. */
export const MINUTE_RESOLUTION_UP_TO_MS = 24 * 3_600_000;
/** The most points one history answer has. */
export const MAX_HISTORY_POINTS = 1440;

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A `since` such as `90m`, `1h`, `24h`, `7d` in milliseconds, from one minute to 30 days; undefined
 * when the text is not one.
 */
export function parseSince(text: string): number | undefined {
  const match = /^(\d{1,6})(m|h|d)$/.exec(text.trim());
  if (match === null) return undefined;
  const value = Number(match[1]) * UNITS[match[2]!]!;
  return value >= 60_000 && value <= MAX_SINCE_MS ? value : undefined;
}

export const SINCE_RULE = 'must be a duration such as 30m, 1h, 24h or 7d, from 1m to 30d';

export const HistoryPoint = z.looseObject({
  /** the interval's start */
  t: z.string(),
  requests: count,
  errors: count,
  tool_calls: count,
  tool_errors: count,
  bytes_in: count,
  p50_ms: ms,
  p95_ms: ms,
  p99_ms: ms,
});
export type HistoryPoint = z.infer<typeof HistoryPoint>;

export const MetricsHistory = z.looseObject({
  deployment_id: z.string(),
  since: z.string(),
  until: z.string(),
  /** the buckets the answer is made of: 60 (up to 24 h back) or 3600 */
  resolution_seconds: count,
  /** the interval of each point: a multiple of the resolution */
  step_seconds: count,
  totals: z.looseObject({
    requests: count,
    errors: count,
    error_rate: rate,
    errors_by_type: z.record(z.string(), count),
    tool_calls: count,
    tool_errors: count,
    tool_error_rate: rate,
    bytes_in: count,
    latency_ms: z.looseObject({ p50: ms, p95: ms, p99: ms }),
  }),
  points: z.array(HistoryPoint),
});
export type MetricsHistory = z.infer<typeof MetricsHistory>;

const UsageCounts = { requests: count, tool_calls: count, tool_errors: count };

export const Usage = z.looseObject({
  deployment_id: z.string(),
  /** the start of the first UTC day counted: usage is kept per day */
  since: z.string(),
  until: z.string(),
  totals: z.looseObject({ requests: count, errors: count, tool_calls: count, tool_errors: count }),
  tools: z.array(z.looseObject({ name: z.string(), calls: count, errors: count })),
  clients: z.array(z.looseObject({ name: z.string(), version: z.string().optional(), ...UsageCounts })),
  /** only where the deployment checks credentials: the identity the gateway validated */
  users: z.array(z.looseObject({ user: z.string(), ...UsageCounts })),
  days: z.array(
    z.looseObject({ day: z.string(), requests: count, errors: count, tool_calls: count, tool_errors: count }),
  ),
});
export type Usage = z.infer<typeof Usage>;
