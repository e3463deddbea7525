/**
 * How the engine faces the network: HTTPS on an address of its own while plain HTTP stays where it
 * was bound (127.0.0.2 stands for "another address": Linux routes all of 127/8 to lo), HSTS on every
 * HTTPS answer and never on HTTP, the Host check of a wildcard bind, browser pages of other
 * origins refused by the API even with the key, and deployments' CORS limited to listed origins.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineHostPolicy } from '../../../src/engine/http/exposure.js';
import { startEngine, type RunningEngine } from '../../../src/engine/engine.js';
import { silentLogger } from '../../../src/engine/engine-log.js';
import { createTestCa, type TestCa } from '../../support/certificates.js';
import { startTestApp, TEST_KEY } from '../../support/app.js';
import { startTestEngine, type TestEngine } from '../../support/engine.js';
import { createSandbox, runCli, type Sandbox } from '../../support/cli.js';

const API_KEY = 'exposure-test-key-0123456789abcdefghij';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request; `ca` makes it HTTPS. Connection errors reject (ECONNREFUSED: nothing listens there). */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; ca?: string; servername?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const common = {
      method: options.method ?? 'GET',
      headers: { connection: 'close', ...options.headers },
      agent: false as const,
    };
    const onAnswer = (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    };
    const req =
      target.protocol === 'https:'
        ? httpsRequest(target, { ...common, ca: options.ca, servername: options.servername ?? 'localhost' }, onAnswer)
        : httpRequest(target, common, onAnswer);
    req.on('error', reject);
    req.end(options.body);
  });
}

const errorCode = (answer: Answer) => (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;

describe('HTTPS on its own address', () => {
  let sandbox: Sandbox;
  let ca: TestCa;
  let engine: RunningEngine;

  beforeAll(async () => {
    sandbox = await createSandbox();
    ca = await createTestCa(sandbox.dir);
    const pair = await ca.issue('default', ['localhost']);
    engine = await startEngine({
      home: sandbox.env.MCPCTL_HOME!,
      host: '127.0.0.1',
      port: 0,
      apiKey: API_KEY,
      version: '0.0.0-test',
      logger: silentLogger,
      env: {},
      deployments: false,
      tests: false,
      tls: { cert: pair.cert, key: pair.key, port: 0, host: '127.0.0.2' },
    });
  }, 60_000);

  afterAll(async () => {
    await engine?.close(1000);
    await sandbox?.cleanup();
  });

  it('serves HTTPS on the TLS address and plain HTTP only on its own', async () => {
    expect(engine.tls?.url).toBe(`https://127.0.0.2:${engine.tls!.port}`);
    const secure = await send(`https://127.0.0.2:${engine.tls!.port}/v1/health`, {
      ca: ca.ca,
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(secure.status).toBe(200);
    const plain = await send(`http://127.0.0.1:${engine.port}/v1/health`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(plain.status).toBe(200);
    // ATTACK: plain HTTP on the address HTTPS faces the network on
    await expect(send(`http://127.0.0.2:${engine.port}/v1/health`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // and HTTPS is not on the plain address either
    await expect(send(`https://127.0.0.1:${engine.tls!.port}/v1/health`, { ca: ca.ca })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });

  it('sends Strict-Transport-Security on every HTTPS answer (API, refusals and data plane), never on HTTP', async () => {
    const tls = `https://127.0.0.2:${engine.tls!.port}`;
    for (const path of ['/v1/health', '/v1/servers', '/d/none/mcp', '/nothing']) {
      const answer = await send(`${tls}${path}`, { ca: ca.ca });
      expect(answer.headers['strict-transport-security'], path).toBe('max-age=31536000');
    }
    const plain = await send(`http://127.0.0.1:${engine.port}/v1/health`);
    expect(plain.headers['strict-transport-security']).toBeUndefined();
  });

  it('refuses to serve HTTPS on a public address without MCPCTL_API_KEY', async () => {
    const box = await createSandbox();
    try {
      const result = await runCli(['serve', '--port', '0', '--tls-host', '0.0.0.0'], {
        env: box.env,
        cwd: box.dir,
        signal: AbortSignal.timeout(20_000),
      });
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('refusing to listen on 0.0.0.0 without MCPCTL_API_KEY');
    } finally {
      await box.cleanup();
    }
  });
});

describe('the Host check of a wildcard bind', () => {
  it('answers loopback names and the machine’s addresses, and refuses any other name', async () => {
    // the engine's own policy for 0.0.0.0, behind the real app on a loopback socket
    const app = await startTestApp({
      hosts: engineHostPolicy({ host: '0.0.0.0', tlsHost: undefined, publicUrl: undefined, env: {} }),
    });
    try {
      const port = new URL(app.url).port;
      const health = (host: string) =>
        send(`${app.url}/v1/health`, { headers: { host, authorization: `Bearer ${TEST_KEY}` } });
      expect((await health(`127.0.0.1:${port}`)).status).toBe(200);
      expect((await health(`localhost:${port}`)).status).toBe(200);
      // ATTACK: DNS rebinding, a name the attacker points at this machine
      const forged = await health(`evil.example:${port}`);
      expect(forged.status).toBe(403);
      expect(errorCode(forged)).toBe('forbidden');
      expect(forged.body).toContain('MCPCTL_ALLOWED_HOSTS');
    } finally {
      await app.close();
    }
  });

  it('adds a public URL’s host and MCPCTL_ALLOWED_HOSTS; * still answers any name', () => {
    const policy = engineHostPolicy({
      host: '::',
      tlsHost: undefined,
      publicUrl: 'https://mcp.example.com',
      env: { MCPCTL_ALLOWED_HOSTS: 'ci.internal' },
    });
    expect(policy.allows('mcp.example.com')).toBe(true);
    expect(policy.allows('ci.internal:7070')).toBe(true);
    expect(policy.allows('evil.example')).toBe(false);
    expect(
      engineHostPolicy({
        host: '0.0.0.0',
        tlsHost: undefined,
        publicUrl: undefined,
        env: { MCPCTL_ALLOWED_HOSTS: '*' },
      }).allows('any.example'),
    ).toBe(true);
  });
});

describe('browser pages and the API', () => {
  it('refuses a page of another origin even with the right key, and answers the engine’s own origin', async () => {
    const app = await startTestApp({ publicUrl: 'https://engine.example.com' });
    try {
      const health = (origin: string) =>
        send(`${app.url}/v1/health`, { headers: { origin, authorization: `Bearer ${TEST_KEY}` } });
      // ATTACK: a page that learned the key
      const evil = await health('http://evil.example');
      expect(evil.status).toBe(403);
      expect(errorCode(evil)).toBe('forbidden');
      expect(evil.headers['access-control-allow-origin']).toBeUndefined();
      // another port of the same host is another origin
      expect((await health('http://127.0.0.1:1')).status).toBe(403);
      expect((await health('null')).status).toBe(403);
      expect((await health(new URL(app.url).origin)).status).toBe(200);
      expect((await health('https://engine.example.com')).status).toBe(200);
      // the CLI and programs send no Origin
      expect((await send(`${app.url}/v1/health`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).status).toBe(
        200,
      );
    } finally {
      await app.close();
    }
  });
});

describe('CORS of deployments', () => {
  let t: TestEngine;
  let mcp: string;

  beforeAll(async () => {
    t = await startTestEngine({ env: { MCPCTL_ALLOWED_ORIGINS: 'http://localhost:6274, https://app.example.com' } });
    const d = await t.deploy(await t.addServer('cors'), 'development');
    mcp = `${d.url}/mcp`;
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  const preflight = (origin: string) =>
    send(mcp, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-protocol-version',
      },
    });
  const list = (origin?: string) =>
    send(mcp, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(origin === undefined ? {} : { origin }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('answers the preflight and the call of a listed origin, with that origin only', async () => {
    const answer = await preflight('http://localhost:6274');
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe('http://localhost:6274');
    expect(String(answer.headers['access-control-allow-headers'])).toContain('mcp-protocol-version');
    const call = await list('https://app.example.com');
    expect(call.status).toBe(200);
    expect(call.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });

  it('refuses another port of localhost and any unlisted page; programs without Origin are unaffected', async () => {
    // ATTACK: any page on http://localhost:<port> used to get CORS to every deployment
    for (const origin of [
      'http://localhost:9999',
      'http://127.0.0.1:6274',
      'https://localhost:6274',
      'http://evil.example',
    ]) {
      const answer = await preflight(origin);
      expect(answer.status, origin).toBe(403);
      expect(answer.headers['access-control-allow-origin'], origin).toBeUndefined();
      const call = await list(origin);
      expect(call.status, origin).toBe(403);
      expect(call.body, origin).toContain('MCPCTL_ALLOWED_ORIGINS');
    }
    expect((await list()).status).toBe(200);
  });

  it('mcpctl serve refuses an MCPCTL_ALLOWED_ORIGINS entry that is not an origin, naming it', async () => {
    const box = await createSandbox({ MCPCTL_ALLOWED_ORIGINS: 'localhost' });
    try {
      const result = await runCli(['serve', '--port', '0'], {
        env: box.env,
        cwd: box.dir,
        signal: AbortSignal.timeout(20_000),
      });
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('MCPCTL_ALLOWED_ORIGINS cannot be used: "localhost" is not an origin');
    } finally {
      await box.cleanup();
    }
  });
});
