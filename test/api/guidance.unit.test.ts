/** The guidance of a test run and the description measure it shares with `validate`: pure, table-driven. */
import { describe, expect, it } from 'vitest';
import { CLOSE, compareDescriptions, descriptionWords, NEAR_IDENTICAL } from '../../src/definition/descriptions.js';
import {
  classifyToolError,
  computeGuidance,
  describeFailure,
  saysLacksTool,
  type GuidanceInput,
} from '../../src/api/guidance.js';

const TOOLS = [
  {
    name: 'find_customer',
    description: 'Looks up a customer account by the holder’s name, with its balance and status',
  },
  {
    name: 'find_supplier',
    description: 'Looks up a supplier account by the holder’s name, with its balance and status',
  },
  { name: 'get_forecast', description: 'Daily weather forecast for a place given by its latitude and longitude' },
];

function run(overrides: Partial<GuidanceInput['run']> = {}): GuidanceInput['run'] {
  return {
    ai_response: 'done',
    success_rate: 1,
    tools_used: [],
    resources_accessed: [],
    tool_calls: [],
    ai_model: 'mcpctl-local',
    ...overrides,
  };
}
const called = (...calls: Array<[string, boolean, string?]>) => ({
  tools_used: [...new Set(calls.map(([name]) => name))],
  tool_calls: calls.map(([name, ok, error]) => ({ name, ok, ...(error === undefined ? {} : { error }) })),
  success_rate: calls.filter(([, ok]) => ok).length / calls.length,
});
const kinds = (input: GuidanceInput) => computeGuidance(input).causes.map((c) => c.kind);

describe('the description measure', () => {
  it.each([
    ['identical words', 'Converts a temperature', 'converts temperatures', 1],
    ['one word apart', TOOLS[0]!.description, TOOLS[1]!.description, 0.75],
    ['unrelated', 'Adds two numbers', 'Reads the weather forecast', 0],
    ['stop words and generic verbs do not count', 'Returns the value of the thing', 'Returns a value for a thing', 0],
  ])('%s', (_name, a, b, score) => {
    expect(compareDescriptions(a, b).score).toBe(score);
  });

  it('names the shared words as the first description writes them', () => {
    expect(compareDescriptions('Daily forecasts for a city', 'The forecast of a City, daily').shared).toEqual([
      'daily',
      'forecasts',
      'city',
    ]);
  });

  it('the thresholds are ordered: a known wrong choice is named at a lower similarity', () => {
    expect(CLOSE).toBeLessThan(NEAR_IDENTICAL);
  });

  it('counts the content words of a description', () => {
    expect(descriptionWords('Says hello.')).toBe(2);
    expect(descriptionWords(undefined)).toBe(0);
    expect(descriptionWords(TOOLS[2]!.description)).toBeGreaterThan(3);
  });
});

describe('computeGuidance', () => {
  it('a healthy run has the band of its rate and no cause', () => {
    expect(
      computeGuidance({ run: run(called(['get_forecast', true])), tools: TOOLS, expectedTools: ['get_forecast'] }),
    ).toEqual({
      band: 'all tool calls worked',
      causes: [],
    });
  });

  it('a run that used nothing is in the lowest band, whatever rate the service reports', () => {
    expect(computeGuidance({ run: run({ success_rate: 1 }) })).toMatchObject({
      band: 'major issues',
      causes: [{ kind: 'not_understood' }],
    });
    // reading a resource is a use
    expect(computeGuidance({ run: run({ resources_accessed: ['notes://today'] }) })).toEqual({
      band: 'all tool calls worked',
      causes: [],
    });
  });

  it('a case that expects no tool is not told it was not understood', () => {
    expect(kinds({ run: run(), expectedTools: [] })).toEqual([]);
  });

  it('similar_descriptions with an expectation: the wrong tool and the right one', () => {
    const guidance = computeGuidance({
      run: run(called(['find_customer', true])),
      tools: TOOLS,
      expectedTools: ['find_supplier'],
    });
    expect(guidance.causes).toEqual([
      expect.objectContaining({ kind: 'similar_descriptions', tools: ['find_customer', 'find_supplier'], calls: [0] }),
    ]);
  });

  it('a wrong tool whose description is not close to the right one is not blamed on descriptions', () => {
    expect(kinds({ run: run(called(['get_forecast', true])), tools: TOOLS, expectedTools: ['find_supplier'] })).toEqual(
      [],
    );
  });

  it('similar_descriptions without expectations: a tool used from a near-identical pair, one cause per pair', () => {
    const guidance = computeGuidance({
      run: run(called(['find_customer', true], ['find_supplier', true])),
      tools: TOOLS,
    });
    expect(guidance.causes).toEqual([
      expect.objectContaining({ kind: 'similar_descriptions', tools: ['find_customer', 'find_supplier'] }),
    ]);
    expect(guidance.causes[0]!.message).toContain('near-identical');
    expect(kinds({ run: run(called(['get_forecast', true])), tools: TOOLS })).toEqual([]);
  });

  it('missing_tool from the agent’s own account, and not also not_understood', () => {
    const guidance = computeGuidance({
      run: run(),
      tools: TOOLS,
      unmet: [{ tool: 'get_forecast', missing: ['latitude', 'longitude'] }],
    });
    expect(guidance.causes).toEqual([
      {
        kind: 'missing_tool',
        message:
          "the agent would call get_forecast, but neither the message nor any tool's output gives its latitude and longitude: add a tool that returns them, or make them optional",
        tools: ['get_forecast'],
      },
    ]);
  });

  it('missing_tool read from an mcpctl-local reply when the service sends no account of it', () => {
    const reply =
      'I would use get_forecast, but the message does not give its latitude and longitude, so I did not call it.';
    expect(computeGuidance({ run: run({ ai_response: reply }) }).causes).toEqual([
      expect.objectContaining({ kind: 'missing_tool', tools: ['get_forecast'] }),
    ]);
    // a resource template is read, not called: no tool to name
    expect(computeGuidance({ run: run(), unmet: [{ tool: 'notes://me/{day}', missing: ['day'] }] }).causes).toEqual([
      { kind: 'missing_tool', message: expect.stringContaining('the agent would read notes://me/{day}') },
    ]);
  });

  it.each([
    ["I don't have a tool that can book flights.", true],
    ['None of the available tools can answer this.', true],
    ['There is no tool to look up stock prices here.', true],
    ['It is sunny in Paris.', false],
    ['I did not find a tool or resource on this server that fits this request, so I did not call anything.', false],
  ])('a model saying it lacks a tool: %s', (reply, lacks) => {
    expect(saysLacksTool(reply) !== undefined).toBe(lacks);
    const model = computeGuidance({ run: run({ ai_response: reply, ai_model: 'claude-sonnet-4-5' }) });
    expect(model.causes.map((c) => c.kind)).toEqual(lacks ? ['missing_tool'] : ['not_understood']);
  });

  it('failed_calls: one cause per failing tool, with its calls, its error and how it failed', () => {
    const guidance = computeGuidance({
      run: run(
        called(
          ['get_forecast', true],
          ['get_forecast', false, 'Tool "get_forecast" failed: GET https://x/y answered 502 Bad Gateway'],
          ['find_customer', false, 'Invalid arguments for tool "find_customer": name is required.'],
        ),
      ),
      tools: TOOLS,
      expectedTools: ['get_forecast', 'find_customer'],
    });
    expect(guidance.band).toBe('major issues');
    expect(guidance.causes).toEqual([
      {
        kind: 'failed_calls',
        message:
          'get_forecast: 1 of its 2 calls failed; the handler failed: its HTTP call answered 502: Tool "get_forecast" failed: GET https://x/y answered 502 Bad Gateway',
        tools: ['get_forecast'],
        calls: [1],
      },
      {
        kind: 'failed_calls',
        message:
          'find_customer: its call failed; the arguments were rejected by its input schema: Invalid arguments for tool "find_customer": name is required.',
        tools: ['find_customer'],
        calls: [2],
      },
    ]);
  });

  it('how a call failed: what the service says wins over the words of the error', () => {
    const guidance = computeGuidance({
      run: run({
        tools_used: ['x'],
        success_rate: 0,
        tool_calls: [{ name: 'x', ok: false, error: 'answered 500', failure: { kind: 'timeout' } }],
      }),
    });
    expect(guidance.causes[0]!.message).toContain('it ran out of time');
  });

  it('a service that reports a rate but no calls: the share that failed', () => {
    expect(
      computeGuidance({ run: { ai_response: '', success_rate: 0.5, tools_used: ['a'], resources_accessed: [] } })
        .causes,
    ).toEqual([
      { kind: 'failed_calls', message: '50% of the tool calls failed (the service does not say which)', tools: ['a'] },
    ]);
  });

  it('causes apply at a rate of 1 too, in the spec’s order', () => {
    const guidance = computeGuidance({
      run: run(called(['find_customer', true])),
      tools: TOOLS,
      expectedTools: ['find_supplier'],
      unmet: [{ tool: 'get_forecast', missing: ['latitude'] }],
    });
    expect(guidance.band).toBe('all tool calls worked');
    expect(guidance.causes.map((c) => c.kind)).toEqual(['similar_descriptions', 'missing_tool']);
  });
});

describe('classifyToolError', () => {
  it.each([
    ['Invalid arguments for tool "x": city is required.', { kind: 'arguments' }],
    ['MCP error -32602: Input validation error: Invalid arguments for tool x', { kind: 'arguments' }],
    ['MCP error -32602: Unknown tool: nope', { kind: 'unknown_tool' }],
    ['MCP error -32602: Tool nope not found', { kind: 'unknown_tool' }],
    ['Tool "x" failed: GET https://a/b answered 404 Not Found', { kind: 'http_status', status: 404 }],
    ['upstream said HTTP 503', { kind: 'http_status', status: 503 }],
    ['Tool "x" failed: node exited with code 2: boom', { kind: 'exit_code', exit_code: 2 }],
    ['Tool "x" failed: sh was ended by SIGKILL', { kind: 'exit_code', signal: 'SIGKILL' }],
    ['Tool "x" failed: run() did not finish within 100 ms (time-out)', { kind: 'timeout' }],
    ['Tool "x" failed: GET https://a/b: no answer within 5000 ms (time-out)', { kind: 'timeout' }],
    ['Tool "x" failed: no user id', { kind: 'thrown' }],
  ])('%s', (error, failure) => {
    expect(classifyToolError(error)).toEqual(failure);
    expect(describeFailure(failure as never)).not.toBe('');
  });
});
