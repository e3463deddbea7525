/**
 * The API client against the real engine (test/support/engine.ts) through a loopback proxy that
 * records what the client sent and injects the faults the engine never produces on demand.
 */
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient, parseRetryAfter, type ApiClientOptions, type ApiExchange } from '../../src/api/client.js';
import { formatPath } from '../../src/shared/paths.js';
import { ApiError } from '../../src/api/errors.js';
import { TEST_KEY } from '../support/app.js';
import { callTool } from '../support/deployments.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { startProxy, type Proxy } from '../support/proxy.js';

const definition = {
  name: 'weather',
  template: 'basic' as const,
  tools: [
    {
      name: 'get_forecast',
      description: 'Get the forecast for a city',
      inputSchema: { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] },
    },
  ],
};

let engine: TestEngine;
let server: Proxy & { apiKey: string };
let clients: ApiClient[] = [];
let sleeps: number[] = [];

function client(options: Partial<ApiClientOptions> = {}): ApiClient {
  const c = new ApiClient({
    baseUrl: server.url,
    apiKey: server.apiKey,
    // record back-off instead of sleeping, except where a test wants real time
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
  clients.push(c);
  return c;
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected the call to fail');
}

beforeAll(async () => {
  engine = await startTestEngine();
});
afterAll(async () => {
  await engine?.close();
});
beforeEach(async () => {
  server = Object.assign(await startProxy(engine.engine.url), { apiKey: TEST_KEY });
  sleeps = [];
});
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
  await server.close();
});

describe('requests', () => {
  it('sends the key, JSON content type and an Idempotency-Key with every POST', async () => {
    const built = await client({ userAgent: 'mcpctl/test' }).build(definition);
    expect(built.mcp_id).toMatch(/^mcp_/);
    expect(built.status).toBe('ready');
    const [request] = server.requestsTo('/v1/build');
    expect(request!.headers.authorization).toBe(`Bearer ${server.apiKey}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['user-agent']).toBe('mcpctl/test');
    expect(request!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(request!.body).toEqual(definition);
  });

  it('uses the idempotency key it is given', async () => {
    await client().build(definition, { idempotencyKey: 'ci-run-42' });
    expect(server.requestsTo('/v1/build')[0]!.headers['idempotency-key']).toBe('ci-run-42');
  });

  it('keeps a path prefix of the base URL', async () => {
    const c = client({ baseUrl: `${server.url}/` });
    await c.listServers();
    expect(server.requestsTo('/v1/servers')).toHaveLength(1);
  });
});

describe('errors from the service', () => {
  it('401 carries status, code and request id', async () => {
    const error = await rejection(client({ apiKey: 'wrong' }).listServers());
    expect(error.kind).toBe('http');
    expect(error.status).toBe(401);
    expect(error.code).toBe('unauthorized');
    expect(error.requestId).toMatch(/^req_/);
    expect(error.transient).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('422 validation_failed names each field', async () => {
    const error = await rejection(
      client().build({ ...definition, tools: [{ ...definition.tools[0]!, colour: 'red' }] } as never),
    );
    expect(error.status).toBe(422);
    expect(error.code).toBe('validation_failed');
    expect(error.details).toContainEqual({ path: 'tools[0].colour', message: 'unknown field' });
  });

  it('404 for an unknown deployment', async () => {
    const error = await rejection(client().status('deploy_nope'));
    expect(error.status).toBe(404);
    expect(error.code).toBe('not_found');
  });

  it('a 5xx answer without an envelope keeps its status and is transient', async () => {
    server.inject({
      path: '/v1/servers',
      fault: { type: 'raw', status: 502, body: '<html>bad gateway</html>', contentType: 'text/html' },
    });
    const error = await rejection(client({ retry: { attempts: 2 } }).listServers());
    expect(error.kind).toBe('http');
    expect(error.status).toBe(502);
    expect(error.attempts).toBe(2);
  });
});

describe('retries', () => {
  it('honours Retry-After on 429, then succeeds with the same idempotency key', async () => {
    server.inject({
      path: '/v1/build',
      times: 1,
      fault: { type: 'status', status: 429, code: 'rate_limited', retryAfter: '2' },
    });
    const built = await client().build(definition);
    expect(built.status).toBe('ready');
    const requests = server.requestsTo('/v1/build');
    expect(requests).toHaveLength(2);
    expect(requests[0]!.headers['idempotency-key']).toBe(requests[1]!.headers['idempotency-key']);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2000);
  });

  it('gives up at once when Retry-After is longer than it will wait', async () => {
    server.inject({
      path: '/v1/servers',
      fault: { type: 'status', status: 429, code: 'rate_limited', retryAfter: '3600' },
    });
    const error = await rejection(client().listServers());
    expect(error.status).toBe(429);
    expect(error.retryAfter).toBe(3600);
    expect(server.requests).toHaveLength(1);
  });

  it('retries 5xx with growing, jittered back-off and stops after the last attempt', async () => {
    server.inject({ path: '/v1/servers', fault: { type: 'status', status: 500, code: 'internal' } });
    const error = await rejection(client({ random: () => 1, retry: { attempts: 4, baseDelayMs: 100 } }).listServers());
    expect(error.status).toBe(500);
    expect(error.attempts).toBe(4);
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it('retries a 409 with Retry-After (the same idempotent request still running)', async () => {
    server.inject({
      path: '/v1/build',
      times: 1,
      fault: { type: 'status', status: 409, code: 'conflict', retryAfter: '1' },
    });
    const built = await client().build(definition);
    expect(built.status).toBe('ready');
    expect(server.requestsTo('/v1/build')).toHaveLength(2);
  });

  it('does not retry a 4xx', async () => {
    server.inject({ path: '/v1/servers', fault: { type: 'status', status: 409, code: 'conflict' } });
    await rejection(client().listServers());
    expect(server.requests).toHaveLength(1);
  });

  it('stops retrying when the total time would run out', async () => {
    server.inject({
      path: '/v1/servers',
      fault: { type: 'status', status: 503, code: 'unavailable', retryAfter: '5' },
    });
    const error = await rejection(client({ retry: { attempts: 10, maxTotalMs: 1000 } }).listServers());
    expect(error.status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a POST whose connection was dropped, with the same key', async () => {
    server.inject({ path: '/v1/build', times: 1, fault: { type: 'drop' } });
    const built = await client().build(definition);
    expect(built.status).toBe('ready');
    const requests = server.requestsTo('/v1/build');
    expect(requests).toHaveLength(2);
    expect(requests[0]!.headers['idempotency-key']).toBe(requests[1]!.headers['idempotency-key']);
  });

  it('reports a connection that keeps dropping as a network error', async () => {
    server.inject({ path: '/v1/build', fault: { type: 'drop' } });
    const error = await rejection(client({ retry: { attempts: 3 } }).build(definition));
    expect(error.kind).toBe('network');
    expect(error.code).toBe('unreachable');
    expect(error.message).toMatch(/dropped/);
    expect(error.attempts).toBe(3);
    expect(error.transient).toBe(true);
  });

  it('reports a refused connection', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = await rejection(
      client({ baseUrl: `http://127.0.0.1:${port}`, retry: { attempts: 2 } }).listServers(),
    );
    expect(error.kind).toBe('network');
    expect(error.message).toBe('connection refused');
    expect(error.attempts).toBe(2);
  });

  it('does not send again a request nobody answered in time: a hung service fails after the request timeout', async () => {
    server.inject({ path: '/v1/servers', fault: { type: 'slow', ms: 3000 } });
    const error = await rejection(client({ requestTimeoutMs: 300 }).listServers());
    expect(error.code).toBe('timeout');
    expect(error.message).toBe('no answer within 0.3 s');
    expect(server.requestsTo('/v1/servers')).toHaveLength(1);
  });

  it('retries failures only within the request timeout, and no attempt runs past it', async () => {
    // a clock that only the back-off moves: the first attempt fails at once, the back-off takes
    // 700 of the 1000 ms, so the retry may wait 300 ms for its answer and no more
    let now = 0;
    server.inject({ path: '/v1/servers', times: 1, fault: { type: 'drop' } });
    server.inject({ path: '/v1/servers', fault: { type: 'slow', ms: 3000 } });
    const c = client({
      requestTimeoutMs: 1000,
      now: () => now,
      random: () => 1,
      retry: { baseDelayMs: 700 },
      sleep: async (ms) => {
        sleeps.push(ms);
        now += ms;
      },
    });
    const error = await rejection(c.listServers());
    expect(sleeps).toEqual([700]);
    expect(error.code).toBe('timeout');
    expect(error.message).toBe('no answer within 0.3 s');
    expect(server.requestsTo('/v1/servers')).toHaveLength(2);
  });

  it('a 503 with a Retry-After past the request timeout is not waited for', async () => {
    server.inject({
      path: '/v1/servers',
      fault: { type: 'status', status: 503, code: 'unavailable', retryAfter: '2' },
    });
    const error = await rejection(client({ requestTimeoutMs: 1000 }).listServers());
    expect(error.status).toBe(503);
    expect(server.requestsTo('/v1/servers')).toHaveLength(1);
  });

  it('waits for work still running (409 with Retry-After) past the failure attempts, with the same key', async () => {
    server.inject({
      path: '/v1/build',
      times: 6,
      fault: { type: 'status', status: 409, code: 'conflict', retryAfter: '1' },
    });
    const waiting: string[] = [];
    const built = await client({ onWaiting: ({ operation, reason }) => waiting.push(`${operation} ${reason}`) }).build(
      definition,
    );
    expect(built.status).toBe('ready');
    const requests = server.requestsTo('/v1/build');
    expect(requests).toHaveLength(7);
    expect(new Set(requests.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(waiting).toEqual(['build still_running']);
  });

  it('stops waiting for work still running when the wait is over, and says what and with which key', async () => {
    let now = 0;
    server.inject({ path: '/v1/build', fault: { type: 'status', status: 409, code: 'conflict', retryAfter: '1' } });
    const c = client({
      now: () => now,
      retry: { maxPendingMs: 5000 },
      sleep: async (ms) => {
        sleeps.push(ms);
        now += ms;
      },
    });
    const error = await rejection(c.build(definition, { idempotencyKey: 'ci-42' }));
    expect(error.stillRunning).toBe(true);
    expect(error.operation).toBe('build');
    expect(error.idempotencyKey).toBe('ci-42');
    expect(error.waitedMs).toBeGreaterThanOrEqual(4000);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5000);
  });

  it('asks a service known to be alive again, with the same key, when it is slow to answer', async () => {
    server.inject({ path: '/v1/build', times: 2, fault: { type: 'slow', ms: 1500 } });
    const waiting: string[] = [];
    const built = await client({
      requestTimeoutMs: 300,
      isAlive: () => true,
      onWaiting: ({ reason }) => waiting.push(reason),
    }).build(definition);
    expect(built.status).toBe('ready');
    const requests = server.requestsTo('/v1/build');
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(waiting).toEqual(['busy']);
  });

  it('a service known to be gone is not waited for', async () => {
    server.inject({ path: '/v1/build', fault: { type: 'slow', ms: 1500 } });
    const error = await rejection(client({ requestTimeoutMs: 300, isAlive: () => false }).build(definition));
    expect(error.code).toBe('timeout');
    expect(server.requestsTo('/v1/build')).toHaveLength(1);
  });

  it('a timed-out answer is a network error of code timeout', async () => {
    server.inject({ path: '/v1/servers', fault: { type: 'slow', ms: 1500 } });
    const error = await rejection(client({ requestTimeoutMs: 200, retry: { attempts: 1 } }).listServers());
    expect(error.kind).toBe('network');
    expect(error.code).toBe('timeout');
  });
});

describe('the contract', () => {
  const meta = { request_id: 'req_x', timestamp: '2026-01-01T00:00:00.000Z' };

  it('an answer whose data breaks the schema is a contract error naming the field', async () => {
    server.inject({
      path: '/v1/servers/',
      fault: {
        type: 'raw',
        status: 200,
        body: JSON.stringify({
          success: true,
          data: { mcp_id: 'nope', name: 'x', status: 'ready', url: 'u', build_time: 1 },
          meta,
        }),
      },
    });
    const error = await rejection(client().getServer('mcp_abc'));
    expect(error.kind).toBe('contract');
    expect(error.code).toBe('contract_violation');
    expect(error.details[0]!.path).toBe('data.mcp_id');
    expect(error.requestId).toBe('req_x');
    expect(server.requests).toHaveLength(1);
  });

  it('an answer that is not JSON is a contract error', async () => {
    server.inject({
      path: '/v1/servers',
      fault: { type: 'raw', status: 200, body: 'hello', contentType: 'text/plain' },
    });
    const error = await rejection(client().listServers());
    expect(error.kind).toBe('contract');
    expect(error.message).toMatch(/not JSON/);
  });

  it('an envelope without meta is a contract error', async () => {
    server.inject({
      path: '/v1/servers',
      fault: { type: 'raw', status: 200, body: JSON.stringify({ success: true, data: { servers: [] } }) },
    });
    const error = await rejection(client().listServers());
    expect(error.kind).toBe('contract');
    expect(error.details[0]!.path).toBe('meta');
  });

  it('formats zod paths as JSON paths', () => {
    expect(formatPath(['data', 'tools', 0, 'name'])).toBe('data.tools[0].name');
    expect(formatPath([])).toBe('');
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('deployments', () => {
  it('deploys synchronously without Prefer', async () => {
    const c = client();
    const built = await c.build(definition);
    const answer = await c.deploy({ mcp_id: built.mcp_id, environment: 'development' });
    expect(answer.accepted).toBe(false);
    expect(answer.deployment.status).toBe('deployed');
    expect(server.requestsTo('/v1/deploy')[0]!.headers.prefer).toBeUndefined();
  });

  it('deploys asynchronously and follows the status by long-poll with the ETag', async () => {
    const c = client();
    const built = await c.build(definition);
    const answer = await c.deploy({ mcp_id: built.mcp_id, environment: 'production' }, { async: true });
    expect(answer.accepted).toBe(true);
    expect(answer.deployment.status).toBe('deploying');
    expect(server.requestsTo('/v1/deploy')[0]!.headers.prefer).toBe('respond-async');
    let etag: string | undefined;
    let deployment = answer.deployment;
    for (let i = 0; i < 20 && deployment.status === 'deploying'; i++) {
      const status = await c.status(deployment.deployment_id, {
        waitSeconds: 5,
        ...(etag === undefined ? {} : { etag }),
      });
      expect(status.etag).toMatch(/^"[0-9a-f]+"$/);
      etag = status.etag;
      deployment = status.deployment ?? deployment;
    }
    expect(deployment.status).toBe('deployed');
    // a deployment can settle before the first poll (warm processes start in milliseconds), so one
    // more poll follows it with the ETag of what was seen (health checks change the record, so the
    // answer may be a new version or "not modified")
    const after = await c.status(deployment.deployment_id, { waitSeconds: 1, etag });
    expect(after.etag).toMatch(/^"[0-9a-f]+"$/);
    const polls = server.requestsTo(/\/status$/);
    expect(polls[0]!.query.get('wait')).toBe('5');
    expect(polls.at(-1)!.headers['if-none-match']).toBeDefined();
  });

  it('returns a failed deployment from 422 deploy_failed instead of throwing', async () => {
    // a server whose instances exit at start
    const broken = await engine.addServer('weather', { failStart: true });
    const c = client();
    const answer = await c.deploy({ mcp_id: broken.server.mcp_id, environment: 'development' });
    expect(answer.deployment.status).toBe('failed');
    expect(answer.error?.code).toBe('deploy_failed');
    expect(answer.deployment.reason).toMatch(/exited/);
  });

  it('stops, refuses a second stop, rolls back, lists, reads logs and metrics', async () => {
    const c = client();
    const built = await c.build(definition);
    const first = (await c.deploy({ mcp_id: built.mcp_id, environment: 'staging' })).deployment;
    const second = (await c.deploy({ mcp_id: built.mcp_id, environment: 'staging' })).deployment;
    expect((await c.stop(second.deployment_id)).status).toBe('stopped');
    expect((await rejection(c.stop(second.deployment_id))).status).toBe(409);
    const rolled = await c.rollback(second.deployment_id);
    expect(rolled.deployment.mcp_id).toBe(built.mcp_id);
    expect(rolled.deployment.deployment_id).not.toBe(first.deployment_id);
    const list = await c.listDeployments({ mcp_id: built.mcp_id, status: 'stopped' });
    // the engine keeps one deployment of a server per environment: the second replaced the first
    expect(list.map((d) => d.deployment_id).sort()).toEqual([first.deployment_id, second.deployment_id].sort());
    expect(list.every((d) => d.status === 'stopped')).toBe(true);
    expect((await c.logs(first.deployment_id)).length).toBeGreaterThan(0);
    expect((await c.metrics(first.deployment_id, 60)).window_seconds).toBe(60);
    expect(server.requestsTo(/metrics$/)[0]!.query.get('window')).toBe('60');
  });

  it('follows logs as NDJSON until the signal aborts', async () => {
    const c = client();
    const built = await c.build(definition);
    const { deployment } = await c.deploy({ mcp_id: built.mcp_id, environment: 'development' });
    const controller = new AbortController();
    const seen: string[] = [];
    const recent = await c.logs(deployment.deployment_id);
    const following = c.followLogs(
      deployment.deployment_id,
      (line) => {
        seen.push(line.message);
        // once the recent lines are in, a tool call makes a new one
        if (seen.length === recent.length) void callTool(`${deployment.url}/mcp`, 'echo', { text: 'second' });
        if (line.message.includes('second')) controller.abort();
      },
      controller.signal,
    );
    await following;
    expect(seen[0]).toBe(recent[0]!.message);
    expect(seen.at(-1)).toContain('tools/call echo {"text":"second"}');
  });

  it('an aborted long-poll is an aborted error', async () => {
    // a server whose instances take longer to start than this test runs: it stays deploying
    const slow = await engine.addServer('weather', { listenDelayMs: 60_000 });
    const controller = new AbortController();
    const c = client({ signal: controller.signal });
    const { deployment } = await c.deploy({ mcp_id: slow.server.mcp_id, environment: 'development' }, { async: true });
    const polling = c.status(deployment.deployment_id, { waitSeconds: 30 });
    setImmediate(() => controller.abort());
    const error = await rejection(polling);
    expect(error.kind).toBe('aborted');
  });
});

describe('debug', () => {
  it('reports each exchange with the key redacted', async () => {
    const exchanges: ApiExchange[] = [];
    server.inject({ path: '/v1/servers', times: 1, fault: { type: 'status', status: 503, code: 'unavailable' } });
    await client({ debug: (e) => exchanges.push(e) }).listServers();
    expect(exchanges.map((e) => [e.method, e.status, e.attempt])).toEqual([
      ['GET', 503, 1],
      ['GET', 200, 2],
    ]);
    expect(exchanges[1]!.requestId).toMatch(/^req_/);
    expect(exchanges[1]!.url).toBe(`${server.url}/v1/servers`);
    expect(JSON.stringify(exchanges)).not.toContain(server.apiKey);
    expect(exchanges[0]!.headers.authorization).toBe('Bearer [redacted]');
  });
});
