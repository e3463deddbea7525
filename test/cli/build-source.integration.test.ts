/**
 * What the CLI sends as a build's `source`: the definition file as it was typed (relative to the
 * folder the command ran in, never made absolute) and the line and column of each item; a service
 * from before `source` that refuses the field gets the build without it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../support/app.js';
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
  await mkdir(join(sandbox.dir, 'defs'));
  await writeFile(join(sandbox.dir, 'defs', 'weather.yaml'), WEATHER_YAML);
});
afterEach(async () => {
  await server.close();
  await t.close();
});

const sent = () => server.requestsTo('/v1/build').map((request) => request.body as Record<string, unknown>);

describe('the source a build sends', () => {
  it('names the file as typed, relative, with the place of each item', async () => {
    const result = await runCli(['build', './defs/weather.yaml', '--quiet'], { env, cwd: sandbox.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(sent()[0]!.source).toEqual({
      file: 'defs/weather.yaml',
      tools: { get_forecast: { line: 5, column: 5 } },
      resources: { 'notes://today': { line: 19, column: 5 } },
    });
    const definition = await call(t.engine.url, 'GET', `/v1/servers/${result.stdout.trim()}/definition`);
    expect(definition.body.data).toMatchObject({
      file: 'defs/weather.yaml',
      tools: [{ name: 'get_forecast', line: 5 }],
    });
  });

  it('from another folder: relative to it as typed, never the absolute path', async () => {
    const below = join(sandbox.dir, 'defs');
    await runCli(['test', '../defs/weather.yaml', '-m', 'hi', '--json'], { env, cwd: below });
    expect(sent()[0]!.source).toMatchObject({ file: 'weather.yaml' });
    const elsewhere = join(sandbox.dir, 'elsewhere');
    await mkdir(elsewhere);
    await runCli(['build', '../defs/weather.yaml', '--quiet'], { env, cwd: elsewhere });
    expect(sent()[1]!.source).toMatchObject({ file: '../defs/weather.yaml' });
    expect(JSON.stringify(sent())).not.toContain(sandbox.dir);
  });

  it('a service that refuses the unknown field gets the build again without it', async () => {
    server.inject({
      path: '/v1/build',
      times: 1,
      fault: {
        type: 'raw',
        status: 422,
        body: JSON.stringify({
          success: false,
          data: null,
          error: {
            code: 'validation_failed',
            message: 'the request body does not match the contract',
            details: [{ path: 'source', message: 'unknown field' }],
          },
          meta: { request_id: 'req_0123456789abcdef', timestamp: new Date().toISOString() },
        }),
      },
    });
    const result = await runCli(['build', 'defs/weather.yaml', '--quiet', '--idempotency-key', 'ci-9'], {
      env,
      cwd: sandbox.dir,
    });
    expect(result.code, result.stderr).toBe(0);
    const requests = server.requestsTo('/v1/build');
    expect(requests).toHaveLength(2);
    expect(requests[0]!.body).toHaveProperty('source');
    expect(requests[1]!.body).not.toHaveProperty('source');
    expect(requests[1]!.headers['idempotency-key']).toBe('ci-9.plain');
  });
});
