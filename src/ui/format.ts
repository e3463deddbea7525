/** How the page writes numbers and times. Pure: the tests run it in Node. */

/** Seconds for people: `0.41 s`, `12 s`, `2 min 5 s`, `3 h 4 min`, `2 d 5 h`. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '—';
  if (seconds < 10) return `${Number(seconds.toFixed(2))} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const whole = Math.round(seconds);
  const [big, bigUnit, small, smallUnit] =
    whole < 3600
      ? [Math.floor(whole / 60), 'min', whole % 60, 's']
      : whole < 86_400
        ? [Math.floor(whole / 3600), 'h', Math.floor((whole % 3600) / 60), 'min']
        : [Math.floor(whole / 86_400), 'd', Math.floor((whole % 86_400) / 3600), 'h'];
  return small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
}

/** How long ago an ISO time was, largest unit only: `just now`, `40 s ago`, `5 min ago`, `3 h ago`, `2 d ago`. */
export function formatAge(iso: string | null | undefined, now: number): string {
  const then = iso ? Date.parse(iso) : Number.NaN;
  if (Number.isNaN(then)) return '—';
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  if (seconds < 5) return 'just now';
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

/** Milliseconds: `0.42 ms`, `12.3 ms`, `340 ms`, `1.25 s`. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1) return `${Number(ms.toFixed(2))} ms`;
  if (ms < 100) return `${Number(ms.toFixed(1))} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${Number((ms / 1000).toFixed(2))} s`;
}

/** A count with thousands grouped: `1,520`. */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString('en-US');
}

/** A timestamp as local date and time to the second, `2026-03-10 11:58:04`; the ISO text when it is not a time. */
export function formatTime(iso: string, timeOnly = false): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number): string => String(n).padStart(2, '0');
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  if (timeOnly) return time;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time}`;
}

/** `1 instance`, `2 instances` */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}
