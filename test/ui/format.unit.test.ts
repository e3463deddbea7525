import { describe, expect, it } from 'vitest';
import {
  formatAge,
  formatCount,
  formatDuration,
  formatMs,
  formatRate,
  formatTime,
  plural,
} from '../../src/ui/format.js';

describe('the dashboard formats', () => {
  it.each([
    [0.001, '< 0.01 s'],
    [0.41, '0.41 s'],
    [9.999, '10 s'],
    [59.6, '1 min'],
    [12.4, '12 s'],
    [60, '1 min'],
    [125, '2 min 5 s'],
    [3600, '1 h'],
    [3 * 3600 + 4 * 60 + 9, '3 h 4 min'],
    [2 * 86_400 + 5 * 3600, '2 d 5 h'],
    [null, '—'],
    [-1, '—'],
    [Number.NaN, '—'],
  ])('durations: %s s reads %s', (seconds, expected) => {
    expect(formatDuration(seconds)).toBe(expected);
  });

  it.each([
    ['2026-03-10T12:00:00.000Z', '0 s ago'],
    ['2026-03-10T11:59:20.000Z', '40 s ago'],
    ['2026-03-10T11:55:00.000Z', '5 min ago'],
    ['2026-03-10T09:00:00.000Z', '3 h ago'],
    ['2026-03-08T11:00:00.000Z', '2 d ago'],
    // a clock a little ahead of the page's is not the future
    ['2026-03-10T12:00:03.000Z', '0 s ago'],
    ['not a time', '—'],
    [undefined, '—'],
  ])('ages: %s reads %s', (iso, expected) => {
    expect(formatAge(iso, Date.parse('2026-03-10T12:00:00.000Z'))).toBe(expected);
  });

  it.each([
    [0.875, '88%'],
    [1, '100%'],
    [0, '0%'],
    [0.004, '0.4%'],
    [null, '—'],
  ])('rates: %s reads %s', (rate, expected) => {
    expect(formatRate(rate)).toBe(expected);
  });

  it.each([
    [0.42, '0.42 ms'],
    [12.34, '12.3 ms'],
    [340.2, '340 ms'],
    [1250, '1.25 s'],
    [65_000, '1 min 5 s'],
    [null, '—'],
  ])('milliseconds: %s reads %s', (ms, expected) => {
    expect(formatMs(ms)).toBe(expected);
  });

  it('times: local, the date only when not today or when asked', () => {
    const noon = new Date(2026, 2, 10, 12, 0, 0).getTime();
    const at = (day: number, h: number, m: number, s: number) => new Date(2026, 2, day, h, m, s).toISOString();
    expect(formatTime(at(10, 11, 58, 4), { now: noon })).toBe('11:58:04');
    expect(formatTime(at(9, 11, 58, 4), { now: noon })).toBe('2026-03-09 11:58:04');
    expect(formatTime(at(10, 11, 58, 4), { date: true, now: noon })).toBe('2026-03-10 11:58:04');
    expect(formatTime(at(9, 11, 58, 4), { date: false, now: noon })).toBe('11:58:04');
    expect(formatTime('not a time')).toBe('not a time');
  });

  it('counts and plurals', () => {
    expect(formatCount(1520)).toBe('1,520');
    expect(plural(1, 'instance')).toBe('1 instance');
    expect(plural(2, 'instance')).toBe('2 instances');
  });
});
