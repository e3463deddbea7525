/**
 * A deployment's history as three uPlot charts: latency percentiles, throughput and error rate, over
 * the last hour, day or week. Each chart's container has the class `chart` and, once uPlot has drawn
 * it, `data-drawn="true"`.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import type { MetricsHistory } from '../api-types.js';
import { getJson } from '../api.js';
import { ErrorBox, Loading, Section } from '../components/common.js';
import { formatCount, formatMs, formatRate } from '../format.js';
import { usePolling } from '../hooks.js';
import { chartData, hasValues, isolatedPoints, SPANS, type Columns, type Span } from '../metrics-data.js';

const REFRESH_MS: Record<Span, number> = { '1h': 10_000, '24h': 60_000, '7d': 300_000 };
const CHART_HEIGHT = 180;

export function Charts({ id }: { id: string }) {
  const [span, setSpan] = useState<Span>('1h');
  const { data, error } = usePolling(
    (signal) =>
      getJson<MetricsHistory>(`/v1/deploy/${encodeURIComponent(id)}/metrics?since=${span}&points=360`, { signal }),
    `${id} ${span}`,
    REFRESH_MS[span],
  );
  const spans = (
    <div class="segmented" role="group" aria-label="Chart period">
      {SPANS.map((s) => (
        <button key={s} type="button" class="small" aria-pressed={s === span} onClick={() => setSpan(s)}>
          {s}
        </button>
      ))}
    </div>
  );
  if (data === undefined) {
    return (
      <Section title="Requests" actions={spans}>
        {error === undefined ? <Loading what="metrics" /> : <ErrorBox error={error} />}
      </Section>
    );
  }
  const columns = chartData(data);
  const totals = data.totals;
  return (
    <Section title="Requests" actions={spans}>
      <p class="totals">
        {formatCount(totals.requests)} requests, {formatRate(totals.error_rate)} failed; latency p50{' '}
        {formatMs(totals.latency_ms?.p50)}, p95 {formatMs(totals.latency_ms?.p95)}, p99{' '}
        {formatMs(totals.latency_ms?.p99)}
      </p>
      {error === undefined ? null : <ErrorBox error={error} title="Could not refresh" />}
      <div class="charts">
        <Chart
          title="Latency (ms)"
          columns={columns.latency}
          series={[
            { label: 'p50', color: '--chart-1' },
            { label: 'p95', color: '--chart-2' },
            { label: 'p99', color: '--chart-3' },
          ]}
          format={(value) => formatMs(value)}
        />
        <Chart
          title="Throughput (requests/s)"
          columns={columns.throughput}
          series={[{ label: 'requests/s', color: '--chart-1' }]}
          format={(value) => (value === null ? '—' : `${Number(value.toFixed(3))}/s`)}
        />
        <Chart
          title="Error rate (%)"
          columns={columns.errorRate}
          series={[{ label: 'failed', color: '--chart-bad' }]}
          format={(value) => (value === null ? '—' : `${Number(value.toFixed(1))}%`)}
        />
      </div>
    </Section>
  );
}

interface ChartProps {
  title: string;
  columns: Columns;
  series: { label: string; color: string }[];
  format: (value: number | null) => string;
}

function cssColor(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

/**
 * uPlot is half of the page's code and only this page draws with it: it is a chunk of its own,
 * fetched when the first chart mounts, so the list of deployments, the first view, does not wait
 * for it to load and compile.
 */
let uPlotModule: Promise<typeof uPlot> | undefined;
function loadUplot(): Promise<typeof uPlot> {
  uPlotModule ??= import('uplot').then((module) => module.default);
  return uPlotModule;
}

function Chart({ title, columns, series, format }: ChartProps) {
  const ref = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  // what the chart draws when uPlot arrives, if new data came while it loaded
  const latest = useRef(columns);
  latest.current = columns;
  const [failed, setFailed] = useState(false);
  // the options are made once per chart; new data goes to setData
  useEffect(() => {
    const element = ref.current;
    if (element === null) return undefined;
    let gone = false;
    let resize: ResizeObserver | undefined;
    loadUplot().then(
      (UPlot) => {
        if (gone) return;
        plot.current = new UPlot(chartOptions(element, series, format), latest.current, element);
        resize = new ResizeObserver(() =>
          plot.current?.setSize({ width: Math.max(element.clientWidth, 200), height: CHART_HEIGHT }),
        );
        resize.observe(element);
      },
      () => setFailed(true),
    );
    return () => {
      gone = true;
      resize?.disconnect();
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, []);
  useEffect(() => {
    plot.current?.setData(columns);
  }, [columns]);
  return (
    <figure class="chart-figure">
      <figcaption>{title}</figcaption>
      <div ref={ref} class="chart" role="img" aria-label={`${title} chart`} />
      {failed ? (
        <p class="error" role="alert">
          The chart could not be loaded: reload the page.
        </p>
      ) : hasValues(columns) ? null : (
        <p class="muted">No requests in this period.</p>
      )}
    </figure>
  );
}

function chartOptions(
  element: HTMLDivElement,
  series: ChartProps['series'],
  format: ChartProps['format'],
): uPlot.Options {
  const axis = {
    stroke: cssColor('--muted'),
    grid: { stroke: cssColor('--grid') },
    ticks: { stroke: cssColor('--grid') },
  };
  return {
    width: Math.max(element.clientWidth, 200),
    height: CHART_HEIGHT,
    series: [
      {},
      ...series.map((s) => ({
        label: s.label,
        stroke: cssColor(s.color),
        width: 1.5,
        spanGaps: false,
        points: {
          size: 6,
          fill: cssColor(s.color),
          // all points where uPlot finds room for them, else only those without a line through them
          filter: (u: uPlot, index: number, show: boolean) => (show ? null : isolatedPoints(u.data[index] ?? [])),
        },
        value: (_u: uPlot, value: number | null) => format(value),
      })),
    ],
    axes: [axis, { ...axis, size: 60, values: (_u: uPlot, values: number[]) => values.map((v) => format(v)) }],
    // from zero, so a small change does not look like a cliff
    scales: { y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    cursor: { drag: { x: false, y: false } },
    hooks: { draw: [() => element.setAttribute('data-drawn', 'true')] },
  };
}
