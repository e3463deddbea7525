/**
 * The edges of the HTTP layer, on a real socket: what Node would answer bare or not at all gets
 * the envelope (CONNECT, an Expect it cannot meet, a body that does not arrive in time); a
 * client that hangs up mid-upload is not a server error; requests under a foreign Host name are
 * refused (DNS-rebinding protection).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AnyEnvelope } from '../../src/api/contract.js';
import { startEngine, EngineConfigError } from '../../src/engine/engine.js';
import { createHostPolicy, hostNameOf } from '../../src/engine/http/hosts.js';
import { createLogger, silentLogger } from '../../src/engine/engine-log.js';
import { startTestEngine } from '../support/engine.js';
import {
  fakeBuilds,
  rawBody,
  rawExchange,
  startTestApp,
  TEST_KEY,
  tempHome,
  waitFor,
  weatherDefinition,
  type TestApp,
} from '../support/app.js';

let target: TestApp | undefined;
afterEach(async () => {
  await target?.close();
  target = undefined;
});

function statusLine(answer: string): string {
  return answer.slice(0, answer.indexOf('\r\n'));
}

function expectEnvelope(answer: string, status: number, code: string): void {
  expect(statusLine(answer)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  const body = rawBody(answer) as { error: { code: string }; meta: { request_id: string } };
  expect(AnyEnvelope.safeParse(body).success).toBe(true);
  expect(body.error.code).toBe(code);
  expect(answer).toContain(`X-Request-Id: ${body.meta.request_id}`);
}

describe('what Node would answer bare', () => {
  it('CONNECT gets 405 with the envelope', async () => {
    target = await startTestApp();
    const answer = await rawExchange(target.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectEnvelope(answer, 405, 'method_not_allowed');
  });

  it('an Expect other than 100-continue gets 417 with the envelope', async () => {
    target = await startTestApp();
    const answer = await rawExchange(
      target.url,
      `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: foo\r\nAuthorization: Bearer ${TEST_KEY}\r\n\r\n`,
    );
    expectEnvelope(answer, 417, 'expectation_failed');
  });

  it('a body that does not arrive within the request time-out gets 408 with the envelope', async () => {
    target = await startTestApp({ limits: { requestTimeoutMs: 500 } });
    const answer = await rawExchange(
      target.url,
      `POST /v1/build HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`,
    );
    expectEnvelope(answer, 408, 'request_timeout');
    expect(target.logs.filter((line) => line.level === 'error' || line.msg === 'unexpected error')).toEqual([]);
  });
});

describe('a client that hangs up in the middle of its upload', () => {
  it('is logged as gone (499), not as a 500, and the engine goes on serving', async () => {
    let builds!: ReturnType<typeof fakeBuilds>;
    target = await startTestApp((store) => ({ builds: (builds = fakeBuilds(store)) }));
    const body = JSON.stringify(weatherDefinition());
    await rawExchange(
      target.url,
      `POST /v1/build HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 500}\r\n\r\n${body}`,
      { hangUpAfterMs: 100 },
    );
    const line = await waitFor('the request line', () =>
      target!.logs.find((l) => l.msg === 'request' && l.path === '/v1/build'),
    );
    expect(line).toMatchObject({ level: 'info', status: 499 });
    expect(target.logs.some((l) => l.msg === 'unexpected error' || l.msg === 'request failed')).toBe(false);
    expect(builds.calls).toBe(0);
    const health = await fetch(`${target.url}/v1/health`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(health.status).toBe(200);
  });
});

describe('a client that hangs up in the middle of its call to a deployment', () => {
  it('is logged as gone (499), and the deployment goes on serving', async () => {
    const logs: Array<Record<string, unknown>> = [];
    const test = await startTestEngine({
      logger: createLogger({ write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>), level: 'debug' }),
    });
    try {
      const d = await test.deploy(await test.addServer('weather'), 'development');
      const path = `${new URL(d.url).pathname}/mcp`;
      await rawExchange(
        test.engine.url,
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"jsonrpc":"2.0",`,
        { hangUpAfterMs: 100 },
      );
      const line = await waitFor('the request line', () => logs.find((l) => l.msg === 'request' && l.path === path));
      expect(line).toMatchObject({ level: 'info', status: 499 });
      expect(logs.some((l) => l.level === 'error' || l.msg === 'request failed')).toBe(false);
      expect((await fetch(`${d.url}/health`)).status).toBe(200);
    } finally {
      await test.close();
    }
  });
});

describe('the Host header', () => {
  it('is refused with 403 for a name the engine is not known by, on the API and the data plane', async () => {
    target = await startTestApp();
    for (const path of ['/v1/health', '/d/deploy_abc/mcp']) {
      const answer = await rawExchange(
        target.url,
        `GET ${path} HTTP/1.1\r\nHost: rebind.example:${new URL(target.url).port}\r\nAuthorization: Bearer ${TEST_KEY}\r\nConnection: close\r\n\r\n`,
      );
      expectEnvelope(answer, 403, 'forbidden');
      expect((rawBody(answer) as { error: { message: string } }).error.message).toMatch(/MCPCTL_ALLOWED_HOSTS/);
    }
    for (const host of ['localhost', '127.0.0.1', '[::1]', `127.0.0.1:${new URL(target.url).port}`]) {
      const answer = await rawExchange(
        target.url,
        `GET /v1/health HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TEST_KEY}\r\nConnection: close\r\n\r\n`,
      );
      expect(statusLine(answer), host).toMatch(/^HTTP\/1\.1 200 /);
    }
  });

  it('is answered for the domain of a deployment, which routes to it', async () => {
    const test = await startTestEngine();
    try {
      const server = await test.addServer('weather');
      const d = await test.deploy(server, 'production', { domain: 'weather.example.test' });
      expect(d.status).toBe('deployed');
      const answer = await rawExchange(
        test.engine.url,
        'GET /health HTTP/1.1\r\nHost: weather.example.test\r\nConnection: close\r\n\r\n',
      );
      expect(statusLine(answer)).toMatch(/^HTTP\/1\.1 200 /);
      expect(rawBody(answer)).toMatchObject({ status: 'healthy', deployment_id: d.deployment_id });
      expectEnvelope(
        await rawExchange(
          test.engine.url,
          'GET /health HTTP/1.1\r\nHost: other.example.test\r\nConnection: close\r\n\r\n',
        ),
        403,
        'forbidden',
      );
      // every answer of the data plane carries the request's id once: the gateway's own, a call passed on, and nothing served
      expect(answer.match(/\r\nX-Request-Id: req_\w+\r\n/gi)).toHaveLength(1);
      const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
      const passed = await rawExchange(
        test.engine.url,
        `POST /mcp HTTP/1.1\r\nHost: weather.example.test\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${call.length}\r\nConnection: close\r\n\r\n${call}`,
      );
      expect(statusLine(passed)).toMatch(/^HTTP\/1\.1 200 /);
      expect(passed.match(/\r\nX-Request-Id: req_\w+\r\n/gi)).toHaveLength(1);
      expectEnvelope(
        await rawExchange(test.engine.url, 'GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
        404,
        'not_found',
      );
    } finally {
      await test.close();
    }
  });

  it('policy: loopback names, the bound address, the public URL and MCPCTL_ALLOWED_HOSTS; on a wildcard address, the machine’s addresses', () => {
    const loopback = createHostPolicy({
      bindHost: '127.0.0.1',
      publicUrl: 'https://mcp.example.com',
      extra: ['ci.internal'],
    });
    for (const ok of [
      'localhost:7070',
      '127.0.0.1',
      '127.0.0.2:80',
      '[::1]:7070',
      'app.localhost',
      'MCP.example.com',
      'ci.internal:1',
      undefined,
    ]) {
      expect(loopback.allows(ok), String(ok)).toBe(true);
    }
    for (const refused of ['evil.example', 'example.com', '10.0.0.5', 'localhost.evil.example'])
      expect(loopback.allows(refused), refused).toBe(false);
    expect(createHostPolicy({ bindHost: '10.0.0.5' }).allows('10.0.0.5:7070')).toBe(true);
    expect(createHostPolicy({ bindHost: '::1' }).allows('[::1]:7070')).toBe(true);
    expect(createHostPolicy({ bindHost: '0.0.0.0' }).allows('anything.example')).toBe(false);
    expect(
      createHostPolicy({ bindHost: '0.0.0.0', machineAddresses: ['10.0.0.7', 'fe80::1'] }).allows('10.0.0.7:7070'),
    ).toBe(true);
    expect(
      createHostPolicy({ bindHost: '::', machineAddresses: ['10.0.0.7', 'fe80::1'] }).allows('[fe80::1]:7070'),
    ).toBe(true);
    expect(createHostPolicy({ bindHost: '0.0.0.0', extra: ['api.example.com'] }).allows('anything.example')).toBe(
      false,
    );
    expect(createHostPolicy({ bindHost: '127.0.0.1', extra: ['*'] }).allows('anything.example')).toBe(true);
    expect(hostNameOf('[::1]:80')).toBe('[::1]');
    expect(hostNameOf('::1')).toBe('[::1]');
  });

  it('answers the same for a Host it has just let in, and never lets in one it refused', () => {
    const policy = createHostPolicy({ bindHost: '127.0.0.1' });
    for (const host of [
      'localhost:7070',
      'evil.example',
      'localhost:7070',
      'evil.example',
      'localhost:7071',
      'evil.example:7070',
      'localhost:7071',
    ]) {
      expect(policy.allows(host), host).toBe(!host.startsWith('evil'));
    }
  });
});

describe('the API key', () => {
  it('must be usable: a key of white space, with spaces, or short is refused at start', async () => {
    const home = await tempHome();
    try {
      for (const apiKey of [' '.repeat(16), 'sixteen chars ok', 'short']) {
        await expect(
          startEngine({
            home: home.dir,
            host: '127.0.0.1',
            port: 0,
            apiKey,
            version: '0',
            logger: silentLogger,
            env: {},
            deployments: false,
            tests: false,
          }),
        ).rejects.toBeInstanceOf(EngineConfigError);
      }
    } finally {
      await home.cleanup();
    }
  });
});
