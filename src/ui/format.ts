/**
 * How the page writes numbers and times. Pure: the tests run it in Node. The page cannot import the
 * CLI's code, so these follow the same rules as src/cli/render/format.ts, each form the same as the
 * terminal's; `—` stands where the CLI leaves a field out.
 */

/** Seconds for people: `0.41 s`, `12 s`, `2 min 5 s`, `3 h 4 min`, `2 d 5 h`. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '—';
  // what rounds to 0.00 but took time
  if (seconds > 0 && seconds < 0.005) return '< 0.01 s';
  if (seconds < 9.995) return `${Number(seconds.toFixed(2))} s`;
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  const [big, bigUnit, small, smallUnit] =
    whole < 3600
      ? [Math.floor(whole / 60), 'min', whole % 60, 's']
      : whole < 86_400
        ? [Math.floor(whole / 3600), 'h', Math.floor((whole % 3600) / 60), 'min']
        : [Math.floor(whole / 86_400), 'd', Math.floor((whole % 86_400) / 3600), 'h'];
  return small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
}

/** How long ago an ISO time was, largest unit only: `40 s ago`, `5 min ago`, `3 h ago`, `2 d ago`. */
export function formatAge(iso: string | null | undefined, now: number): string {
  const then = iso ? Date.parse(iso) : Number.NaN;
  if (Number.isNaN(then)) return '—';
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** A ratio as a percentage: 0.875 → `88%`; below 1% with one decimal (`0.4%`); none → `—`. */
export function formatRate(rate: number | null | undefined): string {
  if (rate === null || rate === undefined || !Number.isFinite(rate)) return '—';
  const percent = rate * 100;
  if (percent > 0 && percent < 1) return `${Number(percent.toFixed(1))}%`;
  return `${Math.round(percent)}%`;
}

/** Milliseconds: `0.42 ms`, `12.3 ms`, `340 ms`, then seconds as formatDuration says them (`1.25 s`). */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const positive = Math.max(0, ms);
  if (positive < 1) return `${Number(positive.toFixed(2))} ms`;
  if (positive < 99.95) return `${Number(positive.toFixed(1))} ms`;
  if (positive < 999.5) return `${Math.round(positive)} ms`;
  return formatDuration(positive / 1000);
}

/** A count with thousands grouped: `1,520`. */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString('en-US');
}

/**
 * A timestamp in local time to the second: `11:58:04`, with the date first (`2026-03-10 11:58:04`)
 * when it is not today or `date` says so; the ISO text when it is not a time.
 */
export function formatTime(iso: string, format: { date?: boolean; now?: number } = {}): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  const withDate = format.date ?? localDay(date) !== localDay(new Date(format.now ?? Date.now()));
  return withDate ? `${localDay(date)} ${time}` : time;
}

function localDay(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** `1 instance`, `2 instances` */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}
