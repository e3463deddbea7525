/**
 * The local planner on questions as people ask them: arithmetic and units in words, times
 * relative to now, words that stand for the server's words; the calculator's and the weather's
 * catalogs as the agent sees them; and what the agent says when a request is beyond it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { computeGuidance } from '../../../src/api/guidance.js';
import { DEFAULT_AGENT_LIMITS, type AgentSession, type Catalog } from '../../../src/engine/agent/agent-types.js';
import { localAgentAt } from '../../../src/engine/agent/local/agent.js';
import { rewriteArithmetic } from '../../../src/engine/agent/local/arithmetic-words.js';
import { fillArguments } from '../../../src/engine/agent/local/arguments.js';
import { findWordNumbers } from '../../../src/engine/agent/local/number-words.js';
import { planRequest, toolStems, type PlannedStep } from '../../../src/engine/agent/local/planner.js';
import { namesOfValue, roleOf } from '../../../src/engine/agent/local/units.js';
import { dateFrom, findTimes } from '../../../src/engine/agent/local/when.js';
import { stem, synonymsOf } from '../../../src/engine/agent/local/words.js';
import { catalogOf, exampleFile } from '../../support/catalogs.js';

/** Thursday 26 November 2026, noon, in the local time zone: "this weekend" is two and three days ahead. */
const THURSDAY = new Date(2026, 10, 26, 12);

describe('reading what people write', () => {
  it.each([
    ['What is 2 plus 3?', 'What is 2 + 3?'],
    ['Add 2 and 3', '2 + 3'],
    ['add 2, 3 and 4 please', '2 + 3 + 4 please'],
    ['What is ten minus two?', 'What is 10 - 2?'],
    ['What is 12 times 7?', 'What is 12 * 7?'],
    ['What is 100 divided by 4?', 'What is 100 / 4?'],
    ['What is the square root of 16?', 'What is sqrt(16)?'],
    ['2 plus the square root of sixteen', '2 + sqrt(16)'],
    ['2 plus 3 times 4', '2 + 3 * 4'],
    ['What is 2 to the power of 10?', 'What is 2 ^ 10?'],
    ['five squared', '5 ^ 2'],
    ['pi times 2', 'pi * 2'],
    ['subtract 3 from 10', '10 - 3'],
    ['multiply 6 by 7', '6 * 7'],
    ['15 percent of 80', '15 / 100 * 80'],
    ['twenty-five plus a hundred and five', '25 + 105'],
    // not arithmetic: the words stay as they are
    ['the next three days', 'the next three days'],
    ['add three notes', 'add three notes'],
    ['Slug for "Two plus Two"', 'Slug for "Two plus Two"'],
    ['on 2025-06-02 plus 3', 'on 2025-06-02 plus 3'],
  ])('writes %j as %j', (text, rewritten) => {
    expect(rewriteArithmetic(text)).toBe(rewritten);
  });

  it.each([
    ['two', [2]],
    ['twenty five and twenty-six', [25, 26]],
    ['a hundred and five', [105]],
    ['three thousand two hundred', [3200]],
    ['two three', [2, 3]],
    ['ten and two', [10, 2]],
    ['a cat', []],
  ])('reads the numbers of %j', (text, values) => {
    expect(findWordNumbers(text).map((n) => n.value)).toEqual(values);
  });

  it.each([
    ['tomorrow', 1, 1],
    ['the day after tomorrow', 2, 2],
    ['today', 0, 0],
    ['this weekend', 2, 3],
    ['next week', 4, 10],
    ['on Friday', 1, 1],
    ['next Thursday', 7, 7],
    ['in 3 days', 3, 3],
    ['in five days', 5, 5],
  ])('reads %j on a Thursday as days %i to %i from today', (text, first, last) => {
    expect(findTimes(text, THURSDAY).map((t) => [t.first, t.last])).toEqual([[first, last]]);
  });

  it('reads the weekend from any day of the week, and dates in the local time zone', () => {
    const saturday = new Date(2026, 10, 28, 9);
    const sunday = new Date(2026, 10, 29, 23);
    expect(findTimes('this weekend', saturday).map((t) => [t.first, t.last])).toEqual([[0, 1]]);
    expect(findTimes('this weekend', sunday).map((t) => [t.first, t.last])).toEqual([[0, 0]]);
    expect(findTimes('next weekend', saturday).map((t) => [t.first, t.last])).toEqual([[7, 8]]);
    expect(dateFrom(THURSDAY, 1)).toBe('2026-11-27');
    expect(dateFrom(sunday, 3)).toBe('2026-12-02');
  });

  it('knows units by their names, and which parameter a unit is converted from', () => {
    expect(namesOfValue('mi')).toEqual(expect.arrayContaining(['mi', 'mile', 'miles']));
    expect(namesOfValue('celsius')).toEqual(expect.arrayContaining(['celsius', 'centigrade']));
    // a one-letter symbol is read only where the schema lists it
    expect(namesOfValue('fahrenheit')).not.toContain('f');
    expect(namesOfValue('priority')).toEqual(['priority']);
    expect(roleOf('from', 'the unit the amount is in')).toBe('source');
    expect(roleOf('to_unit', undefined)).toBe('target');
    expect(roleOf('unit', 'the unit to convert from')).toBe('source');
    expect(roleOf('unit', undefined)).toBeUndefined();
  });

  it('stems derived forms to their base, and knows a few words that stand for others', () => {
    expect(stem('evaluation')).toBe(stem('evaluate'));
    expect(stem('calculation')).toBe(stem('calculated'));
    expect(stem('currently')).toBe(stem('current'));
    expect(stem('addition')).toBe(stem('add'));
    expect(synonymsOf(stem('average'))).toContain(stem('mean'));
    expect(synonymsOf(stem('rain'))).toContain(stem('precipitation'));
    expect(synonymsOf(stem('tomorrow'))).toContain(stem('forecast'));
    expect(synonymsOf(stem('weather'))).not.toContain(stem('forecast'));
  });
});

describe('questions as people ask them', () => {
  let calculator: Catalog;
  let weather: Catalog;
  beforeAll(async () => {
    calculator = await catalogOf(exampleFile('calculator'));
    weather = await catalogOf(exampleFile('weather'));
  });

  const describeStep = (step: PlannedStep) =>
    step.kind === 'tool'
      ? {
          tool: step.tool.name,
          args: fillArguments(step.tool.inputSchema, step.text, { toolWords: toolStems(step.tool), now: THURSDAY })
            .args,
        }
      : { read: step.uri };

  it.each([
    // asked in words: each of these called nothing, or convert without its units, before
    ['What is 2 plus 3?', 'evaluate', { expression: '2 + 3' }],
    ['Add 2 and 3', 'evaluate', { expression: '2 + 3' }],
    ['What is the square root of 16?', 'evaluate', { expression: 'sqrt(16)' }],
    ['What is the average of 3, 5 and 10?', 'statistics', { numbers: [3, 5, 10] }],
    ['Convert 100 fahrenheit to celsius', 'convert', { value: 100, from: 'f', to: 'c' }],
    ['How many km is 10 miles?', 'convert', { value: 10, from: 'mi', to: 'km' }],
    // written with symbols
    ['2 + 3', 'evaluate', { expression: '2 + 3' }],
    ['convert 100 f to c', 'convert', { value: 100, from: 'f', to: 'c' }],
    // more of the same kinds
    ['What is 12 times 7?', 'evaluate', { expression: '12 * 7' }],
    ['What is ten minus two?', 'evaluate', { expression: '10 - 2' }],
    ['What is the sum of 4, 8 and 15?', 'statistics', { numbers: [4, 8, 15] }],
    ['How many pounds is 5 kg?', 'convert', { value: 5, from: 'kg', to: 'lb' }],
  ])('calculator: %j calls %s with %j', (message, tool, args) => {
    expect(planRequest(calculator, message, undefined, { now: THURSDAY }).map(describeStep)).toEqual([{ tool, args }]);
  });

  it.each([
    ['weather in Berlin tomorrow', { days: 2 }],
    ['Will it rain in Paris this weekend?', { days: 4 }],
  ])('weather: %j asks for the forecast, %j', (message, args) => {
    expect(planRequest(weather, message, undefined, { now: THURSDAY }).map(describeStep)).toEqual([
      { tool: 'get_forecast', args },
    ]);
  });

  it('still takes the current weather for now, and the forecast for the next days', () => {
    const plan = (message: string) =>
      planRequest(weather, message, undefined, { now: THURSDAY }).map((s) => (s.kind === 'tool' ? s.tool.name : s));
    expect(plan('What is the current weather in Lisbon?')).toEqual(['get_current_weather']);
    expect(plan('What is the weather in Lisbon right now?')).toEqual(['get_current_weather']);
    expect(plan('What will the weather be like in Berlin for the next three days?')).toEqual(['get_forecast']);
  });
});

/** A session on a catalog whose tools answer from a table, recording calls and what was not met. */
function fakeSession(catalog: Catalog, answers: Record<string, unknown>) {
  const calls: Array<{ name: string; args: Record<string, unknown> }> = [];
  const unmet: Array<{ tool: string; missing: string[]; unmapped?: boolean }> = [];
  const session: AgentSession = {
    catalog,
    callTool: (name, args) => {
      calls.push({ name, args });
      const data = answers[name] ?? {};
      return Promise.resolve({ ok: true, text: JSON.stringify(data), data });
    },
    readResource: () => Promise.resolve({ ok: true, text: '' }),
    recordRejectedCall: () => {},
    noteUnmet: (tool, missing, unmapped) => void unmet.push({ tool, missing, ...(unmapped ? { unmapped } : {}) }),
  };
  return { session, calls, unmet };
}

describe('the agent on these questions', () => {
  const run = async (catalog: Catalog, message: string, answers: Record<string, unknown> = {}) => {
    const fake = fakeSession(catalog, answers);
    const answer = await localAgentAt(THURSDAY)({
      message,
      session: fake.session,
      limits: DEFAULT_AGENT_LIMITS,
      signal: new AbortController().signal,
    });
    return { ...fake, reply: typeof answer === 'string' ? answer : answer.reply };
  };
  const place = { results: [{ name: 'Paris', latitude: 48.85, longitude: 2.35 }] };

  it.each([
    ['weather in Berlin tomorrow', 'Berlin', 2],
    ['Will it rain in Paris this weekend?', 'Paris', 4],
    // written in lower case, the place is what is left without the words of time and of the forecast
    ['weather in berlin tomorrow', 'berlin', 2],
  ])('%j finds the place, then its forecast', async (message, name, days) => {
    const { calls, unmet } = await run(await catalogOf(exampleFile('weather')), message, { find_location: place });
    expect(calls).toEqual([
      { name: 'find_location', args: { name } },
      { name: 'get_forecast', args: { latitude: 48.85, longitude: 2.35, days } },
    ]);
    expect(unmet).toEqual([]);
  });

  it('a request beyond the planner is its own limit, not a tool the server lacks', async () => {
    const catalog = await catalogOf(exampleFile('calculator'));
    const { calls, unmet, reply } = await run(catalog, 'Convert 3 light years to km');
    expect(calls).toEqual([]);
    expect(unmet).toEqual([{ tool: 'convert', missing: ['from'], unmapped: true }]);
    expect(reply).toContain('I would use convert, but I could not read its from from the message');
    const guidance = (unmetGiven: boolean) =>
      computeGuidance({
        run: { ai_response: reply, success_rate: 0, tools_used: [], resources_accessed: [], ai_model: 'mcpctl-local' },
        tools: catalog.tools,
        ...(unmetGiven ? { unmet } : {}),
      });
    // from the agent's own account, and from its reply when a service sends no account
    for (const given of [true, false]) {
      const causes = guidance(given).causes;
      expect(causes.map((c) => c.kind)).toEqual(['planner_unmapped']);
      expect(causes[0]!.message).toContain("mcpctl-local could not map the request to convert's from");
      expect(causes[0]!.message).toContain('--model');
    }
  });

  it('values nothing on the server gives are still a tool the server lacks', async () => {
    const catalog = await catalogOf(exampleFile('weather'));
    const noGeocoder: Catalog = { ...catalog, tools: catalog.tools.filter((t) => t.name !== 'find_location') };
    const { unmet } = await run(noGeocoder, 'weather in Berlin tomorrow');
    expect(unmet).toEqual([{ tool: 'get_forecast', missing: ['latitude', 'longitude'] }]);
  });
});
