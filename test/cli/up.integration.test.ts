/**
 * `mcpctl up` against the engine (test/support/engine.ts, through a recording proxy): validate, build, test, deploy in one gated step;
 * the first failing step's exit code, nothing deployed after a failed case, one JSON document,
 * and, in GitHub Actions, annotations, the job summary and the step outputs.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Deployment } from '../../src/api/contract.js';
import { runCli, WEATHER_YAML, type Sandbox } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { startProxy, type Proxy } from '../support/proxy.js';

// one engine for the file (without model keys: only mcpctl-local can test); a new proxy per test
let t: TestEngine;
let server: Proxy;
let sandbox: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestEngine();
  sandbox = t.sandbox;
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  server = await startProxy(t.engine.url);
  env = { ...t.env, MCPCTL_API_URL: server.url, WEATHER_TOKEN: 'tok-123' };
  await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML);
  // GitHub Actions' files start empty in each test
  for (const file of ['summary.md', 'output.txt']) await rm(join(sandbox.dir, file), { force: true });
});
afterEach(async () => {
  await server.close();
});

const up = (args: string[], extra: Record<string, string> = {}) =>
  runCli(['up', ...args], { env: { ...env, ...extra }, cwd: sandbox.dir });
const paths = () => server.requests.map((r) => `${r.method} ${r.path.replace(/deploy_\w+/, 'deploy_ID')}`);
/** The engine's newest deployment. */
const latest = async (): Promise<Deployment> =>
  (await t.client.listDeployments()).sort((a, b) => (b.created_at ?? '').localeCompare(a.created_at ?? ''))[0]!;

/** Cases whose messages nothing on the server matches: the agent uses nothing, every case fails. */
async function agentThatUsesNothing() {
  const yaml = WEATHER_YAML.replace('What is the forecast in Paris? Use get_forecast.', 'Sing me a song.').replace(
    'Read notes://today please',
    'Tell me a joke.',
  );
  expect(yaml).not.toContain('Paris');
  await writeFile(join(sandbox.dir, 'weather.yaml'), yaml);
}

describe('mcpctl up', () => {
  it('with passing cases: validates, builds, tests, deploys, and prints the URL', async () => {
    const result = await up(['weather.yaml']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('✔ weather.yaml is valid: weather, 1 tool, 1 resource, 0 prompts');
    expect(result.stdout).toMatch(/✔ Built weather \(mcp_\w+\)/);
    expect(result.stdout).toContain('✔ 2 of 2 cases passed (threshold 0.9)');
    expect(result.stdout).toContain('✔ Deployed weather to staging');
    expect(result.stdout).toContain(`✔ up: weather validated, built (mcp_`);
    // the URL that follows redeploys, not this deployment's own
    expect(result.stdout).toContain(`deployed at ${t.engine.url}/d/weather.staging/mcp`);
    expect(paths().filter((p) => !p.includes('/status'))).toEqual([
      'POST /v1/build',
      'POST /v1/test',
      'POST /v1/test',
      // what runs now under that name, so that a deploy that replaces it says so
      'GET /v1/deployments',
      'POST /v1/deploy',
    ]);
    expect(server.requestsTo('/v1/deploy')[0]!.body).toMatchObject({
      environment: 'staging',
      config: { env_vars: { API_TOKEN: 'tok-123' } },
    });
    // no long-poll without the version already seen: it would wait for a change that may have happened
    expect(
      server
        .requestsTo(/\/status$/)
        .filter((r) => r.query.get('wait') !== null && r.headers['if-none-match'] === undefined),
    ).toEqual([]);
  });

  it('with a failing case: the test-failure code, and nothing is deployed', async () => {
    await agentThatUsesNothing();
    const before = (await t.client.listDeployments()).length;
    const result = await up(['weather.yaml']);
    expect(result.code).toBe(7);
    expect(result.stdout).toContain('cause not_understood');
    expect(result.stderr).toContain('error: 2 of 2 test cases failed, so weather was not deployed');
    expect(server.requestsTo('/v1/deploy')).toHaveLength(0);
    expect(await t.client.listDeployments()).toHaveLength(before);
  });

  it('--json: one document with each step; a failed step ends the run and the rest are skipped with the reason', async () => {
    await agentThatUsesNothing();
    const result = await up(['weather.yaml', '--json']);
    expect(result.code).toBe(7);
    const doc = result.json();
    expect(doc).toMatchObject({ ok: false, exit_code: 7, failed_step: 'test' });
    expect(doc.steps.map((s: { step: string; status: string }) => `${s.step}:${s.status}`)).toEqual([
      'validate:ok',
      'build:ok',
      'test:failed',
      'deploy:skipped',
    ]);
    expect(doc.steps[0].result).toMatchObject({ valid: true, name: 'weather' });
    expect(doc.steps[1].result.mcp_id).toMatch(/^mcp_/);
    expect(doc.steps[2].result.cases[0].guidance.causes[0].kind).toBe('not_understood');
    expect(doc.steps[2].error).toMatchObject({ code: 'test_failed', exit_code: 7 });
    expect(doc.steps[3]).toEqual({ step: 'deploy', status: 'skipped', reason: 'not run: the test step failed' });
  });

  it('--json on success: every step ok, the deployment in the last', async () => {
    const result = await up(['weather.yaml', '--json', '--env', 'production']);
    expect(result.code).toBe(0);
    const doc = result.json();
    expect(doc).toMatchObject({ ok: true, exit_code: 0 });
    expect(doc.failed_step).toBeUndefined();
    expect(doc.steps.at(-1)).toMatchObject({
      step: 'deploy',
      status: 'ok',
      result: { status: 'deployed', environment: 'production' },
    });
  });

  it('an invalid definition: exit 2, every problem, no request', async () => {
    await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML.replace('template: basic', 'template: fancy'));
    const result = await up(['weather.yaml', '--json']);
    expect(result.code).toBe(2);
    expect(result.json().steps[0]).toMatchObject({
      step: 'validate',
      status: 'failed',
      error: { code: 'invalid_definition', problems: [{ where: 'weather.yaml:3:11', path: 'template' }] },
    });
    expect(server.requests).toHaveLength(0);
  });

  it('a deployment variable that is not set fails before anything is built', async () => {
    const result = await up(['weather.yaml'], { WEATHER_TOKEN: '' });
    const unset = await runCli(['up', 'weather.yaml', '--json'], {
      env: Object.fromEntries(Object.entries(env).filter(([k]) => k !== 'WEATHER_TOKEN')),
      cwd: sandbox.dir,
    });
    expect(unset.code).toBe(3); // configuration: the environment does not set it
    expect(unset.json().steps.map((s: { status: string }) => s.status)).toEqual([
      'failed',
      'skipped',
      'skipped',
      'skipped',
    ]);
    expect(unset.json().steps[0].error.message).toContain('WEATHER_TOKEN');
    expect(result.code).toBe(0);
    expect(server.requestsTo('/v1/build')).toHaveLength(1);
  }, 90_000); // two whole runs

  it('a test model the service cannot run: exit 3 (configuration) before the build', async () => {
    // the engine's environment has no OPENAI_API_KEY
    const result = await up(['weather.yaml', '--model', 'gpt-5.4-mini', '--json']);
    expect(result.code).toBe(3);
    expect(result.json().steps.map((s: { step: string; status: string }) => `${s.step}:${s.status}`)).toEqual([
      'validate:ok',
      'build:skipped',
      'test:failed',
      'deploy:skipped',
    ]);
    expect(paths()).toEqual(['GET /v1/models']);
  });

  it('a failed build is exit 5; a failed deployment exit 6', async () => {
    // a tool whose module throws when it loads: the server cannot start
    const broken = WEATHER_YAML.replace('template: basic', 'template: custom').replace(
      '      type: static\n      content:\n        - type: text\n          text: Sunny\n',
      '      type: module\n      module: boom.mjs\n',
    );
    expect(broken).toContain('module: boom.mjs');
    await writeFile(join(sandbox.dir, 'weather.yaml'), `${broken}include: [boom.mjs]\n`);
    await writeFile(join(sandbox.dir, 'boom.mjs'), 'throw new Error("boom");\n');
    const build = await up(['weather.yaml']);
    expect(build.code).toBe(5);
    expect(build.stderr).toContain('weather.yaml:14:7  tools[0].handler  cannot load boom.mjs: boom');
    // a server that builds and passes its tests, and whose instances exit at start (test/fixtures/instance)
    await writeFile(join(sandbox.dir, 'weather.yaml'), `${WEATHER_YAML}include: [fixture.json]\n`);
    await writeFile(join(sandbox.dir, 'fixture.json'), JSON.stringify({ failStart: true }));
    const deploy = await up(['weather.yaml', '--json']);
    expect(deploy.code).toBe(6);
    expect(deploy.json().steps.at(-1)).toMatchObject({
      step: 'deploy',
      status: 'failed',
      result: { status: 'failed' },
      error: { code: 'deploy_failed' },
    });
  });

  it('a definition without tests: cases deploys, and says nothing tested it', async () => {
    await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML.slice(0, WEATHER_YAML.indexOf('tests:')));
    const result = await up(['weather.yaml', '--json']);
    expect(result.code).toBe(0);
    expect(result.json().steps[2]).toEqual({
      step: 'test',
      status: 'skipped',
      reason: 'weather.yaml has no tests: cases',
    });
    expect(result.stderr).toContain('nothing tests weather before it is deployed');
  });

  it('--quiet prints the MCP URL alone', async () => {
    const result = await up(['weather.yaml', '--quiet']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${t.engine.url}/d/weather.staging/mcp\n`);
  });
});

describe('in GitHub Actions', () => {
  const github = () => ({
    GITHUB_ACTIONS: 'true',
    GITHUB_STEP_SUMMARY: join(sandbox.dir, 'summary.md'),
    GITHUB_OUTPUT: join(sandbox.dir, 'output.txt'),
    GITHUB_WORKSPACE: sandbox.dir,
  });

  it('up fills the job summary and the step outputs', async () => {
    const result = await up(['weather.yaml'], github());
    expect(result.code).toBe(0);
    const { deployment_id: id, url } = await latest();
    const summary = await readFile(join(sandbox.dir, 'summary.md'), 'utf8');
    expect(summary).toContain('### ✅ mcpctl up: weather');
    expect(summary).toContain('| test | ✅ ok | 2 of 2 cases passed |');
    expect(summary).toContain('| forecast | ✅ passed | 100% (all tool calls worked) | get_forecast | — |');
    expect(summary).toContain(`| url | ${url} |`);
    const outputs = await readFile(join(sandbox.dir, 'output.txt'), 'utf8');
    expect(outputs).toMatch(
      new RegExp(`^mcp_id=mcp_\\w+\\ndeployment_id=${id}\\nurl=${url.replace(/[.]/g, '\\.')}\\nstatus=deployed\\n$`),
    );
  });

  it('a failed case is an error on its line, its causes warnings on their tools; the outputs say which step failed', async () => {
    await agentThatUsesNothing();
    const result = await up(['weather.yaml'], github());
    expect(result.code).toBe(7);
    expect(result.stdout).toContain(
      '::error file=weather.yaml,line=39,col=7,title=mcpctl test::test case "forecast" failed: the agent used no tool and no resource',
    );
    expect(await readFile(join(sandbox.dir, 'output.txt'), 'utf8')).toMatch(/^mcp_id=mcp_\w+\nstatus=test_failed\n$/);
    expect(await readFile(join(sandbox.dir, 'summary.md'), 'utf8')).toContain(
      '| deploy | ⏭️ skipped | not run: the test step failed |',
    );
  });

  it('a broken definition prints ::error lines with file, line and column', async () => {
    await writeFile(
      join(sandbox.dir, 'weather.yaml'),
      WEATHER_YAML.replace('template: basic', 'template: fancy').replace(
        '    description: Get the weather forecast for a city\n',
        '',
      ),
    );
    for (const command of [
      ['validate', 'weather.yaml'],
      ['up', 'weather.yaml'],
    ]) {
      const result = await runCli(command, { env: { ...env, ...github() }, cwd: sandbox.dir });
      expect(result.code).toBe(2);
      expect(result.stdout.split('\n').filter((l) => l.startsWith('::'))).toEqual([
        '::error file=weather.yaml,line=3,col=11::template: must be one of basic, advanced, custom',
        '::error file=weather.yaml,line=5,col=5::tools[0].description: missing required field "description"',
      ]);
    }
  });

  it('warnings are ::warning lines; nothing of the kind with --json or outside GitHub Actions', async () => {
    await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML);
    const warned = await runCli(['validate', 'weather.yaml'], { env: { ...env, ...github() }, cwd: sandbox.dir });
    expect(warned.stdout).toContain(
      '::warning file=weather.yaml,line=11,col=11::tools[0].inputSchema.properties.city: the required parameter "city" has no description',
    );
    const json = await runCli(['validate', 'weather.yaml', '--json'], {
      env: { ...env, ...github() },
      cwd: sandbox.dir,
    });
    expect(json.stdout).not.toContain('::');
    expect(() => JSON.parse(json.stdout) as unknown).not.toThrow();
    const plain = await runCli(['validate', 'weather.yaml'], { env, cwd: sandbox.dir });
    expect(plain.stdout).not.toContain('::');
  });

  it('build and deploy write their outputs; test and deploy their summaries', async () => {
    const built = await runCli(['build', 'weather.yaml'], { env: { ...env, ...github() }, cwd: sandbox.dir });
    expect(built.code).toBe(0);
    const deployed = await runCli(['deploy', 'weather.yaml', '--env', 'development'], {
      env: { ...env, ...github() },
      cwd: sandbox.dir,
    });
    expect(deployed.code).toBe(0);
    const tested = await runCli(['test', 'weather.yaml'], { env: { ...env, ...github() }, cwd: sandbox.dir });
    expect(tested.code).toBe(0);
    const outputs = (await readFile(join(sandbox.dir, 'output.txt'), 'utf8')).split('\n');
    expect(outputs[0]).toMatch(/^mcp_id=mcp_\w+$/);
    expect(outputs).toContain('status=ready');
    expect(outputs).toContain('status=deployed');
    const summary = await readFile(join(sandbox.dir, 'summary.md'), 'utf8');
    expect(summary).toContain('### ✅ mcpctl deploy: weather — deployed');
    expect(summary).toContain('### ✅ mcpctl test: weather — 2 of 2 cases passed');
  });
});
