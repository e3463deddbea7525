import { describe, expect, it } from 'vitest';
import { compileLinear, linearPatternProblem } from '../../src/shared/linear-regexp.js';

describe('definition patterns on a linear-time engine', () => {
  it('matches a catastrophic-backtracking pattern against a crafted input on RE2, not RegExp', () => {
    const evil = compileLinear('^(a+)+$', 'u');
    expect(evil.engine).toBe('linear');
    // `/^(a+)+$/.test('a'.repeat(5000) + '!')` would not finish in the test's time-out
    expect(evil.test(`${'a'.repeat(5000)}!`)).toBe(false);
    expect(evil.test('aaaa')).toBe(true);
  });

  it('keeps JSON Schema semantics: unanchored search, \\u escapes, named groups, flags', () => {
    expect(compileLinear('b').test('abc')).toBe(true);
    expect(compileLinear('^b').test('abc')).toBe(false);
    expect(compileLinear('^caf\\u00e9$', 'u').test('café')).toBe(true);
    expect(compileLinear('^(?<year>\\d{4})-\\d{2}$').test('2026-11')).toBe(true);
    expect(compileLinear('^abc$', 'i').test('ABC')).toBe(true);
    expect(compileLinear('^.$', 'u').test('😀')).toBe(true);
  });

  it('refuses backreferences and lookaround, saying why', () => {
    for (const pattern of ['(a)\\1', '(?<n>x)\\k<n>'])
      expect(linearPatternProblem(pattern)).toMatch(
        /backreferences .* not supported: patterns run on a linear-time engine/,
      );
    for (const pattern of ['(?=a)b', '(?!a)b', '(?<=a)b', '(?<!a)b'])
      expect(linearPatternProblem(pattern)).toMatch(/lookahead and lookbehind .* not supported/);
    // escaped, they are literal characters
    for (const pattern of ['\\\\1', '\\(?=', '^[a-z]+$'])
      expect(linearPatternProblem(pattern), pattern).toBeUndefined();
  });
});
