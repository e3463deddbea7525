import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEST_KEY } from '../support/app.js';
import { runCli, WEATHER_YAML, type Sandbox } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { startProxy, type Proxy } from '../support/proxy.js';

let t: TestEngine;
let server: Proxy;
let sandbox: Sandbox;
let env: Record<string, string>;

beforeEach(async () => {
  t = await startTestEngine();
  server = await startProxy(t.engine.url);
  sandbox = t.sandbox;
  env = { ...t.env, MCPCTL_API_URL: server.url };
  await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML);
});
afterEach(async () => {
  await server.close();
  await t.close();
});

/** WEATHER_YAML whose tool runs a module that throws when it loads: the server cannot start. */
const BROKEN_YAML = `${WEATHER_YAML.replace('template: basic', 'template: custom').replace(
  '      type: static\n      content:\n        - type: text\n          text: Sunny\n',
  '      type: module\n      module: boom.mjs\n',
)}include: [boom.mjs]\n`;

const build = (args: string[] = [], extraEnv: Record<string, string> = {}) =>
  runCli(['build', 'weather.yaml', ...args], { env: { ...env, ...extraEnv }, cwd: sandbox.dir });

describe('mcpctl build', () => {
  it('with no file named, builds ./server.yaml and says so; a folder means its server.yaml', async () => {
    await writeFile(join(sandbox.dir, 'server.yaml'), WEATHER_YAML);
    const result = await runCli(['build'], { env, cwd: sandbox.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('using server.yaml');
    const folder = await runCli(['build', '.', '--json'], { env, cwd: sandbox.dir });
    expect(folder.code, folder.stderr).toBe(0);
    expect(folder.stderr).toContain('building weather from server.yaml');
    await mkdir(join(sandbox.dir, 'empty'));
    const empty = await runCli(['build'], { env, cwd: join(sandbox.dir, 'empty') });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('there is no server.yaml in this folder');
  });

  it('builds and shows the server with next steps', async () => {
    const result = await build();
    expect(result.code).toBe(0);
    const id = (await t.client.listServers())[0]!.mcp_id;
    expect(result.stdout).toContain(`✔ Built weather (${id})`);
    expect(result.stdout).toMatch(/status\s+ready/);
    expect(result.stdout).toMatch(/contents\s+1 tool, 1 resource, 0 prompts/);
    // its page on the dashboard: the API resource of `url` answers 401 to a browser
    expect(result.stdout).toMatch(new RegExp(`page\\s+${t.engine.url}/ui/#/servers/${id}\n`));
    expect(result.stdout).toContain(`→ mcpctl deploy ${id} --env development`);
    expect(result.stdout).toContain(`→ mcpctl test ${id} -m 'What is the forecast in Paris? Use get_forecast.'`);
    expect(result.stderr).toContain('building weather from weather.yaml');
    const body = server.requestsTo('/v1/build')[0]!.body as Record<string, unknown>;
    expect(body.name).toBe('weather');
    expect(body).not.toHaveProperty('deploy');
    expect(body).not.toHaveProperty('tests');
  });

  it('--json prints exactly the server document on stdout', async () => {
    const result = await build(['--json']);
    expect(result.code).toBe(0);
    const doc = result.json();
    expect(doc.mcp_id).toMatch(/^mcp_/);
    expect(doc.status).toBe('ready');
  });

  it('--quiet prints only the id', async () => {
    const result = await build(['--quiet']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^mcp_[a-z0-9]+\n$/);
    expect(result.stderr).toBe('');
  });

  it('passes --idempotency-key through', async () => {
    await build(['--idempotency-key', 'ci-17']);
    expect(server.requestsTo('/v1/build')[0]!.headers['idempotency-key']).toBe('ci-17');
  });

  it('an invalid definition is exit 2 with file:line:column and sends nothing', async () => {
    await writeFile(join(sandbox.dir, 'weather.yaml'), 'name: weather\ntemplate: fancy\n');
    const result = await build();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('weather.yaml:2:11');
    expect(server.requests).toHaveLength(0);
  });

  it('422 build_failed is exit 5, with details mapped to file:line:column', async () => {
    expect(BROKEN_YAML).toContain('module: boom.mjs');
    await writeFile(join(sandbox.dir, 'weather.yaml'), BROKEN_YAML);
    await writeFile(join(sandbox.dir, 'boom.mjs'), 'throw new Error("kaboom at import");\n');
    const result = await build();
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('error: the build failed: the server did not start');
    expect(result.stderr).toMatch(
      /weather\.yaml:14:7 {2}tools\[0\]\.handler {2}cannot load boom\.mjs: kaboom at import/,
    );
    expect(result.stderr).toMatch(/request id: req_/);
  });

  it('401 is exit 3 with a login hint and never shows the key', async () => {
    const result = await build([], { MCPCTL_API_KEY: 'sk-very-secret-value' });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('rejected the API key (from MCPCTL_API_KEY)');
    expect(result.stderr).toContain('check MCPCTL_API_KEY');
    expect(result.stderr).toContain('(from MCPCTL_API_URL)');
    expect(result.stdout + result.stderr).not.toContain('sk-very-secret-value');
  });

  it('401 with --json is one error document', async () => {
    const result = await build(['--json'], { MCPCTL_API_KEY: 'sk-very-secret-value' });
    expect(result.code).toBe(3);
    const doc = result.json();
    expect(doc.error).toMatchObject({ code: 'unauthorized', exit_code: 3 });
    expect(doc.error.request_id).toMatch(/^req_/);
    expect(result.stdout).not.toContain('sk-very-secret-value');
  });

  it('429 with Retry-After is waited for, then the build succeeds', async () => {
    server.inject({
      path: '/v1/build',
      times: 1,
      fault: { type: 'status', status: 429, code: 'rate_limited', retryAfter: '1' },
    });
    const result = await build(['--json']);
    expect(result.code).toBe(0);
    expect(server.requestsTo('/v1/build')).toHaveLength(2);
  });

  it('429 beyond what the CLI waits is exit 4 and says when to retry', async () => {
    server.inject({
      path: '/v1/build',
      fault: { type: 'status', status: 429, code: 'rate_limited', message: 'slow down', retryAfter: '120' },
    });
    const result = await build();
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('is rate-limiting requests: slow down');
    expect(result.stderr).toContain('it is safe to retry after 2 min');
  });

  it('a dropped connection is retried', async () => {
    server.inject({ path: '/v1/build', times: 1, fault: { type: 'drop' } });
    const result = await build();
    expect(result.code).toBe(0);
    expect(server.requestsTo('/v1/build')).toHaveLength(2);
  });

  it('a connection that keeps dropping is exit 4, safe to retry', async () => {
    server.inject({ path: '/v1/build', fault: { type: 'drop' } });
    const result = await build(['--json']);
    expect(result.code).toBe(4);
    expect(result.json().error.code).toBe('unreachable');
    expect(result.stderr).toMatch(
      /cannot reach the service at http:\/\/127\.0\.0\.1:\d+ \(from MCPCTL_API_URL\): the connection was dropped/,
    );
    expect(result.stderr).toContain('it is safe to retry');
  });

  it('500 is exit 4 with the request id', async () => {
    server.inject({ path: '/v1/build', fault: { type: 'status', status: 500, code: 'internal', message: 'boom' } });
    const result = await build();
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('failed (HTTP 500 internal): boom (after 4 attempts)');
    expect(result.stderr).toMatch(/request id: req_/);
  });

  it('an answer outside the contract is a configuration error (exit 3) naming the field', async () => {
    const meta = { request_id: 'req_bad', timestamp: new Date().toISOString() };
    server.inject({
      path: '/v1/build',
      fault: { type: 'raw', status: 200, body: JSON.stringify({ success: true, data: { name: 'weather' }, meta }) },
    });
    const result = await build();
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('answered outside the /v1 contract: data.mcp_id');
    expect(result.stderr).toContain('check that the URL points at a /v1 service of a compatible version');
  });

  it('--request-timeout and MCPCTL_REQUEST_TIMEOUT set how long a request waits; a bad value is configuration', async () => {
    server.inject({ path: '/v1/build', fault: { type: 'slow', ms: 5000 } });
    const flag = await build(['--request-timeout', '0.5', '--json']);
    expect(flag.code).toBe(4);
    expect(flag.json().error).toMatchObject({
      code: 'timeout',
      message: expect.stringContaining('no answer within 0.5 s'),
    });
    expect(flag.json().error.hint).toContain(
      'the build may still go on there: run the same command again with --idempotency-key',
    );
    expect(server.requestsTo('/v1/build')).toHaveLength(1);

    const fromEnv = await runCli(['build', 'weather.yaml'], {
      env: { ...env, MCPCTL_REQUEST_TIMEOUT: '0.5' },
      cwd: sandbox.dir,
    });
    expect(fromEnv.code).toBe(4);
    expect(fromEnv.stderr).toContain('no answer within 0.5 s');

    const bad = await runCli(['build', 'weather.yaml'], {
      env: { ...env, MCPCTL_REQUEST_TIMEOUT: 'soon' },
      cwd: sandbox.dir,
    });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('MCPCTL_REQUEST_TIMEOUT must be a number of seconds > 0, not "soon"');
  });

  it('--debug shows each exchange with the key redacted', async () => {
    const result = await build(['--debug']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/debug: POST http:\/\/127\.0\.0\.1:\d+\/v1\/build → 200 req_\w+ \d+ms/);
    expect(result.stderr).toContain('authorization: Bearer [redacted]');
    expect(result.stderr).not.toContain(TEST_KEY);
  });

  it('a file that does not exist is exit 2', async () => {
    const result = await runCli(['build', 'nope.yaml'], { env, cwd: sandbox.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('nope.yaml does not exist');
  });
});
