/**
 * `mcpctl metrics [deployment] [--window SECONDS]`: response-time percentiles, throughput,
 * tool-call error rate and calls per tool over the window, with small charts of latency and
 * throughput from the series. `--since 24h|7d…` looks back over the engine's history instead
 * (render/metrics-history.ts). `--json` prints the metrics document.
 */
import type { Metrics } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import type { Printer } from '../output.js';
import { renderBarChart } from '../render/chart.js';
import { CHART_POINTS, metricsHistoryLine, renderMetricsHistory } from '../render/metrics-history.js';
import { datesNeeded, formatMs, formatRate, formatSeconds, formatTime } from '../render/format.js';
import { deploymentIdOf } from '../steps/deployment-target.js';
import type { MetricsOptions } from '../specs/service.js';

export async function metricsCommand(
  ctx: CommandContext,
  target: string | undefined,
  options: MetricsOptions,
): Promise<void> {
  const deploymentId = await deploymentIdOf(ctx, target, { file: options.file, command: 'metrics' });
  if (options.since !== undefined) {
    const since = options.since;
    // the full resolution for machines; for the charts, a step that fits their width
    const points = ctx.globals.json ? undefined : CHART_POINTS;
    const history = await withApi(ctx, (client) => client.metricsHistory(deploymentId, since, points));
    ctx.out.result(history, (p) => renderMetricsHistory(p, history, since), {
      quiet: () => metricsHistoryLine(history),
    });
    return;
  }
  const metrics = await withApi(ctx, (client) => client.metrics(deploymentId, options.window));
  ctx.out.result(metrics, (p) => renderMetrics(p, metrics), { quiet: () => metricsLine(metrics) });
}

/** The figures on one line of `key=value` pairs, for scripts (`--quiet`); `-` where there is no value. */
export function metricsLine(m: Metrics): string {
  const value = (v: number | null) => (v === null ? '-' : String(v));
  return [
    `requests=${m.requests}`,
    `rps=${m.throughput_rps}`,
    `p50_ms=${value(m.latency_ms.p50)}`,
    `p95_ms=${value(m.latency_ms.p95)}`,
    `p99_ms=${value(m.latency_ms.p99)}`,
    `tool_calls=${m.tool_calls}`,
    `tool_errors=${m.tool_errors}`,
    `tool_error_rate=${value(m.tool_error_rate)}`,
  ].join(' ');
}

export function renderMetrics(p: Printer, m: Metrics): void {
  const window = formatSeconds(m.window_seconds) ?? '?';
  p.line(p.style.bold(`${m.deployment_id}, last ${window}`));
  const ms = (value: number | null) => formatMs(value) ?? '–';
  p.fields([
    ['requests', `${m.requests} (${m.throughput_rps} per second)`],
    ['latency', `p50 ${ms(m.latency_ms.p50)}   p95 ${ms(m.latency_ms.p95)}   p99 ${ms(m.latency_ms.p99)}`],
    ['tool calls', m.tool_calls],
    ['tool errors', m.tool_error_rate === null ? m.tool_errors : `${m.tool_errors} (${formatRate(m.tool_error_rate)})`],
  ]);
  const tools = Object.entries(m.per_tool).sort(([a, x], [b, y]) => y.calls - x.calls || a.localeCompare(b));
  if (tools.length > 0) {
    p.line();
    p.table(
      ['TOOL', 'CALLS', 'ERRORS', 'ERROR RATE'],
      tools.map(([name, t]) => [name, t.calls, t.errors, t.calls === 0 ? '–' : errorRate(p, t.errors / t.calls)]),
    );
  }
  const series = m.series ?? [];
  if (series.length > 0 && m.requests > 0) {
    const step = m.window_seconds / series.length;
    const ends = [series[0]!.t, new Date(Date.parse(series.at(-1)!.t) + step * 1000).toISOString()];
    const date = datesNeeded(ends);
    const span = { from: formatTime(ends[0]!, { date }), to: formatTime(ends[1]!, { date }) };
    p.line();
    for (const line of renderBarChart(
      series.map((point) => point.p95_ms),
      { title: 'p95 latency (ms)', ...span },
    ))
      p.line(line);
    p.line();
    const rates = series.map((point) => point.requests / step);
    for (const line of renderBarChart(rates, {
      title: 'requests/s      ',
      format: (n) => String(Math.round(n * 100) / 100),
      ...span,
    }))
      p.line(line);
  }
  if (m.requests === 0)
    p.next('no requests in this window; send some to the deployment’s URL + /mcp, or widen --window');
}

function errorRate(p: Printer, rate: number): string {
  const text = formatRate(rate);
  return rate === 0 ? text : rate < 0.1 ? p.style.yellow(text) : p.style.red(text);
}
