/**
 * The one form of each kind of time the CLI prints for people: durations, ages and timestamps;
 * and a look through the CLI's sources for a duration or a time written another way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  datesNeeded,
  formatAge,
  formatAgo,
  formatMs,
  formatSeconds,
  formatTime,
  isToday,
} from '../../../src/cli/render/format.js';
import { formatDuration, formatMs as pageMs, formatAge as pageAge } from '../../../src/ui/format.js';
import { ROOT } from '../../support/app.js';

const DURATIONS: Array<[number, string]> = [
  [0, '0 s'],
  [0.001, '< 0.01 s'],
  [0.41, '0.41 s'],
  [9.999, '10 s'],
  [12.4, '12 s'],
  [59.6, '1 min'],
  [60, '1 min'],
  [125, '2 min 5 s'],
  [761, '12 min 41 s'],
  [3600, '1 h'],
  [3 * 3600 + 4 * 60 + 9, '3 h 4 min'],
  [2 * 86_400 + 3 * 3600, '2 d 3 h'],
];

describe('durations', () => {
  it.each(DURATIONS)('%s s reads %s', (seconds, expected) => {
    expect(formatSeconds(seconds)).toBe(expected);
  });

  it('say nothing without a number', () => {
    expect(formatSeconds(undefined)).toBeUndefined();
    expect(formatSeconds(null)).toBeUndefined();
    expect(formatSeconds(Number.NaN)).toBeUndefined();
  });

  it.each([
    [0.42, '0.42 ms'],
    [12.34, '12.3 ms'],
    [340.2, '340 ms'],
    [1250, '1.25 s'],
    [65_000, '1 min 5 s'],
  ])('milliseconds: %s reads %s', (ms, expected) => {
    expect(formatMs(ms)).toBe(expected);
  });

  it('read the same on the dashboard', () => {
    for (const [seconds, expected] of DURATIONS) expect(formatDuration(seconds)).toBe(expected);
    for (const ms of [0.42, 12.34, 340.2, 1250, 65_000]) expect(pageMs(ms)).toBe(formatMs(ms));
  });
});

describe('ages', () => {
  const now = Date.parse('2026-03-10T12:00:00.000Z');
  it.each([
    ['2026-03-10T12:00:00.000Z', '0 s'],
    ['2026-03-10T11:59:20.400Z', '39 s'],
    ['2026-03-10T11:55:00.000Z', '5 min'],
    ['2026-03-10T09:00:00.000Z', '3 h'],
    ['2026-03-08T11:00:00.000Z', '2 d'],
    // a clock a little ahead of this one's is not the future
    ['2026-03-10T12:00:03.000Z', '0 s'],
  ])('%s is %s old', (iso, expected) => {
    expect(formatAge(iso, now)).toBe(expected);
    expect(formatAgo(iso, now)).toBe(`${expected} ago`);
    expect(pageAge(iso, now)).toBe(`${expected} ago`);
  });

  it('say nothing without a time', () => {
    expect(formatAge(undefined, now)).toBeUndefined();
    expect(formatAgo('not a time', now)).toBeUndefined();
  });
});

describe('timestamps', () => {
  // local dates, as the CLI shows local time wherever the tests run
  const at = (day: number, h: number, m: number, s: number, ms = 0) =>
    new Date(2026, 2, day, h, m, s, ms).toISOString();
  const now = new Date(2026, 2, 10, 12, 0, 0).getTime();

  it('show the time of day, the date too when not today', () => {
    expect(formatTime(at(10, 9, 5, 7), { now })).toBe('09:05:07');
    expect(formatTime(at(9, 23, 59, 58), { now })).toBe('2026-03-09 23:59:58');
  });

  it('show the date or not as asked, and milliseconds for log lines', () => {
    expect(formatTime(at(10, 9, 5, 7), { now, date: true })).toBe('2026-03-10 09:05:07');
    expect(formatTime(at(9, 9, 5, 7), { now, date: false })).toBe('09:05:07');
    expect(formatTime(at(10, 9, 5, 7, 40), { now, ms: true })).toBe('09:05:07.040');
  });

  it('leave what is not a time as it is', () => {
    expect(formatTime('soon')).toBe('soon');
    expect(isToday('soon', now)).toBe(true);
  });

  it('in a list, all carry their dates when any is not from today', () => {
    expect(datesNeeded([], now)).toBe(false);
    expect(datesNeeded([at(10, 0, 0, 0), at(10, 11, 0, 0)], now)).toBe(false);
    expect(datesNeeded([at(9, 23, 0, 0), at(10, 1, 0, 0)], now)).toBe(true);
  });
});

describe('the CLI’s sources', () => {
  const cli = join(ROOT, 'src', 'cli');
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    );

  it('write durations and times for people only through render/format.ts', () => {
    // a number followed by a unit in a template (`${n} s`, `${n}ms`, `${m}m ${s}s`), an ISO time cut
    // into pieces, or the clock read from a Date: each a second way of saying a time
    const stray = [
      /\}\s?(?:ms|s|min|h|d)\b[`\s),.:;]/,
      /\.slice\((?:0, ?(?:10|16|19|23)|11(?:, ?\d+)?)\)/,
      /\.to(?:Locale\w*|Time)String\(/,
      /\.get(?:Hours|Minutes|Seconds)\(/,
    ];
    const found: string[] = [];
    for (const file of files(cli)) {
      const name = relative(ROOT, file);
      // the module itself, and the start-up code cache, whose timings are debug lines for the CLI's own build
      if (name.endsWith(join('render', 'format.ts')) || name.endsWith('compile-cache.ts')) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          // debug lines keep their raw numbers; usage is counted per UTC day and says so
          if (/debug\??\.?\(|ctx\.debug|\/\/|^\s*\*|UTC/.test(line)) return;
          if (stray.some((pattern) => pattern.test(line))) found.push(`${name}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});
