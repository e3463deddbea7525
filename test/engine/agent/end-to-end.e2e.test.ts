/**
 * POST /v1/test on the real engine: through the /v1 client (the engine's own environment
 * reaches the providers; every run is stored), and through the built `bin/mcpctl.cjs` with a
 * background engine in a temp MCPCTL_HOME: one message, then the examples' and scaffolds' own
 * `tests:` cases with the default model. Needs `npm run build` first.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import { ApiError } from '../../../src/api/errors.js';
import { toBuildRequest } from '../../../src/api/build-request.js';
import { loadDefinition } from '../../../src/definition/load.js';
import { startEngine, type RunningEngine } from '../../../src/engine/engine.js';
import { createLogger } from '../../../src/engine/engine-log.js';
import { createSandbox, runBin, type BinResult, type Sandbox } from '../../support/cli.js';
import { BIN, killEngineOf, requireBuilt, tempHome } from '../../support/app.js';
import { openAiCompletion, startProviderDouble, type ProviderDouble } from '../../support/provider-double.js';
import { exampleFile } from '../../support/catalogs.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'guidance');

beforeAll(() => requireBuilt());

describe('POST /v1/test on the engine', () => {
  const KEY = 'engine-key-0123456789abcdefghij0123456789';
  let engine: RunningEngine;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let double: ProviderDouble;
  let client: ApiClient;

  beforeAll(async () => {
    double = await startProviderDouble((_request, index) =>
      index === 0
        ? openAiCompletion(
            {
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'whoami', arguments: '{}' } }],
            },
            'tool_calls',
          )
        : openAiCompletion({ content: 'You are bob.' }, 'stop'),
    );
    home = await tempHome();
    engine = await startEngine({
      home: home.dir,
      host: '127.0.0.1',
      port: 0,
      apiKey: KEY,
      version: '0.0.0-test',
      logger: createLogger({ write: () => {} }),
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${double.url}/v1` },
      deployments: false,
    });
    client = new ApiClient({ baseUrl: engine.url, apiKey: KEY, retry: { attempts: 1 } });
  });

  afterAll(async () => {
    await engine?.close();
    await double?.close();
    await home?.cleanup();
  });

  it('runs the default model as the given user, and stores the run', async () => {
    const { mcp_id: mcpId } = await client.build(await toBuildRequest(await loadDefinition(exampleFile('notes'))));
    const result = await client.test({
      mcp_id: mcpId,
      message: 'What did I write down today?',
      context: { user_id: 'alice' },
    });
    expect(result).toMatchObject({
      ai_model: 'mcpctl-local',
      tools_used: [],
      resources_accessed: ['notes://me/today'],
      success_rate: 1,
    });
    expect(result.ai_response).toContain('Call the venue about the offsite');
    const runs = await engine.store.listTestRuns();
    expect(runs[0]).toMatchObject({
      mcpId,
      request: { message: 'What did I write down today?', context: { user_id: 'alice' } },
      result: { resources_accessed: ['notes://me/today'] },
    });
  });

  it("reaches a provider through the engine's environment", async () => {
    const { mcp_id: mcpId } = await client.build(await toBuildRequest(await loadDefinition(exampleFile('notes'))));
    const result = await client.test({
      mcp_id: mcpId,
      message: 'Who am I?',
      ai_model: 'gpt-5.4-mini',
      context: { user_id: 'bob' },
    });
    expect(result).toMatchObject({
      ai_model: 'gpt-5.4-mini',
      ai_response: 'You are bob.',
      tools_used: ['whoami'],
      success_rate: 1,
    });
    expect(double.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', content: 'You are bob on notes.' });
  });

  it('answers 501 model_not_configured, without Retry-After, for a model whose key the engine lacks; GET /v1/models says so first', async () => {
    expect(await client.models()).toEqual([
      { id: 'mcpctl-local', default: true, available: true, source: 'built-in' },
      {
        id: 'claude-sonnet-5-5',
        available: false,
        key_variable: 'ANTHROPIC_API_KEY',
        reason: 'ANTHROPIC_API_KEY is not set where the engine runs',
        provider: 'anthropic',
        model: 'claude-sonnet-5-5',
        source: 'built-in',
      },
      {
        id: 'gpt-5.4-mini',
        available: true,
        key_variable: 'OPENAI_API_KEY',
        provider: 'openai',
        model: 'gpt-5.4-mini',
        source: 'built-in',
      },
      {
        id: 'gemini-3.5-flash',
        available: false,
        key_variable: 'GEMINI_API_KEY',
        reason: 'GEMINI_API_KEY is not set where the engine runs',
        provider: 'gemini',
        model: 'gemini-3.5-flash',
        source: 'built-in',
      },
    ]);
    const { mcp_id: mcpId } = await client.build(await toBuildRequest(await loadDefinition(exampleFile('calculator'))));
    const error = await client.test({ mcp_id: mcpId, message: 'hi', ai_model: 'claude-sonnet-5-5' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 501,
      code: 'model_not_configured',
      retryAfter: undefined,
      message: expect.stringContaining('ANTHROPIC_API_KEY'),
    });
    expect((error as ApiError).details).toEqual([{ path: 'ai_model', message: 'needs ANTHROPIC_API_KEY' }]);
  });

  it('carries the guidance of the run, with the case’s expected tools', async () => {
    const { mcp_id: mcpId } = await client.build(await toBuildRequest(await loadDefinition(exampleFile('calculator'))));
    const result = await client.test({
      mcp_id: mcpId,
      message: 'What is 12 * (3 + 4)?',
      expect: { tools: ['evaluate'] },
    });
    expect(result).toMatchObject({
      tools_used: ['evaluate'],
      success_rate: 1,
      guidance: { band: 'all tool calls worked', causes: [] },
    });
    const nothing = await client.test({ mcp_id: mcpId, message: 'What is the capital of Mongolia?' });
    expect(nothing).toMatchObject({
      tools_used: [],
      success_rate: 0,
      guidance: { band: 'major issues', causes: [{ kind: 'not_understood' }] },
    });
    // a case that expects no tool: nothing used is what it wanted
    const declined = await client.test({
      mcp_id: mcpId,
      message: 'What is the capital of Mongolia?',
      expect: { tools: [] },
    });
    expect(declined.guidance).toEqual({ band: 'major issues', causes: [] });
  });
});

describe('mcpctl test, end to end', () => {
  const boxes: Sandbox[] = [];
  afterEach(async () => {
    for (const box of boxes.splice(0)) {
      await mcpctl(box, ['engine', 'stop']);
      killEngineOf(box.env.MCPCTL_HOME!);
      await box.cleanup();
    }
  });

  function mcpctl(box: Sandbox, args: string[], cwd = box.dir): Promise<BinResult> {
    return runBin(BIN, args, { env: { ...box.env, NO_COLOR: '1' }, cwd });
  }

  it(
    'tests the calculator with a message, then with its own cases; the notes example as its user',
    { timeout: 120_000 },
    async () => {
      const box = await createSandbox();
      boxes.push(box);
      const asked = await mcpctl(box, ['test', exampleFile('calculator'), '-m', 'What is 12 * (3 + 4)?']);
      expect(asked.code, asked.stderr).toBe(0);
      expect(asked.stdout).toContain('I called evaluate with {"expression":"12 * (3 + 4)"}');
      expect(asked.stdout).toContain('"result": 84');
      expect(asked.stdout).toMatch(/tools used\s+evaluate/);
      expect(asked.stdout).toMatch(/success rate\s+100%/);

      const cases = await mcpctl(box, ['test', exampleFile('calculator'), '--json']);
      expect(cases.code, cases.stderr).toBe(0);
      const report = JSON.parse(cases.stdout);
      expect(report).toMatchObject({
        passed: true,
        server: 'calculator',
        cases: [{ name: 'arithmetic', passed: true, result: { tools_used: ['evaluate'] } }],
      });

      const notes = await mcpctl(box, ['test', exampleFile('notes'), '--json']);
      expect(notes.code, notes.stderr).toBe(0);
      expect(JSON.parse(notes.stdout)).toMatchObject({
        passed: true,
        cases: [{ user_id: 'alice', result: { resources_accessed: ['notes://me/today'] } }],
      });
    },
  );

  it('a question the server is not about is exit 7, naming not_understood', { timeout: 60_000 }, async () => {
    const box = await createSandbox();
    boxes.push(box);
    const result = await mcpctl(box, ['test', exampleFile('calculator'), '-m', 'What is the capital of Mongolia?']);
    expect(result.code, result.stderr).toBe(7);
    expect(result.stdout).toMatch(/success rate\s+0% \(major issues\)/);
    expect(result.stdout).toContain('cause not_understood: no tool or resource on this server matched the request');
  });

  it(
    'up: a failing case deploys nothing (exit 7); passing cases deploy and print the URL',
    { timeout: 120_000 },
    async () => {
      const box = await createSandbox();
      boxes.push(box);
      const failing = await mcpctl(box, ['up', join(FIXTURES, 'similar-descriptions.yaml')]);
      expect(failing.code, failing.stderr).toBe(7);
      expect(failing.stdout).toContain('cause similar_descriptions');
      const none = await mcpctl(box, ['ls', '--deployments', '--json']);
      expect(JSON.parse(none.stdout).deployments).toEqual([]);

      const passing = await mcpctl(box, ['up', join(FIXTURES, 'healthy.yaml'), '--env', 'development']);
      expect(passing.code, passing.stderr).toBe(0);
      const deployed = JSON.parse((await mcpctl(box, ['ls', '--deployments', '--json'])).stdout).deployments;
      expect(deployed).toHaveLength(1);
      expect(deployed[0]).toMatchObject({ status: 'deployed', environment: 'development' });
      expect(passing.stdout).toContain(`url           ${deployed[0].url}`);
      expect(passing.stdout).toContain(
        // the URL that keeps answering across deploys: the stable name's path, not the deployment's own
        `✔ up: rates validated, built (${deployed[0].mcp_id}), 1 of 1 case passed, deployed at ${new URL(deployed[0].url).origin}/d/rates.development/mcp`,
      );
    },
  );

  it(
    'passes every case of the init scaffolds with the default model; a failed call is exit 7',
    { timeout: 180_000 },
    async () => {
      const box = await createSandbox();
      boxes.push(box);
      for (const template of ['basic', 'advanced', 'custom']) {
        const init = await mcpctl(box, ['init', template, '--template', template, '--yes']);
        expect(init.code, init.stderr).toBe(0);
        const run = await mcpctl(box, ['test', join(box.dir, template, 'server.yaml'), '--json']);
        expect(run.code, `${template}: ${run.stdout}${run.stderr}`).toBe(0);
        const report = JSON.parse(run.stdout);
        expect(report.cases.length).toBeGreaterThan(1);
        expect(report.cases.every((c: { passed: boolean }) => c.passed)).toBe(true);
      }
      // a message nothing on the server fits tested nothing: not a pass
      const unknown = await mcpctl(box, [
        'test',
        join(box.dir, 'basic', 'server.yaml'),
        '-m',
        'Tell me a joke about cats',
      ]);
      expect(unknown.code, unknown.stderr).toBe(7);
      expect(unknown.stdout).toContain('did not find a tool or resource');
      expect(unknown.stdout).toContain('cause not_understood:');
      // my_tasks needs the caller's id: without --user-id its call fails
      const failed = await mcpctl(box, [
        'test',
        join(box.dir, 'custom', 'server.yaml'),
        '-m',
        'What is on my task list?',
      ]);
      expect(failed.code).toBe(7);
      expect(failed.stdout).toMatch(
        /cause failed_calls: my_tasks: its call failed; the handler failed with an error: Tool "my_tasks" failed: no user id/,
      );
      expect(failed.stdout).toMatch(/→ my_tasks is defined at .*custom\/server\.yaml:\d+:\d+/);
      expect(failed.stderr).toContain('1 of 1 test case failed');
    },
  );
});
