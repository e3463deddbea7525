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

/** Seconds for people: 0.41 s, 12 s, 2 min 5 s. */
export function formatSeconds(seconds: number | null | undefined): string | undefined {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return undefined;
  // what rounds to 0.00 but took time
  if (seconds > 0 && seconds < 0.005) return '< 0.01 s';
  if (seconds < 10) return `${Number(seconds.toFixed(2))} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds - minutes * 60);
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

/** `1 tool`, `2 tools` */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
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

/** How long ago an ISO time was, in its largest unit: `40 s`, `12 min`, `3 h`, `2 d`; undefined without a time. */
export function formatAge(iso: string | undefined, now: number = Date.now()): string | undefined {
  const time = iso === undefined ? Number.NaN : Date.parse(iso);
  if (Number.isNaN(time)) return undefined;
  const seconds = Math.max(0, Math.round((now - time) / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}
