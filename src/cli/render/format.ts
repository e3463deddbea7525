/** Small formatting helpers shared by the renderers. Pure. */
import { problemText, type Problem } from '../../shared/errors.js';

/** `file:line:column  path  message`, skipping what the problem does not say (a warning on stderr). */
export function formatProblem(problem: Problem): string {
  return [problem.where, problem.path, problem.message].filter((part) => part !== undefined && part !== '').join('  ');
}

/** A problem as an annotation's text: its field path and message (the annotation carries the place). */
export function annotationText(problem: Problem): string {
  return problemText(problem);
}

/**
 * Seconds for people, in one form wherever the CLI prints a duration: `0.41 s`, `12 s`, `2 min 5 s`,
 * `3 h 4 min`, `2 d 3 h` (two units at most, the second left out when it is 0); undefined without a number.
 */
export function formatSeconds(seconds: number | null | undefined): string | undefined {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return undefined;
  const positive = Math.max(0, seconds);
  // what rounds to 0.00 but took time
  if (positive > 0 && positive < 0.005) return '< 0.01 s';
  if (positive < 9.995) return `${Number(positive.toFixed(2))} s`;
  const whole = Math.round(positive);
  if (whole < 60) return `${whole} s`;
  const [big, bigUnit, small, smallUnit] =
    whole < 3600
      ? [Math.floor(whole / 60), 'min', whole % 60, 's']
      : whole < 86_400
        ? [Math.floor(whole / 3600), 'h', Math.floor((whole % 3600) / 60), 'min']
        : [Math.floor(whole / 86_400), 'd', Math.floor((whole % 86_400) / 3600), 'h'];
  return small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
}

/** Milliseconds (latencies, request times): `0.42 ms`, `12.3 ms`, `340 ms`, then seconds as formatSeconds says them. */
export function formatMs(ms: number | null | undefined): string | undefined {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return undefined;
  const positive = Math.max(0, ms);
  if (positive < 1) return `${Number(positive.toFixed(2))} ms`;
  if (positive < 99.95) return `${Number(positive.toFixed(1))} ms`;
  if (positive < 999.5) return `${Math.round(positive)} ms`;
  return formatSeconds(positive / 1000);
}

/** `1 tool`, `2 tools` */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}

/** A count with its thousands grouped, the same on every machine: 12,345 */
export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** A success rate as a percentage: 0.875 → 88% */
export function formatRate(rate: number): string {
  return `${Math.round(rate * 100)}%`;
}

/** Quotes an argument for a POSIX shell when it needs it, so a suggested command can be pasted. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A list for a field: `a, b` or `none`. */
export function formatList(items: readonly string[]): string {
  return items.length === 0 ? 'none' : items.join(', ');
}

/**
 * How long ago an ISO time was, in its largest unit: `40 s`, `12 min`, `3 h`, `2 d` (for `12 min old`);
 * undefined without a time. A time a little ahead of this clock counts as now.
 */
export function formatAge(iso: string | null | undefined, now: number = Date.now()): string | undefined {
  const time = iso === undefined || iso === null ? Number.NaN : Date.parse(iso);
  if (Number.isNaN(time)) return undefined;
  const seconds = Math.max(0, Math.floor((now - time) / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/** `12 min ago`: formatAge for a list's column or a sentence; undefined without a time. */
export function formatAgo(iso: string | null | undefined, now: number = Date.now()): string | undefined {
  const age = formatAge(iso, now);
  return age === undefined ? undefined : `${age} ago`;
}

export interface TimeFormat {
  /** show the date: always (true), never (false), or when the time is not today (left out) */
  date?: boolean | undefined;
  /** milliseconds after the seconds (`12:03:04.120`), for log lines that share a second */
  ms?: boolean | undefined;
  /** what "today" is measured from */
  now?: number | undefined;
}

/**
 * A timestamp for people, in local time: `12:03:04`, or `2026-01-31 12:03:04` when not today (or
 * when `date` says). The text as given when it is not a time. `--json` keeps the ISO time instead.
 */
export function formatTime(iso: string, format: TimeFormat = {}): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  const clock = format.ms === true ? `${time}.${String(date.getMilliseconds()).padStart(3, '0')}` : time;
  const withDate = format.date ?? !isToday(iso, format.now);
  return withDate ? `${localDay(date)} ${clock}` : clock;
}

/**
 * Whether times listed together need their dates: when any of them is not today, which also covers
 * a list that spans days. Then every row shows its date, so the column keeps one form.
 */
export function datesNeeded(isos: readonly string[], now: number = Date.now()): boolean {
  return isos.some((iso) => !isToday(iso, now));
}

/** Whether an ISO time falls on the local day of `now`; a text that is not a time counts as today. */
export function isToday(iso: string, now: number = Date.now()): boolean {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) || localDay(date) === localDay(new Date(now));
}

function localDay(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
