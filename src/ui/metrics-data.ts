/**
 * The metrics history (`GET /v1/deploy/:id/metrics?since=`) as the columns uPlot draws: x in Unix
 * seconds, one array per series, `null` where there is nothing to show (a step without requests has
 * no latency and no error rate; uPlot leaves a gap there rather than drawing a false zero). Pure.
 */
import type { MetricsHistory } from './api-types.js';

/** uPlot's aligned data: the x values, then one array of y values per series. */
export type Columns = [number[], ...(number | null)[][]];

export interface ChartData {
  /** p50, p95, p99 in milliseconds */
  latency: Columns;
  /** requests per second over each step */
  throughput: Columns;
  /** failed requests / requests of each step, in percent */
  errorRate: Columns;
}

export const SPANS = ['1h', '24h', '7d'] as const;
export type Span = (typeof SPANS)[number];

function finiteOrNull(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function chartData(history: MetricsHistory): ChartData {
  const step = history.step_seconds > 0 ? history.step_seconds : 60;
  const xs: number[] = [];
  const p50: (number | null)[] = [];
  const p95: (number | null)[] = [];
  const p99: (number | null)[] = [];
  const rps: (number | null)[] = [];
  const errors: (number | null)[] = [];
  for (const point of history.points) {
    const t = Date.parse(point.t);
    if (Number.isNaN(t)) continue;
    xs.push(t / 1000);
    const requests = Number.isFinite(point.requests) ? point.requests : 0;
    const busy = requests > 0;
    p50.push(busy ? finiteOrNull(point.p50_ms) : null);
    p95.push(busy ? finiteOrNull(point.p95_ms) : null);
    p99.push(busy ? finiteOrNull(point.p99_ms) : null);
    rps.push(requests / step);
    errors.push(busy ? ((point.errors ?? 0) / requests) * 100 : null);
  }
  return { latency: [xs, p50, p95, p99], throughput: [xs, rps], errorRate: [xs, errors] };
}

/** Whether a chart has anything to draw: at least one value that is not a gap. */
export function hasValues(columns: Columns): boolean {
  return columns.slice(1).some((series) => (series as (number | null)[]).some((value) => value !== null));
}

/**
 * The indexes of values with a gap (or the edge) on both sides: a line needs two neighbours, so the
 * chart marks these with a dot, or a minute of traffic in a quiet hour would not show at all.
 */
export function isolatedPoints(values: ArrayLike<number | null | undefined>): number[] {
  const present = (i: number): boolean => i >= 0 && i < values.length && values[i] !== null && values[i] !== undefined;
  const found: number[] = [];
  for (let i = 0; i < values.length; i++) if (present(i) && !present(i - 1) && !present(i + 1)) found.push(i);
  return found;
}
