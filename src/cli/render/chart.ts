/**
 * A small terminal bar chart for a metric series: a few rows of block characters, the largest
 * value on the top row's label, and the time span under it. Pure: returns lines.
 *
 *   p95 latency (ms)  21.4 ┤      ▂█▅
 *                          │  ▁▃▄▆████▇
 *                        0 └──────────────────
 *                           22:40:03   22:45:03
 */

const BLOCKS = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

export interface ChartOptions {
  title: string;
  /** rows of bars; default 3 */
  height?: number;
  /** characters per point; default 2 */
  barWidth?: number;
  /** labels under the first and the last point */
  from?: string;
  to?: string;
  /** how the largest value is written, such as 21.4 */
  format?: (value: number) => string;
}

/** The chart's lines; a series with no values at all says so on one line. */
export function renderBarChart(values: ReadonlyArray<number | null>, options: ChartOptions): string[] {
  const height = options.height ?? 3;
  const width = options.barWidth ?? 2;
  const format = options.format ?? ((n: number) => String(Math.round(n * 10) / 10));
  const present = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (present.length === 0) return [`${options.title}  no data in this window`];
  const max = Math.max(...present);
  const topLabel = format(max);
  const gutter = Math.max(topLabel.length, 1);
  const indent = ' '.repeat(options.title.length + 2);
  const lines: string[] = [];
  for (let row = height - 1; row >= 0; row -= 1) {
    const bars = values
      .map((value) => {
        if (value === null || !Number.isFinite(value) || max <= 0) return ' '.repeat(width);
        // The value in eighths of a row; a non-zero value shows at least a sliver.
        const eighths = Math.max(value > 0 ? 1 : 0, Math.round((value / max) * height * 8));
        const fill = Math.min(8, Math.max(0, eighths - row * 8));
        return BLOCKS[fill]!.repeat(width);
      })
      .join('')
      .trimEnd();
    const head =
      row === height - 1 ? `${options.title}  ${topLabel.padStart(gutter)} ┤` : `${indent}${' '.repeat(gutter)} │`;
    lines.push(`${head}${bars}`);
  }
  lines.push(`${indent}${'0'.padStart(gutter)} └${'─'.repeat(values.length * width)}`);
  if (options.from !== undefined || options.to !== undefined) {
    const from = options.from ?? '';
    const to = options.to ?? '';
    const span = values.length * width;
    const gap = Math.max(1, span - from.length - to.length);
    lines.push(`${indent}${' '.repeat(gutter)}  ${from}${' '.repeat(gap)}${to}`.trimEnd());
  }
  return lines;
}
