/** Expected tool arguments: each form, partial nesting, and what a mismatch says. Pure, table-driven. */
import { describe, expect, it } from 'vitest';
import { matchArguments } from '../../src/api/arg-match.js';
import { argExpectationProblems, readArgExpectation } from '../../src/shared/arg-expectations.js';
import { TestCase } from '../../src/definition/schema.js';
import { TestRequest } from '../../src/api/operations.js';

describe('matchArguments', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, boolean]> = [
    ['exact string', { to: 'km' }, { to: 'km', value: 10 }, true],
    ['exact string differs', { to: 'km' }, { to: 'mi' }, false],
    ['exact number is not its text', { value: 10 }, { value: '10' }, false],
    ['exact boolean and null', { flag: true, none: null }, { flag: true, none: null }, true],
    ['list item by item', { numbers: [3, 5, 10] }, { numbers: [3, 5, 10] }, true],
    ['list of another length', { numbers: [3, 5] }, { numbers: [3, 5, 10] }, false],
    ['list items by their forms', { numbers: [{ approx: 3, within: 0.5 }, 5] }, { numbers: [3.2, 5] }, true],
    [
      'partial object: other keys ignored',
      { place: { city: 'Berlin' } },
      { place: { city: 'Berlin', cc: 'DE' } },
      true,
    ],
    ['partial at every depth', { a: { b: { c: 1 } } }, { a: { b: { c: 1, d: 2 }, e: 3 } }, true],
    ['partial nested differs', { a: { b: { c: 1 } } }, { a: { b: { c: 2 } } }, false],
    ['pattern', { city: { match: '/^ber/i' } }, { city: 'Berlin' }, true],
    ['pattern misses', { city: { match: '/^ber/' } }, { city: 'Berlin' }, false],
    ['pattern on a number by its text', { days: { match: '/^[1-3]$/' } }, { days: 3 }, true],
    ['pattern on an object', { city: { match: '/x/' } }, { city: { x: 1 } }, false],
    ['approx within', { latitude: { approx: 52.5, within: 0.1 } }, { latitude: 52.52 }, true],
    ['approx outside', { latitude: { approx: 52.5, within: 0.01 } }, { latitude: 52.52 }, false],
    ['approx of a numeric string', { value: { approx: 100, within: 0 } }, { value: '100' }, true],
    ['approx without within: rounding only', { x: { approx: 0.3 } }, { x: 0.1 + 0.2 }, true],
    ['equals: the whole object', { q: { equals: { match: 'abc' } } }, { q: { match: 'abc' } }, true],
    ['equals: no extra key', { q: { equals: { a: 1 } } }, { q: { a: 1, b: 2 } }, false],
    ['missing key', { units: 'metric' }, {}, false],
  ];
  it.each(cases)('%s', (_name, expected, actual, matches) => {
    expect(matchArguments(expected, actual).length === 0).toBe(matches);
  });

  it('says which key, what was expected and what was sent', () => {
    expect(matchArguments({ value: 10, to: 'km' }, { value: 100, to: 'km' })).toEqual([
      { path: 'args.value', expected: '10', got: '100' },
    ]);
    expect(matchArguments({ place: { city: { match: '/^ber/i' } } }, { place: { city: 'Paris' } })).toEqual([
      { path: 'args.place.city', expected: 'a match of /^ber/i', got: '"Paris"' },
    ]);
    expect(matchArguments({ days: [1, 2] }, { days: [1, 3] })).toEqual([
      { path: 'args.days[1]', expected: '2', got: '3' },
    ]);
    expect(matchArguments({ lat: { approx: 52.5, within: 0.1 } }, {})).toEqual([
      { path: 'args.lat', expected: '52.5 ± 0.1', got: 'nothing' },
    ]);
  });

  it('refuses a pattern the linear-time engine cannot run, saying why', () => {
    const [mismatch] = matchArguments({ word: { match: '/(a)\\1/' } }, { word: 'aa' });
    expect(mismatch?.expected).toMatch(/backreferences/);
  });
});

describe('the forms of an expected argument', () => {
  it('reads an object with match, approx or equals as that form, and any other object as partial', () => {
    expect(readArgExpectation({ match: '/a/i' })).toEqual({ kind: 'pattern', source: 'a', flags: 'i' });
    expect(readArgExpectation({ approx: 1 })).toMatchObject({ kind: 'approx', approx: 1 });
    expect(readArgExpectation({ equals: { a: 1 } })).toEqual({ kind: 'equals', value: { a: 1 } });
    expect(readArgExpectation({ city: 'x' })).toEqual({ kind: 'partial', entries: [['city', 'x']] });
  });

  it('reports a mistyped form at its path instead of comparing it as a value', () => {
    expect(
      argExpectationProblems({
        city: { match: 'berlin' },
        place: { lat: { approx: '52' } },
        both: { match: '/a/', within: 1 },
        flags: { match: '/a/g' },
        broken: { match: '/(/' },
      }),
    ).toEqual([
      { path: ['city'], message: expect.stringContaining('"berlin" is not a pattern') },
      { path: ['place', 'lat'], message: 'approx must be a number' },
      { path: ['both'], message: expect.stringContaining('match goes alone, not with within') },
      { path: ['flags'], message: expect.stringContaining('the flags "g" are not supported') },
      { path: ['broken'], message: expect.stringContaining('is not a valid pattern') },
    ]);
  });

  it('is checked where a case is read and where POST /v1/test is validated', () => {
    const bad = { tool: 'convert', args: { value: { approx: 'ten' } } };
    const read = TestCase.safeParse({ name: 'c', message: 'm', expect: { calls: [bad] } });
    expect(read.success).toBe(false);
    expect(read.error?.issues[0]?.path).toEqual(['expect', 'calls', 0, 'args', 'value']);
    const request = TestRequest.safeParse({ mcp_id: 'mcp_a1', message: 'm', expect: { calls: [bad] } });
    expect(request.error?.issues[0]?.message).toBe('approx must be a number');
  });
});
