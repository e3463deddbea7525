/**
 * `mcpctl models` and `mcpctl engine reload` against a real engine: a model entry added to its
 * engine-settings.json, pointing at an OpenAI-compatible server on loopback (a double that answers
 * as Ollama does), is listed and used by `mcpctl test --model local-llm`, while a running
 * deployment's instances keep their processes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, WEATHER_YAML } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { startProviderDouble, type ProviderDouble } from '../support/provider-double.js';
import { chatAnswer, scriptedChatServer } from '../support/provider-wire.js';

let t: TestEngine;
let llm: ProviderDouble;

beforeAll(async () => {
  llm = await startProviderDouble(
    scriptedChatServer('ollama', () => [{ name: 'get_forecast', args: { city: 'Paris' } }]),
  );
  t = await startTestEngine();
});
afterAll(async () => {
  await t?.close();
  await llm?.close();
});

const cli = (argv: string[]) => runCli(argv, { env: t.env, cwd: t.sandbox.dir });

async function pidsOf(deploymentId: string): Promise<number[]> {
  const { deployment } = await t.client.status(deploymentId);
  return (deployment!.instances ?? []).map((instance) => instance.pid ?? -1);
}

describe('models in the engine settings', () => {
  it('an entry added and reloaded is listed and runs a test, and the running deployment keeps its processes', async () => {
    const deployed = await t.deploy(await t.addServer('steady'), 'production');
    expect(deployed.status).toBe('deployed');
    const before = await pidsOf(deployed.deployment_id);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((pid) => pid > 0)).toBe(true);

    const settings = {
      models: [
        { id: 'local-llm', provider: 'openai-compatible', base_url: `${llm.url}/v1` },
        { id: 'mcpctl-local', provider: 'openai' },
      ],
    };
    await writeFile(join(t.sandbox.env.MCPCTL_HOME!, 'engine-settings.json'), JSON.stringify(settings));
    const reloaded = await cli(['engine', 'reload', '--json']);
    expect(reloaded.code).toBe(0);
    const answer = reloaded.json();
    expect(answer).toMatchObject({ reloaded: true, keys_handed_over: [] });
    expect(answer.models).toContainEqual(
      expect.objectContaining({ id: 'local-llm', provider: 'openai-compatible', available: true }),
    );

    const listed = await cli(['models']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/mcpctl-local \(default\)\s+offline\s+—\s+ready/);
    expect(listed.stdout).toMatch(/local-llm\s+openai-compatible\s+local-llm\s+ready/);
    expect(listed.stdout).toMatch(/claude-sonnet-5-5\s+anthropic\s+claude-sonnet-5-5\s+✖ ANTHROPIC_API_KEY is not set/);
    expect(listed.stdout).toContain(
      "engine-settings.json: models[1].id: mcpctl-local is the offline planner's; choose another id (this entry is left out)",
    );

    await writeFile(join(t.sandbox.dir, 'weather.yaml'), WEATHER_YAML);
    const tested = await cli(['test', 'weather.yaml', '-m', 'Weather in Paris?', '--model', 'local-llm', '--json']);
    expect(tested.code).toBe(0);
    expect(JSON.stringify(tested.json())).toContain('"ai_model":"local-llm"');
    expect(llm.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/v1/chat/completions',
      '/v1/chat/completions',
    ]);

    expect(await pidsOf(deployed.deployment_id)).toEqual(before);
    expect((await t.client.status(deployed.deployment_id)).deployment!.status).toBe('deployed');
  });

  it('runs a file’s cases three times with each of two models, and gives each model its pass rates', async () => {
    const settings = { models: [{ id: 'local-llm', provider: 'openai-compatible', base_url: `${llm.url}/v1` }] };
    await writeFile(join(t.sandbox.env.MCPCTL_HOME!, 'engine-settings.json'), JSON.stringify(settings));
    expect((await cli(['engine', 'reload'])).code).toBe(0);
    // the forecast case alone: the double always asks for the forecast
    await writeFile(join(t.sandbox.dir, 'forecast.yaml'), WEATHER_YAML.replace(/\n {4}- name: notes[\s\S]*$/, '\n'));
    const argv = ['test', 'forecast.yaml', '--runs', '3', '--model', 'mcpctl-local', '--model', 'local-llm', '--json'];
    const tested = await cli(argv);
    expect(tested.code, tested.stderr).toBe(0);
    const report = tested.json<{ models: Array<{ ai_model: string; pass_rate: number; cases: unknown[] }> }>();
    expect(report.models.map((m) => m.ai_model)).toEqual(['mcpctl-local', 'local-llm']);
    for (const model of report.models) {
      expect(model.pass_rate).toBe(1);
      expect(model.cases).toEqual([
        expect.objectContaining({ name: 'forecast', runs: 3, passed_runs: 3, pass_rate: 1 }),
      ]);
    }
  });

  it('a model judge scores the reply against expect.reply, and a criterion it finds unmet fails the case', async () => {
    const verdicts = {
      verdicts: [
        { criterion: 1, passed: true },
        { criterion: 2, passed: false, reason: 'no kelvin' },
      ],
    };
    const judge = await startProviderDouble(() => chatAnswer('vllm', JSON.stringify(verdicts)));
    try {
      const models = [{ id: 'judge-llm', provider: 'openai-compatible', base_url: `${judge.url}/v1` }];
      await writeFile(join(t.sandbox.env.MCPCTL_HOME!, 'engine-settings.json'), JSON.stringify({ models }));
      const criteria = 'reply: ["names Paris", "gives the temperature in kelvin"]';
      const yaml = WEATHER_YAML.replace(/\n {4}- name: notes[\s\S]*$/, '\n').replace(
        'response_contains: [paris]',
        `response_contains: [paris]\n        ${criteria}`,
      );
      await writeFile(join(t.sandbox.dir, 'judged.yaml'), yaml);
      const tested = await cli(['test', 'judged.yaml', '--judge', 'judge-llm', '--json']);
      expect(tested.code, tested.stderr).toBe(7);
      const reply = JSON.stringify(tested.json());
      expect(reply).toContain('"judge":"judge-llm"');
      expect(reply).toContain('"criterion":"gives the temperature in kelvin","passed":false,"reason":"no kelvin"');
      // the judge was asked about this run's reply, with the criteria numbered, and offered no tools
      const asked = judge.requests.find((r) => r.method === 'POST');
      expect(JSON.stringify(asked?.body.messages)).toContain('gives the temperature in kelvin');
      expect(asked?.body.tools).toBeUndefined();
    } finally {
      await judge.close();
    }
  });

  it('an unknown model names the ids the engine has and how to add one', async () => {
    await writeFile(join(t.sandbox.dir, 'weather.yaml'), WEATHER_YAML);
    const result = await cli(['test', 'weather.yaml', '-m', 'hi', '--model', 'gpt-5']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('unknown model gpt-5: the service offers mcpctl-local, claude-sonnet-5-5');
    expect(result.stderr).toContain('`mcpctl models` lists them');
  });
});
