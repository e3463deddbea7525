/**
 * Models of the engine's settings through the real SDKs, against doubles on 127.0.0.1 that speak
 * each server's wire protocol: an OpenAI-compatible server as Ollama and as vLLM answer, and
 * Gemini's generateContent. Also what the listing says (a key not set, a server down, a wrong
 * entry), a settings file read again when it changes, and keys handed over by a reload.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/engine/service-error.js';
import { requireBuilt } from '../../support/app.js';
import { createHarness, type Harness } from '../../support/agent.js';
import { exampleFile } from '../../support/catalogs.js';
import { startProviderDouble, type ProviderDouble } from '../../support/provider-double.js';
import { geminiError, scriptedChatServer, scriptedGemini, type PlannedCall } from '../../support/provider-wire.js';
import { tempDir, type TempDir } from '../../support/temp.js';

const GEMINI_KEY = 'gm-test-0123456789';
const VLLM_KEY = 'vllm-secret-0123456789';
let ollama: ProviderDouble;
let vllm: ProviderDouble;
let gemini: ProviderDouble;
let geminiFails: number | undefined;
let harness: Harness;
let dir: TempDir;
let settingsFile: string;

const evaluate = (expression: string): PlannedCall[] => [{ name: 'evaluate', args: { expression } }];
const models = () => [
  { id: 'local-llm', provider: 'openai-compatible', model: 'llama3.2', base_url: `${ollama.url}/v1` },
  {
    id: 'vllm-qwen',
    provider: 'openai-compatible',
    model: 'Qwen/Qwen2.5-7B-Instruct',
    base_url: `${vllm.url}/v1/`,
    api_key_env: 'VLLM_KEY',
  },
  { id: 'gemini-test', provider: 'gemini', model: 'gemini-3.5-flash', base_url: gemini.url },
  { id: 'down-llm', provider: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1' },
  { id: 'mcpctl-local', provider: 'openai', model: 'gpt-5.4-mini' },
  { id: 'no-address', provider: 'openai-compatible' },
];

beforeAll(async () => {
  requireBuilt();
  ollama = await startProviderDouble(scriptedChatServer('ollama', () => evaluate('2 + 3')));
  vllm = await startProviderDouble(scriptedChatServer('vllm', () => evaluate('sqrt(16)')));
  const planned = scriptedGemini(() => evaluate('(3 + 5 + 10) / 3'));
  gemini = await startProviderDouble((request, index) =>
    geminiFails === undefined ? planned(request, index) : geminiError(geminiFails, 'PERMISSION_DENIED', 'denied'),
  );
  dir = await tempDir('mcpctl-models-');
  settingsFile = join(dir.dir, 'engine-settings.json');
  await writeFile(settingsFile, JSON.stringify({ port: 7070, models: models() }));
  harness = await createHarness({ env: { GEMINI_API_KEY: GEMINI_KEY }, settingsFile });
});

afterAll(async () => {
  await harness?.close();
  await Promise.all([ollama?.close(), vllm?.close(), gemini?.close()]);
  await dir?.cleanup();
});

beforeEach(() => {
  for (const double of [ollama, vllm, gemini]) double.requests.length = 0;
  geminiFails = undefined;
});

async function run(model: string, message: string) {
  const record = await harness.record(exampleFile('calculator'));
  return harness.service.test(record, { mcp_id: record.server.mcp_id, message, ai_model: model });
}

async function failure(model: string): Promise<ServiceError> {
  const error = await run(model, 'What is 2 plus 3?').then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe('an openai-compatible model', () => {
  it('runs a case through a server that answers as Ollama does (tool calls with finish_reason "stop"), without a key', async () => {
    const result = await run('local-llm', 'What is 2 plus 3?');
    expect(result).toMatchObject({
      ai_model: 'local-llm',
      ai_response: 'Done: What is 2 plus 3?',
      tools_used: ['evaluate'],
      success_rate: 1,
      usage: { input_tokens: 420, output_tokens: 36 },
    });
    const [first, second] = ollama.requests;
    expect(first!.path).toBe('/v1/chat/completions');
    // the older form of the limit, which every compatible server reads
    expect(first!.body).toMatchObject({ model: 'llama3.2', max_tokens: 2048 });
    expect(first!.body.max_completion_tokens).toBeUndefined();
    expect(second!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_0abc' });
    // only a listing checks the address (GET /v1/models); a test run does not
    expect(ollama.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
  });

  it('takes its key from a reload (vLLM), never logging it', async () => {
    expect((await failure('vllm-qwen')).message).toContain('needs VLLM_KEY');
    const listed = await harness.service.reload!({ VLLM_KEY });
    expect(listed.models.find((m) => m.id === 'vllm-qwen')).toMatchObject({
      available: true,
      key_variable: 'VLLM_KEY',
    });
    const result = await run('vllm-qwen', 'What is the square root of 16?');
    expect(result).toMatchObject({ tools_used: ['evaluate'], success_rate: 1 });
    expect(vllm.requests.at(-1)!.headers.authorization).toBe(`Bearer ${VLLM_KEY}`);
    expect(vllm.requests.at(-1)!.body.messages.at(-1)).toMatchObject({ tool_call_id: 'chatcmpl-tool-0f00' });
    expect(harness.logs.join('\n')).not.toContain(VLLM_KEY);
    expect(harness.logs.join('\n')).toContain('"keys_handed_over":["VLLM_KEY"]');
  });
});

describe('a gemini model', () => {
  it('offers function declarations, runs the functionCall parts and sends functionResponse parts back', async () => {
    const result = await run('gemini-test', 'What is the average of 3, 5 and 10?');
    expect(result).toMatchObject({
      ai_response: 'Done: What is the average of 3, 5 and 10?',
      tools_used: ['evaluate'],
      success_rate: 1,
      usage: { input_tokens: 360, output_tokens: 24 },
    });
    const [first, second] = gemini.requests;
    expect(first!.path).toBe('/v1beta/models/gemini-3.5-flash:generateContent');
    expect(first!.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    const declared = first!.body.tools[0].functionDeclarations as Array<{ name: string }>;
    expect(declared.map((d) => d.name)).toEqual(['evaluate', 'statistics', 'convert', 'read_resource']);
    expect(first!.body.systemInstruction).toBeDefined();
    const answered = second!.body.contents.at(-1);
    expect(answered.role).toBe('user');
    expect(answered.parts[0].functionResponse).toMatchObject({
      name: 'evaluate',
      response: { output: expect.stringContaining('6') },
    });
  });

  it("answers a refused key as model_not_configured, naming the key's variable", async () => {
    geminiFails = 403;
    const error = await failure('gemini-test');
    expect(error.code).toBe('model_not_configured');
    expect(error.message).toMatch(/Google Gemini refused the engine's GEMINI_API_KEY \(HTTP 403\): denied/);
  });
});

describe('the listing', () => {
  it('says why a model cannot run, and names each wrong entry by file and field', async () => {
    const listed = await harness.service.models();
    const list = Array.isArray(listed) ? { models: listed, problems: [] } : listed;
    const byId = new Map(list.models.map((m) => [m.id, m]));
    expect(list.models[0]).toMatchObject({ id: 'mcpctl-local', default: true, available: true, source: 'built-in' });
    expect(byId.get('local-llm')).toMatchObject({ available: true, provider: 'openai-compatible', model: 'llama3.2' });
    expect(byId.get('down-llm')).toMatchObject({
      available: false,
      reason: 'could not reach http://127.0.0.1:1/v1/models',
    });
    expect(byId.get('claude-sonnet-5-5')).toMatchObject({
      available: false,
      reason: 'ANTHROPIC_API_KEY is not set where the engine runs',
    });
    expect(byId.get('gemini-test')).toMatchObject({ available: true, source: 'settings' });
    expect(list.problems).toEqual([
      {
        path: `${settingsFile}: models[4].id`,
        message: "mcpctl-local is the offline planner's; choose another id",
      },
      {
        path: `${settingsFile}: models[5].base_url`,
        message: 'an openai-compatible model needs the address of its API',
      },
    ]);
  });

  it('reads the settings again when they change, and refuses an unknown id with the ids it has', async () => {
    await writeFile(
      settingsFile,
      JSON.stringify({ models: [...models(), { id: 'later', provider: 'openai-compatible', base_url: ollama.url }] }),
    );
    const error = await failure('gpt-17');
    expect(error.code).toBe('validation_failed');
    expect(error.message).toMatch(/^unknown model gpt-17: this engine has mcpctl-local, claude-sonnet-5-5, .*, later;/);
  });
});
