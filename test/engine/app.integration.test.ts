/**
 * The HTTP layer through a real loopback socket: every error code of docs/api.md with a real
 * request, the envelope and request ids, auth, idempotency, rate limiting, long-poll and log
 * streaming. Services are fakes here; builder.integration.test.ts and contract.integration.test.ts use the real ones.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { AnyEnvelope, Deployment, ERROR_CODES, McpServer } from '../../src/api/contract.js';
import { ServiceError } from '../../src/engine/service-error.js';
import {
  call,
  fakeBuilds,
  fakeDeployments,
  startTestApp,
  TEST_KEY,
  waitFor,
  weatherDefinition,
  type Answer,
  type TestApp,
} from '../support/app.js';
import { waitUntil } from '../support/wait.js';

let target: TestApp | undefined;
afterEach(async () => {
  await target?.close();
  target = undefined;
});

async function start(options: Parameters<typeof startTestApp>[0] = {}): Promise<TestApp> {
  target = await startTestApp(options);
  return target;
}

function expectError(answer: Answer, status: number, code: keyof typeof ERROR_CODES): void {
  expect(answer.status, answer.text).toBe(status);
  expect(ERROR_CODES[code]).toBe(status);
  expect(AnyEnvelope.safeParse(answer.body).success).toBe(true);
  expect(answer.body.success).toBe(false);
  expect(answer.body.error.code).toBe(code);
  expect(answer.body.error.message).toEqual(expect.any(String));
  expect(answer.body.meta.request_id).toMatch(/^req_[a-z0-9]{16}$/);
  expect(answer.headers.get('x-request-id')).toBe(answer.body.meta.request_id);
  expect(Number.isNaN(Date.parse(answer.body.meta.timestamp))).toBe(false);
}

describe('auth', () => {
  it('answers 401 unauthorized without a key, with a wrong key and with another scheme', async () => {
    const { url } = await start();
    for (const init of [
      { key: null },
      { key: 'wrong' },
      { key: `${TEST_KEY}x` },
      { key: null, headers: { authorization: `Basic ${TEST_KEY}` } },
    ]) {
      const answer = await call(url, 'GET', '/v1/servers', init);
      expectError(answer, 401, 'unauthorized');
      expect(answer.headers.get('www-authenticate')).toContain('Bearer');
      expect(answer.body.data).toBeNull();
    }
    expect((await call(url, 'GET', '/v1/servers')).status).toBe(200);
  });

  it('checks the key before telling whether a route exists', async () => {
    const { url } = await start();
    expectError(await call(url, 'GET', '/v1/no-such-route', { key: null }), 401, 'unauthorized');
  });

  it('hands the data plane to the deployment service before auth', async () => {
    let deployments!: ReturnType<typeof fakeDeployments>;
    const { url } = await start((store) => ({ deployments: (deployments = fakeDeployments(store)) }));
    const answer = await call(url, 'GET', '/d/deploy_abc/health', { key: null });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ gateway: true });
    expect(deployments.gatewayCalls).toBe(1);
    // not a deployment path, not /v1: 404 with the envelope
    expectError(await call(url, 'GET', '/elsewhere', { key: null }), 404, 'not_found');
  });
});

describe('request errors', () => {
  it('404 for unknown routes and ids, 405 with Allow for a wrong method', async () => {
    const { url } = await start();
    expectError(await call(url, 'GET', '/v1/nothing'), 404, 'not_found');
    expectError(await call(url, 'GET', '/v1/servers/mcp_unknown'), 404, 'not_found');
    expectError(await call(url, 'GET', '/v1/servers/not-an-id'), 404, 'not_found');
    expectError(await call(url, 'GET', '/v1/deploy/deploy_unknown/status'), 404, 'not_found');
    const wrong = await call(url, 'DELETE', '/v1/build');
    expectError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('POST');
    const get = await call(url, 'PUT', '/v1/servers');
    expect(get.headers.get('allow')).toBe('GET, HEAD');
  });

  it('415 for a body that is not JSON, 400 invalid_json for malformed or missing JSON', async () => {
    const { url } = await start();
    const body = JSON.stringify(weatherDefinition());
    expectError(
      await call(url, 'POST', '/v1/build', { body, headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    expectError(await call(url, 'POST', '/v1/build', { body }), 415, 'unsupported_media_type');
    expectError(
      await call(url, 'POST', '/v1/build', { body: '{"name":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_json',
    );
    expectError(
      await call(url, 'POST', '/v1/build', { headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_json',
    );
    // a charset parameter is fine
    const ok = await call(url, 'POST', '/v1/build', {
      body,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(ok.status).toBe(200);
  });

  it('422 validation_failed names every field by its JSON path', async () => {
    const { url } = await start();
    const definition = weatherDefinition();
    const answer = await call(url, 'POST', '/v1/build', {
      json: { ...definition, template: 'fancy', colour: 1, tools: [{ ...definition.tools[0], name: 'bad name!' }] },
    });
    expectError(answer, 422, 'validation_failed');
    const details = answer.body.error.details as Array<{ path: string; message: string }>;
    expect(details.map((d) => d.path)).toEqual(expect.arrayContaining(['template', 'colour', 'tools[0].name']));
    expect(details.find((d) => d.path === 'colour')!.message).toBe('unknown field');
    // wrong types and a body that is not an object
    const types = await call(url, 'POST', '/v1/deploy', { json: { mcp_id: 42, environment: 'moon' } });
    expect(types.body.error.details.map((d: { path: string }) => d.path)).toEqual(
      expect.arrayContaining(['mcp_id', 'environment']),
    );
    expectError(await call(url, 'POST', '/v1/build', { json: [1, 2] }), 422, 'validation_failed');
  });

  it('422 for counts over the limits and duplicate tool names', async () => {
    const { url } = await start();
    const definition = weatherDefinition();
    const tools = Array.from({ length: 257 }, (_, i) => ({ ...definition.tools[0], name: `t${i}` }));
    const many = await call(url, 'POST', '/v1/build', { json: { ...definition, tools } });
    expectError(many, 422, 'validation_failed');
    expect(many.body.error.details[0].path).toBe('tools');
    const twice = await call(url, 'POST', '/v1/build', {
      json: { ...definition, tools: [definition.tools[0], definition.tools[0]] },
    });
    expect(twice.body.error.details[0].path).toBe('tools[1]');
  });

  it('422 for JSON nested deeper than the limit, without a 500', async () => {
    const { url } = await start();
    const deep = `{"name":"x","template":"basic","tools":[{"name":"a","description":"b","inputSchema":{"type":"object"},"handler":{"type":"http","url":"http://x","body":${'['.repeat(100_000)}${']'.repeat(100_000)}}}]}`;
    expectError(
      await call(url, 'POST', '/v1/build', { body: deep, headers: { 'content-type': 'application/json' } }),
      422,
      'validation_failed',
    );
  });

  it('413 payload_too_large over the body limit (declared or streamed)', async () => {
    const { url } = await start({ limits: { bodyBytes: 4096 } });
    const big = JSON.stringify({ ...weatherDefinition(), description: 'x'.repeat(10_000) });
    expectError(
      await call(url, 'POST', '/v1/build', { body: big, headers: { 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    );
    // chunked, no Content-Length: stopped once it passes the limit
    const answer = await new Promise<{ status: number; body: { error: { code: string } } }>((resolve, reject) => {
      const req = httpRequest(`${url}/v1/build`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TEST_KEY}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        },
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            body: JSON.parse(Buffer.concat(chunks).toString()) as { error: { code: string } },
          }),
        );
      });
      req.on('error', reject);
      for (let i = 0; i < 3; i++) req.write('x'.repeat(2000));
      req.end();
    });
    expect(answer.status).toBe(413);
    expect(answer.body.error.code).toBe('payload_too_large');
  });

  it('400 bad_request for malformed query parameters and Idempotency-Key', async () => {
    const { url, store } = await start((store) => ({ deployments: fakeDeployments(store) }));
    const mcp = (await fakeBuilds(store).build(weatherDefinition())).server.mcp_id;
    const deployed = await call(url, 'POST', '/v1/deploy', { json: { mcp_id: mcp, environment: 'development' } });
    const id = deployed.body.data.deployment_id as string;
    for (const query of ['wait=abc', 'wait=61', 'wait=-1']) {
      const answer = await call(url, 'GET', `/v1/deploy/${id}/status?${query}`);
      expectError(answer, 400, 'bad_request');
      expect(answer.body.error.details[0].path).toBe('query.wait');
    }
    expectError(await call(url, 'GET', `/v1/deploy/${id}/logs?limit=0`), 400, 'bad_request');
    expectError(await call(url, 'GET', `/v1/deploy/${id}/logs?since=yesterday`), 400, 'bad_request');
    expectError(await call(url, 'GET', `/v1/deploy/${id}/metrics?window=86401`), 400, 'bad_request');
    expectError(await call(url, 'GET', '/v1/deployments?environment=moon'), 400, 'bad_request');
    expectError(
      await call(url, 'POST', '/v1/build', {
        json: weatherDefinition(),
        headers: { 'idempotency-key': 'x'.repeat(201) },
      }),
      400,
      'bad_request',
    );
  });
});

describe('idempotency', () => {
  it('replays the stored answer for the same key and body, without building again', async () => {
    let builds!: ReturnType<typeof fakeBuilds>;
    const { url } = await start((store) => ({ builds: (builds = fakeBuilds(store)) }));
    const headers = { 'idempotency-key': 'ci-run-42' };
    const first = await call(url, 'POST', '/v1/build', { json: weatherDefinition(), headers });
    const second = await call(url, 'POST', '/v1/build', { json: weatherDefinition(), headers });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.meta.request_id).toBe(second.headers.get('x-request-id'));
    expect(builds.calls).toBe(1);
    expectError(
      await call(url, 'POST', '/v1/build', { json: weatherDefinition('other'), headers }),
      422,
      'idempotency_mismatch',
    );
    // the same key on another route is another request
    expect(
      (await call(url, 'POST', '/v1/test', { json: { mcp_id: first.body.data.mcp_id, message: 'hi' }, headers }))
        .status,
    ).toBe(501);
  });

  it('a retry while the first request with the key still runs waits for it and replays its answer', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let builds!: ReturnType<typeof fakeBuilds>;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const { url, logs } = await start((store) => ({
      builds: (builds = fakeBuilds(store, async () => {
        started();
        await gate;
      })),
    }));
    const headers = { 'idempotency-key': 'slow-one' };
    const first = call(url, 'POST', '/v1/build', { json: weatherDefinition(), headers });
    await running;
    const retry = call(url, 'POST', '/v1/build', { json: weatherDefinition(), headers });
    // another body with the key in use is refused at once
    expectError(
      await call(url, 'POST', '/v1/build', { json: weatherDefinition('other'), headers }),
      422,
      'idempotency_mismatch',
    );
    await waitFor('the retry to wait', () =>
      logs.some((line) => String(line.msg).startsWith('waiting for the earlier request')) ? true : undefined,
    );
    release();
    const [original, replayed] = await Promise.all([first, retry]);
    expect(original.status).toBe(200);
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data).toEqual(original.body.data);
    expect(builds.calls).toBe(1);
  });

  it('an answer that is not final (500) is not stored: the retry that waited runs the request itself', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let fail = true;
    const { url, logs } = await start((store) => ({
      builds: {
        build: async (request) => {
          if (fail) {
            fail = false;
            started();
            await gate;
            throw new Error('disk on fire at /secret/path');
          }
          return fakeBuilds(store).build(request);
        },
      },
    }));
    const headers = { 'idempotency-key': 'slow-one' };
    const first = call(url, 'POST', '/v1/build', { json: weatherDefinition(), headers });
    await running;
    const retry = call(url, 'POST', '/v1/build', { json: weatherDefinition(), headers });
    await waitFor('the retry to wait', () =>
      logs.some((line) => String(line.msg).startsWith('waiting for the earlier request')) ? true : undefined,
    );
    release();
    expectError(await first, 500, 'internal');
    const retried = await retry;
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('forgets keys after their time to live', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { FileStore } = await import('../../src/engine/store/file-store.js');
    const { tempHome } = await import('../support/app.js');
    const home = await tempHome();
    const store = await FileStore.open({ dir: home.dir, clock: () => now, idempotencyTtlMs: 1000 });
    await store.putIdempotent('k', { bodyHash: 'h', status: 200, body: { success: true } });
    expect(await store.getIdempotent('k')).toBeDefined();
    now += 1000;
    expect(await store.getIdempotent('k')).toBeUndefined();
    expect(await store.purgeExpired()).toBe(1);
    await store.close();
    await home.cleanup();
  });
});

describe('service answers', () => {
  it('500 internal for an unexpected exception: logged with the request id, no internals in the answer, still serving', async () => {
    const app = await start({
      builds: {
        build: async () => {
          throw new TypeError('cannot read x of undefined at /home/me/secret.ts:12');
        },
      },
    });
    const answer = await call(app.url, 'POST', '/v1/build', { json: weatherDefinition() });
    expectError(answer, 500, 'internal');
    expect(answer.text).not.toContain('secret');
    expect(answer.text).not.toContain('TypeError');
    expect(answer.body.error.message).toContain(answer.body.meta.request_id);
    const logged = app.logs.find((line) => line.msg === 'unexpected error');
    expect(logged?.request_id).toBe(answer.body.meta.request_id);
    expect(JSON.stringify(logged)).toContain('secret.ts');
    expect((await call(app.url, 'GET', '/v1/health')).status).toBe(200);
  });

  it('422 build_failed with details from the builder, data null', async () => {
    const { url } = await start({
      builds: {
        build: async () => {
          throw new ServiceError('build_failed', 'the server did not start', [
            { path: 'tools[0].handler.module', message: 'no such file' },
          ]);
        },
      },
    });
    const answer = await call(url, 'POST', '/v1/build', { json: weatherDefinition() });
    expectError(answer, 422, 'build_failed');
    expect(answer.body.data).toBeNull();
    expect(answer.body.error.details).toEqual([{ path: 'tools[0].handler.module', message: 'no such file' }]);
  });

  it('501 not_implemented for deploy without a deployment service and for test without an agent', async () => {
    const { url, store } = await start();
    const mcp = (await fakeBuilds(store).build(weatherDefinition())).server.mcp_id;
    expectError(
      await call(url, 'POST', '/v1/deploy', { json: { mcp_id: mcp, environment: 'development' } }),
      501,
      'not_implemented',
    );
    expectError(await call(url, 'POST', '/v1/test', { json: { mcp_id: mcp, message: 'hi' } }), 501, 'not_implemented');
    // unknown servers are still 404 first
    expectError(
      await call(url, 'POST', '/v1/test', { json: { mcp_id: 'mcp_nothere', message: 'hi' } }),
      404,
      'not_found',
    );
  });

  it('503 unavailable while draining, with Retry-After', async () => {
    const { url, app } = await start();
    app.setDraining(true);
    const answer = await call(url, 'GET', '/v1/servers');
    expectError(answer, 503, 'unavailable');
    expect(answer.headers.get('retry-after')).toBe('1');
  });

  it('429 rate_limited with Retry-After once the bucket is empty, per key', async () => {
    let now = 1_000_000;
    const { url } = await start({ limits: { rateCapacity: 3, ratePerSecond: 0.5 }, clock: () => now });
    for (let i = 0; i < 3; i++) expect((await call(url, 'GET', '/v1/servers')).status).toBe(200);
    const limited = await call(url, 'GET', '/v1/servers');
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).toBe('2');
    now += 2000;
    expect((await call(url, 'GET', '/v1/servers')).status).toBe(200);
    // a request without a valid key does not spend the key's tokens
    expect((await call(url, 'GET', '/v1/servers', { key: 'wrong' })).status).toBe(401);
  });
});

describe('deployments through the API', () => {
  async function withDeployments(outcome: 'deployed' | 'failed' = 'deployed', settleMs = 20) {
    let deployments!: ReturnType<typeof fakeDeployments>;
    const app = await start((store) => ({
      deployments: (deployments = fakeDeployments(store, { outcome, settleMs })),
    }));
    const mcp = (await fakeBuilds(app.store).build(weatherDefinition())).server.mcp_id;
    return { ...app, deployments, mcp };
  }

  it('deploys synchronously (200 deployed) and asynchronously (202, Location, Preference-Applied)', async () => {
    const { url, mcp } = await withDeployments();
    const sync = await call(url, 'POST', '/v1/deploy', { json: { mcp_id: mcp, environment: 'development' } });
    expect(sync.status).toBe(200);
    expect(Deployment.parse(sync.body.data).status).toBe('deployed');
    const async = await call(url, 'POST', '/v1/deploy', {
      json: { mcp_id: mcp, environment: 'staging' },
      headers: { prefer: 'respond-async, wait=5' },
    });
    expect(async.status).toBe(202);
    expect(async.body.success).toBe(true);
    expect(async.body.data.status).toBe('deploying');
    expect(async.headers.get('preference-applied')).toBe('respond-async');
    expect(async.headers.get('location')).toBe(`/v1/deploy/${async.body.data.deployment_id}/status`);
  });

  it('422 deploy_failed with the failed deployment as data', async () => {
    const { url, mcp } = await withDeployments('failed');
    const answer = await call(url, 'POST', '/v1/deploy', { json: { mcp_id: mcp, environment: 'development' } });
    expectError(answer, 422, 'deploy_failed');
    expect(answer.body.data.status).toBe('failed');
    expect(answer.body.error.message).toContain('instances did not start');
  });

  it('answers 202 deploying when the synchronous limit passes', async () => {
    const { url, store } = await start((store) => ({
      deployments: fakeDeployments(store, { settleMs: 3000 }),
      limits: { syncDeploySeconds: 0.2 },
    }));
    const mcp = (await fakeBuilds(store).build(weatherDefinition())).server.mcp_id;
    const answer = await call(url, 'POST', '/v1/deploy', { json: { mcp_id: mcp, environment: 'development' } });
    expect(answer.status).toBe(202);
    expect(answer.body.data.status).toBe('deploying');
  });

  it('long-polls the status: ETag, If-None-Match, an answer as soon as it changes', async () => {
    const { url, mcp } = await withDeployments('deployed', 300);
    const accepted = await call(url, 'POST', '/v1/deploy', {
      json: { mcp_id: mcp, environment: 'development' },
      headers: { prefer: 'respond-async' },
    });
    const id = accepted.body.data.deployment_id as string;
    const now = await call(url, 'GET', `/v1/deploy/${id}/status`);
    const etag = now.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    expect(now.body.data.status).toBe('deploying');
    const changed = await call(url, 'GET', `/v1/deploy/${id}/status?wait=10`, { headers: { 'if-none-match': etag } });
    expect(changed.body.data.status).toBe('deployed');
    expect(changed.headers.get('etag')).not.toBe(etag);
    // a stale tag answers at once with the current state
    const stale = await call(url, 'GET', `/v1/deploy/${id}/status?wait=10`, { headers: { 'if-none-match': etag } });
    expect(stale.body.data.status).toBe('deployed');
    // no change within the wait: the same tag after the wait
    const same = await call(url, 'GET', `/v1/deploy/${id}/status?wait=0.3`, {
      headers: { 'if-none-match': changed.headers.get('etag')! },
    });
    expect(same.headers.get('etag')).toBe(changed.headers.get('etag'));
  });

  it('stops once, then 409 conflict; rollback; lists with filters; logs; metrics', async () => {
    const { url, mcp } = await withDeployments();
    const deployed = await call(url, 'POST', '/v1/deploy', { json: { mcp_id: mcp, environment: 'development' } });
    const id = deployed.body.data.deployment_id as string;
    const stopped = await call(url, 'POST', `/v1/deploy/${id}/stop`);
    expect(stopped.status).toBe(200);
    expect(stopped.body.data.status).toBe('stopped');
    expectError(await call(url, 'POST', `/v1/deploy/${id}/stop`), 409, 'conflict');
    expectError(await call(url, 'POST', `/v1/deploy/${id}/stop`, { json: { force: true } }), 422, 'validation_failed');
    const rolled = await call(url, 'POST', `/v1/deploy/${id}/rollback`);
    expect(rolled.status).toBe(200);
    expect(rolled.body.data.deployment_id).not.toBe(id);
    const list = await call(url, 'GET', `/v1/deployments?mcp_id=${mcp}&status=stopped`);
    expect(list.body.data.deployments.map((d: { deployment_id: string }) => d.deployment_id)).toEqual([id]);
    const byName = await call(url, 'GET', '/v1/deployments?name=weather&environment=development');
    expect(byName.body.data.deployments).toHaveLength(2);
    expect((await call(url, 'GET', '/v1/deployments?name=nothing')).body.data.deployments).toEqual([]);
    // several states at once, and the newest few with the count of them all
    const both = await call(url, 'GET', `/v1/deployments?mcp_id=${mcp}&status=stopped,deployed`);
    expect(both.body.data.deployments).toHaveLength(2);
    const newest = await call(url, 'GET', `/v1/deployments?mcp_id=${mcp}&status=stopped,deployed&limit=1`);
    expect(newest.body.data).toMatchObject({
      total: 2,
      deployments: [{ deployment_id: rolled.body.data.deployment_id }],
    });
    expect((await call(url, 'GET', `/v1/deployments?mcp_id=${mcp}&limit=0`)).body.data).toEqual({
      deployments: [],
      total: 2,
    });
    const wrong = await call(url, 'GET', '/v1/deployments?status=deployed,gone');
    expectError(wrong, 400, 'bad_request');
    expect(wrong.body.error.message).toContain('not gone');
    expect((await call(url, 'GET', `/v1/deploy/${id}/logs`)).body.data.lines[0].message).toBe('started');
    expect((await call(url, 'GET', `/v1/deploy/${id}/metrics?window=60`)).body.data.window_seconds).toBe(60);
    expectError(await call(url, 'GET', '/v1/deploy/deploy_nothere/logs'), 404, 'not_found');
  });

  it('streams followed logs as NDJSON and stops following when the client leaves', async () => {
    const { url, mcp, deployments } = await withDeployments();
    const deployed = await call(url, 'POST', '/v1/deploy', { json: { mcp_id: mcp, environment: 'development' } });
    const id = deployed.body.data.deployment_id as string;
    const controller = new AbortController();
    const res = await fetch(`${url}/v1/deploy/${id}/logs?follow=1`, {
      headers: { authorization: `Bearer ${TEST_KEY}` },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const reader = res.body!.getReader();
    let text = '';
    while (text.split('\n').filter(Boolean).length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { message: string });
    expect(lines.map((l) => l.message)).toEqual(['started', 'new line']);
    controller.abort();
    expect(deployments.followed).toBe(1);
  });
});

describe('reads', () => {
  it('lists servers newest first, filters by name, shows one; health', async () => {
    const { url, store } = await start();
    const builds = fakeBuilds(store);
    const a = await builds.build(weatherDefinition('alpha'));
    // newest first needs a later creation time than alpha's
    await waitUntil('the clock to move past alpha', () => new Date().toISOString() > a.server.created_at!);
    const b = await builds.build(weatherDefinition('beta'));
    const list = await call(url, 'GET', '/v1/servers/');
    expect(list.body.data.servers.map((s: { mcp_id: string }) => s.mcp_id)).toEqual([b.server.mcp_id, a.server.mcp_id]);
    for (const server of list.body.data.servers) McpServer.parse(server);
    expect((await call(url, 'GET', '/v1/servers?name=alpha')).body.data.servers).toHaveLength(1);
    expect((await call(url, 'GET', `/v1/servers/${a.server.mcp_id}`)).body.data.name).toBe('alpha');
    const health = await call(url, 'GET', '/v1/health');
    expect(health.body.data).toMatchObject({ status: 'ok', version: '0.0.0-test' });
    expect(typeof health.body.data.uptime_seconds).toBe('number');
    // HEAD works where GET does
    expect(
      (await fetch(`${url}/v1/health`, { method: 'HEAD', headers: { authorization: `Bearer ${TEST_KEY}` } })).status,
    ).toBe(200);
  });

  it('logs a line per request with its request id', async () => {
    const app = await start();
    const answer = await call(app.url, 'GET', '/v1/servers');
    const line = app.logs.find((l) => l.request_id === answer.body.meta.request_id);
    expect(line).toMatchObject({ msg: 'request', method: 'GET', path: '/v1/servers', status: 200 });
  });
});
