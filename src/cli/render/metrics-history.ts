/**
 * `mcpctl metrics <id> --since …` for people: the totals of the span, then charts of requests, error
 * rate and p95 latency per interval. Pure: writes through a Printer.
 */
import { parseSince, type MetricsHistory } from '../../api/usage.js';
import type { Printer } from '../output.js';
import { renderBarChart } from './chart.js';
import { datesNeeded, formatMs, formatRate, formatSeconds, formatTime } from './format.js';

/** The most intervals a chart shows: 60 whole steps of the span and the current one. */
export const CHART_POINTS = 61;

export function renderMetricsHistory(p: Printer, h: MetricsHistory, sinceText: string): void {
  const t = h.totals;
  // `--since 90m` reads as every duration does: `1 h 30 min`
  const spanMs = parseSince(sinceText);
  const since = (spanMs === undefined ? undefined : formatSeconds(spanMs / 1000)) ?? sinceText;
  const step = formatSeconds(h.step_seconds) ?? '?';
  p.line(p.style.bold(`${h.deployment_id}, last ${since} (${step} per point)`));
  const ms = (value: number | null) => formatMs(value) ?? '–';
  const rate = (value: number | null) => (value === null ? '' : ` (${formatRate(value)})`);
  const byType = Object.entries(t.errors_by_type)
    .map(([type, n]) => `${type} ${n}`)
    .join(', ');
  p.fields([
    ['requests', t.requests],
    ['errors', `${t.errors}${rate(t.error_rate)}${byType === '' ? '' : `: ${byType}`}`],
    ['latency', `p50 ${ms(t.latency_ms.p50)}   p95 ${ms(t.latency_ms.p95)}   p99 ${ms(t.latency_ms.p99)}`],
    ['tool calls', t.tool_calls],
    ['tool errors', `${t.tool_errors}${rate(t.tool_error_rate)}`],
    ['bytes in', t.bytes_in],
  ]);
  if (t.requests === 0) {
    p.next(`no requests in the last ${since}; send some to the deployment’s URL + /mcp, or look further back`);
    return;
  }
  const points = h.points;
  // the span's ends as every time is shown: with their dates when the span reaches another day
  const date = datesNeeded([points[0]!.t, h.until]);
  const span = { from: formatTime(points[0]!.t, { date }), to: formatTime(h.until, { date }) };
  const charts: Array<[string, Array<number | null>, (n: number) => string]> = [
    ['requests      ', points.map((x) => x.requests), (n) => String(Math.round(n))],
    ['error rate (%)', points.map((x) => (x.requests === 0 ? null : (100 * x.errors) / x.requests)), round1],
    ['p95 latency ms', points.map((x) => x.p95_ms), round1],
  ];
  for (const [title, values, format] of charts) {
    p.line();
    for (const line of renderBarChart(values, { title, format, barWidth: 1, ...span })) p.line(line);
  }
}

/** One line of `key=value` pairs for scripts (`--quiet`); `-` where there is no value. */
export function metricsHistoryLine(h: MetricsHistory): string {
  const value = (v: number | null) => (v === null ? '-' : String(v));
  const t = h.totals;
  return [
    `requests=${t.requests}`,
    `errors=${t.errors}`,
    `error_rate=${value(t.error_rate)}`,
    `p50_ms=${value(t.latency_ms.p50)}`,
    `p95_ms=${value(t.latency_ms.p95)}`,
    `p99_ms=${value(t.latency_ms.p99)}`,
    `tool_calls=${t.tool_calls}`,
    `tool_errors=${t.tool_errors}`,
  ].join(' ');
}

function round1(n: number): string {
  return String(Math.round(n * 10) / 10);
}
