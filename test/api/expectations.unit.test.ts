/** A run measured against its case: tool selection, expected calls, the reply's judge. Pure, table-driven. */
import { describe, expect, it } from 'vitest';
import {
  checkCalls,
  evaluateRun,
  evaluationFailures,
  expectedToolsOf,
  toolSelection,
} from '../../src/api/expectations.js';
import { criterionKeyWords, judgeOffline, judgePrompt, readVerdicts } from '../../src/api/reply-judge.js';

const call = (name: string, args: Record<string, unknown>, ok = true) => ({ name, ok, arguments: args });

describe('toolSelection', () => {
  const cases: Array<[string, string[], string[], number, number]> = [
    ['all right', ['convert'], ['convert'], 1, 1],
    ['one wrong of two used', ['convert'], ['convert', 'evaluate'], 0.5, 1],
    ['one of two expected', ['convert', 'evaluate'], ['convert'], 1, 0.5],
    ['the wrong one', ['get_forecast'], ['get_current_weather'], 0, 0],
    ['nothing used, something expected', ['convert'], [], 0, 0],
    ['nothing expected, nothing used', [], [], 1, 1],
    ['nothing expected, something used', [], ['convert'], 0, 0],
    ['repeated calls count once', ['convert'], ['convert', 'convert'], 1, 1],
  ];
  it.each(cases)('%s', (_name, expected, used, precision, recall) => {
    expect(toolSelection(expected, used)).toMatchObject({ precision, recall });
  });

  it('names the unexpected and the missed tools', () => {
    expect(toolSelection(['a', 'b'], ['b', 'c'])).toEqual({
      precision: 0.5,
      recall: 0.5,
      expected_tools: ['a', 'b'],
      unexpected_tools: ['c'],
      missed_tools: ['a'],
    });
  });

  it('expects the tools of tools and of calls, and nothing when a case says neither', () => {
    expect(expectedToolsOf({ tools: ['a'], calls: [{ tool: 'b' }, { tool: 'a' }] })).toEqual(['a', 'b']);
    expect(expectedToolsOf({ reply: ['x'] })).toBeUndefined();
    expect(expectedToolsOf(undefined)).toBeUndefined();
  });
});

describe('checkCalls', () => {
  it('matches each expected call with some call of its tool, in any order', () => {
    const calls = [
      call('convert', { value: 100, from: 'f', to: 'c' }),
      call('convert', { value: 10, from: 'mi', to: 'km' }),
    ];
    expect(
      checkCalls(
        [
          { tool: 'convert', args: { from: 'mi' } },
          { tool: 'convert', args: { from: 'f' } },
        ],
        calls,
      ),
    ).toEqual([
      { tool: 'convert', matched: true, call: 1 },
      { tool: 'convert', matched: true, call: 0 },
    ]);
  });

  it('needs a call for each expected call: one call meets one expectation', () => {
    const checks = checkCalls([{ tool: 'convert' }, { tool: 'convert' }], [call('convert', {})]);
    expect(checks.map((c) => c.matched)).toEqual([true, false]);
  });

  it('names the closest call of the tool and how it differs', () => {
    const calls = [
      call('convert', { value: 1, from: 'f', to: 'k' }),
      call('convert', { value: 100, from: 'f', to: 'k' }),
    ];
    expect(checkCalls([{ tool: 'convert', args: { value: 100, from: 'f', to: 'c' } }], calls)).toEqual([
      { tool: 'convert', matched: false, call: 1, mismatches: [{ path: 'args.to', expected: '"c"', got: '"k"' }] },
    ]);
  });

  it('says so when the service recorded no arguments', () => {
    const [check] = checkCalls([{ tool: 'convert', args: { value: 1 } }], [{ name: 'convert', ok: true }]);
    expect(check?.mismatches?.[0]?.got).toMatch(/does not report them/);
  });
});

describe('evaluateRun and evaluationFailures', () => {
  const run = {
    ai_response: '100 f is 37.78 c',
    tools_used: ['convert'],
    tool_calls: [call('convert', { value: 100, from: 'f', to: 'c' })],
  };

  it('measures only what the case expects', () => {
    expect(evaluateRun(run, undefined)).toBeUndefined();
    expect(evaluateRun(run, { tools: ['convert'] })).toEqual({
      precision: 1,
      recall: 1,
      expected_tools: ['convert'],
      unexpected_tools: [],
      missed_tools: [],
    });
  });

  it('fails a wrong argument naming the call, the key, what was expected and what was sent', () => {
    const expectations = { calls: [{ tool: 'convert', args: { value: { approx: 212, within: 0.5 } } }] };
    const evaluation = evaluateRun(run, expectations);
    expect(evaluationFailures(evaluation, expectations)).toEqual([
      'expected call 1 (convert): call 1 of the run differs: args.value expected 212 ± 0.5, got 100',
    ]);
    const absent = { calls: [{ tool: 'evaluate' }] };
    expect(evaluationFailures(evaluateRun(run, absent), absent)).toEqual([
      'expected call 1 (evaluate): the agent did not call evaluate',
    ]);
  });

  it('judges the reply offline, and leaves a model judge to the service', () => {
    const expectations = { reply: ['mentions 37.78', 'says it is in kelvin'] };
    const evaluation = evaluateRun(run, expectations);
    expect(evaluation?.reply?.criteria.map((c) => c.passed)).toEqual([true, false]);
    expect(evaluationFailures(evaluation, expectations)).toEqual([
      'the reply does not meet "says it is in kelvin" (mcpctl-local: the reply lacks kelvin)',
    ]);
    expect(evaluateRun(run, expectations, 'claude-sonnet-5-5')).toBeUndefined();
    expect(evaluationFailures(undefined, expectations)).toEqual([
      'the reply was not judged: the service does not support expect.reply',
    ]);
  });
});

describe('the reply judge', () => {
  it('looks for the key words of a criterion, numbers as written', () => {
    expect(criterionKeyWords('Mentions the temperature in Celsius')).toEqual(['temperatur', 'celsius']);
    expect(criterionKeyWords('says 16.09 km')).toEqual(['16.09', 'km']);
    expect(judgeOffline('It is 16.09 km.', ['says 16.09 km', 'says 16.1 km'])).toMatchObject([
      { passed: true },
      { passed: false, reason: 'the reply lacks 16.1' },
    ]);
    expect(judgeOffline('Sunny', ['mentions the']).at(0)?.passed).toBe(false);
  });

  it("reads a model judge's verdicts, failing what it left out", () => {
    const criteria = ['a', 'b', 'c'];
    const answer =
      'Here: {"verdicts": [{"criterion": 1, "passed": true}, {"criterion": 2, "passed": false, "reason": "no"}]}';
    expect(readVerdicts(answer, criteria)).toEqual([
      { criterion: 'a', passed: true },
      { criterion: 'b', passed: false, reason: 'no' },
      { criterion: 'c', passed: false, reason: 'the judge gave no verdict for it' },
    ]);
    expect(() => readVerdicts('I think it is fine', criteria)).toThrow(/verdicts/);
    expect(judgePrompt({ message: 'm', reply: 'r', criteria })).toContain('3. c');
  });
});
