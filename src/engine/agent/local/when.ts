/**
 * Days a message means in words, relative to now: "today", "tomorrow", "the day after
 * tomorrow", "this weekend", "next week", "on Friday", "in 3 days". Pure: now is given.
 */
import { findNumbers } from './text.js';

export interface TimeMention {
  start: number;
  end: number;
  /** the first and last day meant, in days from today (0 is today) */
  first: number;
  last: number;
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

type Reader = (match: RegExpExecArray, weekday: number) => { first: number; last: number } | undefined;

/** Longer phrases first: "the day after tomorrow" before "tomorrow". */
const PHRASES: ReadonlyArray<readonly [RegExp, Reader]> = [
  [/\b(?:the\s+)?day\s+after\s+tomorrow\b/gi, () => ({ first: 2, last: 2 })],
  [/\btomorrow\b/gi, () => ({ first: 1, last: 1 })],
  [/\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b/gi, () => ({ first: 0, last: 0 })],
  [/\byesterday\b/gi, () => ({ first: -1, last: -1 })],
  [/\bnext\s+weekend\b/gi, (_, weekday) => weekend(weekday, weekday === 0 || weekday === 6 ? 7 : 0)],
  [/\b(?:(?:this|the|coming)\s+)?weekend\b/gi, (_, weekday) => weekend(weekday, 0)],
  [/\bnext\s+week\b/gi, (_, weekday) => ({ first: 8 - (weekday || 7), last: 14 - (weekday || 7) })],
  [/\b(?:this|the\s+rest\s+of\s+the)\s+week\b/gi, (_, weekday) => ({ first: 0, last: 7 - (weekday || 7) })],
  [
    /\bin\s+(\S+(?:[\s-]\S+)?)\s+days?\b/gi,
    (match) => {
      const days = findNumbers(match[1]!)[0]?.value;
      return days === undefined || !Number.isInteger(days) ? undefined : { first: days, last: days };
    },
  ],
  [
    new RegExp(String.raw`\b(?:(next|this|on|coming)\s+)?(${WEEKDAYS.join('|')})s?\b`, 'gi'),
    (match, weekday) => {
      let ahead = (WEEKDAYS.indexOf(match[2]!.toLowerCase()) - weekday + 7) % 7;
      if (ahead === 0 && match[1]?.toLowerCase() === 'next') ahead = 7;
      return { first: ahead, last: ahead };
    },
  ],
];

/** The weekend's Saturday and Sunday from a day of the week (0 is Sunday); on Sunday, today alone. */
function weekend(weekday: number, extra: number): { first: number; last: number } {
  if (weekday === 0) return { first: extra === 0 ? 0 : 6, last: extra };
  return { first: 6 - weekday + extra, last: 7 - weekday + extra };
}

const TIME_WORDS = new Set([
  ...WEEKDAYS,
  ...WEEKDAYS.map((day) => `${day}s`),
  'today',
  'tonight',
  'tomorrow',
  'yesterday',
  'weekend',
  'week',
  'now',
  'morning',
  'afternoon',
  'evening',
]);

/** Whether a word only says when ("tomorrow", "weekend"): never a name or a text to pass on. */
export function isTimeWord(word: string): boolean {
  return TIME_WORDS.has(word.toLowerCase());
}

/** Times the text mentions, in order, none overlapping. */
export function findTimes(text: string, now: Date): TimeMention[] {
  const weekday = now.getDay();
  const found: TimeMention[] = [];
  for (const [pattern, read] of PHRASES) {
    for (const match of text.matchAll(pattern)) {
      const start = match.index;
      const end = start + match[0].length;
      if (found.some((f) => start < f.end && end > f.start)) continue;
      const days = read(match, weekday);
      if (days !== undefined) found.push({ start, end, ...days });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** The date (YYYY-MM-DD, in the local time zone) a number of days from now. */
export function dateFrom(now: Date, days: number): string {
  const day = new Date(now.getFullYear(), now.getMonth(), now.getDate() + days, 12);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`;
}
