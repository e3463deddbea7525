/**
 * The parts of undici the client loads by their internal paths: they must still be there and be
 * the ones undici's index exports, or this fails (after an undici upgrade, say) instead of the CLI
 * quietly loading the whole package again.
 */
import { Agent as UndiciAgent, Dispatcher, MockAgent, request as undiciRequest } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, loadedLight, request } from '../../src/api/http-client.js';

const ORIGIN = 'http://127.0.0.1:7070';

describe('the parts of undici the client uses', () => {
  let mock: MockAgent | undefined;
  afterEach(async () => {
    await mock?.close();
    mock = undefined;
  });

  function mockService(): MockAgent {
    mock = new MockAgent();
    mock.disableNetConnect();
    return mock;
  }

  it('load from the internal paths, not the whole package', () => {
    expect(
      loadedLight,
      'an internal path of undici (lib/dispatcher/agent.js, lib/api/api-request.js, lib/global.js) moved: update src/api/http-client.ts',
    ).toBe(true);
  });

  it('give the Agent undici exports, which takes the options the transport passes', async () => {
    expect(Agent).toBe(UndiciAgent);
    const agent = new Agent({ connect: { timeout: 1_000 }, keepAliveTimeout: 4_000, connections: 8 });
    expect(agent).toBeInstanceOf(Dispatcher);
    await agent.close();
  });

  it('send a request through the dispatcher given, with the path, query, method, headers and body of the call', async () => {
    const service = mockService();
    let seen: { path: string; method: string; headers: unknown; body: unknown } | undefined;
    service
      .get(ORIGIN)
      .intercept({ path: '/v1/deploy?env=development&limit=5', method: 'POST' })
      .reply(
        201,
        (options) => {
          seen = { path: options.path, method: options.method, headers: options.headers, body: options.body };
          return { ok: true };
        },
        { headers: { 'content-type': 'application/json', 'x-request-id': 'req_1' } },
      );
    const res = await request(`${ORIGIN}/v1/deploy?env=development&limit=5`, {
      dispatcher: service,
      method: 'POST',
      headers: { 'idempotency-key': 'key_1' },
      body: '{"mcp_id":"mcp_1"}',
      headersTimeout: 1_000,
      bodyTimeout: 1_000,
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-request-id']).toBe('req_1');
    expect(await res.body.json()).toEqual({ ok: true });
    expect(seen).toEqual({ path: '/v1/deploy?env=development&limit=5', method: 'POST', headers: { 'idempotency-key': 'key_1' }, body: '{"mcp_id":"mcp_1"}' });
  });

  it('answer as undici’s own request() does, a streamed body included', async () => {
    const service = mockService();
    const scope = service.get(ORIGIN);
    for (let i = 0; i < 2; i++)
      scope.intercept({ path: '/v1/logs?follow=1', method: 'GET' }).reply(200, '{"a":1}\n{"a":2}\n', { headers: { 'content-type': 'application/x-ndjson' } });
    const read = async (res: Dispatcher.ResponseData) => {
      const chunks: string[] = [];
      for await (const chunk of res.body) chunks.push(Buffer.from(chunk as Uint8Array).toString('utf8'));
      return { status: res.statusCode, type: res.headers['content-type'], text: chunks.join('') };
    };
    const ours = await read(await request(`${ORIGIN}/v1/logs?follow=1`, { dispatcher: service, method: 'GET' }));
    const theirs = await read(await undiciRequest(`${ORIGIN}/v1/logs?follow=1`, { dispatcher: service, method: 'GET' }));
    expect(ours).toEqual(theirs);
    expect(ours.text).toBe('{"a":1}\n{"a":2}\n');
  });

  it('fail as undici does when the call is aborted', async () => {
    const service = mockService();
    service.get(ORIGIN).intercept({ path: '/v1/status', method: 'GET' }).reply(200, 'late').delay(10_000);
    const controller = new AbortController();
    const pending = request(`${ORIGIN}/v1/status`, { dispatcher: service, method: 'GET', signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
