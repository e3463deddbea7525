/**
 * `gpt-5.4-mini` through the real OpenAI SDK, against a stand-in for Chat Completions on
 * 127.0.0.1 (OPENAI_BASE_URL) and real runtimes of the examples: the functions it offers, the
 * tool messages it sends back, arguments that are not JSON, and the provider's failures.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/engine/service-error.js';
import { requireBuilt } from '../../support/app.js';
import { createHarness, type Harness } from '../../support/agent.js';
import {
  openAiCompletion,
  openAiError,
  startProviderDouble,
  type ProviderDouble,
  type Script,
} from '../../support/provider-double.js';
import { exampleFile } from '../../support/catalogs.js';

const KEY = 'sk-test-0123456789';
let double: ProviderDouble;
let harness: Harness;
let script: Script;

beforeAll(async () => {
  requireBuilt();
  double = await startProviderDouble((request, index) => script(request, index));
  harness = await createHarness({ env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${double.url}/v1` } });
});

afterAll(async () => {
  await harness?.close();
  await double?.close();
});

beforeEach(() => {
  double.requests.length = 0;
});

async function run(example: string, message: string, userId?: string) {
  const record = await harness.record(exampleFile(example));
  return harness.service.test(record, {
    mcp_id: record.server.mcp_id,
    message,
    ai_model: 'gpt-5.4-mini',
    ...(userId === undefined ? {} : { context: { user_id: userId } }),
  });
}

const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

describe('gpt-5.4-mini', () => {
  it('offers the tools as functions, runs the tool_calls, sends tool messages back, and replies with the final message', async () => {
    script = (_request, index) =>
      index === 0
        ? openAiCompletion(
            {
              content: null,
              tool_calls: [
                call('call_1', 'convert', '{"value":5,"from":"km","to":"mi"}'),
                call('call_2', 'read_resource', '{"uri":"calc://constants"}'),
              ],
            },
            'tool_calls',
          )
        : openAiCompletion({ content: '5 km is about 3.11 miles.' }, 'stop');
    const result = await run('calculator', 'How far is 5 km in miles?');

    expect(result).toMatchObject({
      ai_response: '5 km is about 3.11 miles.',
      tools_used: ['convert'],
      resources_accessed: ['calc://constants'],
      success_rate: 1,
      ai_model: 'gpt-5.4-mini',
    });
    const [first, second] = double.requests;
    expect(first!.path).toBe('/v1/chat/completions');
    expect(first!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(first!.body).toMatchObject({
      model: 'gpt-5.4-mini',
      messages: [{ role: 'system' }, { role: 'user', content: 'How far is 5 km in miles?' }],
    });
    const tools = first!.body.tools as Array<{
      type: string;
      function: { name: string; parameters: { properties: Record<string, unknown> } };
    }>;
    expect(tools.map((t) => `${t.type}:${t.function.name}`)).toEqual([
      'function:evaluate',
      'function:statistics',
      'function:convert',
      'function:read_resource',
    ]);
    expect(tools[2]!.function.parameters.properties).toMatchObject({
      from: { type: 'string', enum: expect.arrayContaining(['km', 'mi']) },
    });

    const messages = second!.body.messages as Array<Record<string, unknown>>;
    expect(messages[2]).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: 'call_1', function: { name: 'convert' } }, { id: 'call_2' }],
    });
    expect(messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '5 km = 3.10685596119 mi' });
    expect(messages[4]).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_2',
      content: expect.stringContaining('golden_ratio'),
    });
  });

  it('counts arguments that are not JSON and failed calls against the success rate; the user reaches the server', async () => {
    script = (_request, index) =>
      index === 0
        ? openAiCompletion(
            {
              content: null,
              tool_calls: [
                call('call_a', 'whoami', ''),
                call('call_b', 'search_notes', '{"query": '),
                call('call_c', 'search_notes', '{"query":""}'),
              ],
            },
            'tool_calls',
          )
        : openAiCompletion({ content: 'You are bob.' }, 'stop');
    const result = await run('notes', 'Who am I?', 'bob');
    expect(result.tool_calls!.map((c) => [c.name, c.ok])).toEqual([
      ['whoami', true],
      ['search_notes', false],
      ['search_notes', false],
    ]);
    expect(result.tool_calls![1]!.error).toContain('not JSON');
    expect(result.success_rate).toBeCloseTo(1 / 3, 3);
    expect(result.tools_used).toEqual(['whoami', 'search_notes']);
    const messages = double.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    expect(messages.slice(3).map((m) => m.content)).toEqual([
      'You are bob on notes.',
      expect.stringContaining('not valid JSON'),
      expect.stringMatching(/^Error: Invalid arguments/),
    ]);
  });

  it.each([
    {
      status: 401,
      code: 'model_not_configured',
      message: /OpenAI refused the engine's OPENAI_API_KEY \(HTTP 401\): Incorrect API key provided/,
    },
    { status: 503, code: 'unavailable', message: /OpenAI failed \(HTTP 503\)/ },
    {
      status: 404,
      code: 'internal',
      message: /OpenAI refused the test's request \(HTTP 404\): The model does not exist/,
    },
  ])('answers a provider $status as $code', async ({ status, code, message }) => {
    const reason = {
      401: 'Incorrect API key provided',
      503: 'The engine is currently overloaded',
      404: 'The model does not exist',
    }[status]!;
    script = () => openAiError(status, 'error', reason);
    const error = await run('calculator', 'What is 1 + 1?').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe(code);
    expect((error as ServiceError).message).toMatch(message);
    await harness.started.at(-1)!.exited;
  });

  it('needs OPENAI_API_KEY', async () => {
    const keyless = await createHarness({ env: { OPENAI_API_KEY: '  ' } });
    try {
      const record = await keyless.record(exampleFile('calculator'));
      const error = await keyless.service
        .test(record, { mcp_id: record.server.mcp_id, message: 'hi', ai_model: 'gpt-5.4-mini' })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toMatchObject({
        code: 'model_not_configured',
        message: expect.stringContaining('needs OPENAI_API_KEY'),
      });
      expect(keyless.started).toHaveLength(0);
    } finally {
      await keyless.close();
    }
  });
});
