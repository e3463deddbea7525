/**
 * Anonymous traffic through the gateway of a real engine, to a real runtime: a flood of
 * `initialize` calls from one address is capped per address (429) and leaves a real client (the
 * official MCP SDK) able to open a session and call a tool; many large bodies at once are held
 * only up to the gateway's budget (the rest 503 with Retry-After) and the engine keeps answering;
 * wrong bearer tokens from one address get 429 after a few, while other addresses are served.
 * Client addresses are loopback ones (127.0.0.2 is "another machine").
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { request } from 'node:http';
import { connect as connectSocket, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { BuildRequestInput } from '../../../src/api/contract.js';
import { DEFAULT_BODY_BUDGET_BYTES } from '../../../src/engine/gateway/body-budget.js';
import { DEFAULT_LIMITS } from '../../../src/engine/deployments/limits.js';
import { DEFAULT_SESSIONS_PER_CLIENT } from '../../../src/engine/gateway/upstream.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createSandbox, type Sandbox } from '../../support/cli.js';
import { startRealEngine } from '../../support/engine.js';
import { waitFor } from '../../support/wait.js';

const API_KEY = 'anonymous-limits-test-key-0123456789abcdef';
const TOKEN = 'gateway-token-0123456789abcdef0123456789';
const GREET = {
  name: 'greet',
  description: 'Greets someone by name',
  inputSchema: { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] },
  handler: { type: 'static' as const, content: [{ type: 'text' as const, text: 'Hello {{args.name}}' }] },
};
const OPEN: BuildRequestInput = { name: 'flooded', template: 'basic', sessions: true, tools: [GREET] };
const GUARDED: BuildRequestInput = {
  name: 'guarded',
  template: 'basic',
  auth: { type: 'bearer', token: '${GATE_TOKEN}' },
  tools: [GREET],
};
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1.0.0' } },
});

let sandbox: Sandbox;
let engine: RunningEngine;
let api: ApiClient;
let openUrl: string;
let guardedUrl: string;

beforeAll(async () => {
  sandbox = await createSandbox();
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: API_KEY });
  api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  const open = await api.build(OPEN);
  openUrl = `${(await api.deploy({ mcp_id: open.mcp_id, environment: 'development' })).deployment.url}/mcp`;
  const guarded = await api.build(GUARDED);
  const config = { env_vars: { GATE_TOKEN: TOKEN } };
  guardedUrl = `${(await api.deploy({ mcp_id: guarded.mcp_id, environment: 'development', config })).deployment.url}/mcp`;
}, 120_000);
afterAll(async () => {
  await api?.close();
  await engine?.close(1000);
  await sandbox?.cleanup();
});

/** One POST from `from`: its status, Retry-After and Mcp-Session-Id. */
function post(url: string, body: string, from: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; retryAfter?: string; session?: string }>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const answer: { status: number; retryAfter?: string; session?: string } = { status: res.statusCode ?? 0 };
          if (res.headers['retry-after'] !== undefined) answer.retryAfter = res.headers['retry-after'];
          const session = res.headers['mcp-session-id'];
          if (typeof session === 'string') answer.session = session;
          resolve(answer);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function sdkClient(url: string): Promise<Client> {
  const client = new Client({ name: 'real-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

function text(result: { content?: unknown }): string | undefined {
  return (result.content as Array<{ text?: string }> | undefined)?.[0]?.text;
}

describe('a flood of anonymous initialize calls through the gateway', () => {
  it('caps the sessions of one address (429) and leaves a real client able to open a session and call a tool', async () => {
    const outcomes: Array<{ status: number; retryAfter?: string; session?: string }> = [];
    for (let sent = 0; sent < 1000; sent += 25) {
      outcomes.push(...(await Promise.all(Array.from({ length: 25 }, () => post(openUrl, INITIALIZE, '127.0.0.2')))));
    }
    const opened = outcomes.filter((o) => o.status === 200 && o.session !== undefined);
    const refused = outcomes.filter((o) => o.status === 429);
    expect(opened).toHaveLength(DEFAULT_SESSIONS_PER_CLIENT);
    expect(refused).toHaveLength(1000 - DEFAULT_SESSIONS_PER_CLIENT);
    expect(refused.every((o) => Number(o.retryAfter) >= 1)).toBe(true);

    const client = await sdkClient(openUrl);
    try {
      expect(text(await client.callTool({ name: 'greet', arguments: { name: 'Ada' } }))).toBe('Hello Ada');
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe('large request bodies at once through the gateway', () => {
  /** A request declaring the largest body an instance takes, of which only the start is sent; resolves with what came back. */
  function holdBody(from: string, sockets: Socket[]): Promise<string> {
    const { port, pathname } = new URL(openUrl);
    const socket = connectSocket({ host: '127.0.0.1', port: Number(port), localAddress: from });
    sockets.push(socket);
    socket.write(
      `POST ${pathname} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${DEFAULT_LIMITS.maxBodyBytes}\r\n\r\n{"jsonrpc":"2.0",`,
    );
    return new Promise((resolve) => {
      let head = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (head += chunk));
      socket.on('close', () => resolve(head));
      socket.on('error', () => resolve(head));
    });
  }

  /**
   * A small complete request from `from`, repeated (bounded) until the gateway refuses it as busy,
   * as it must once the uploads held open have all arrived; the refusal.
   */
  async function busyFor(from: string): Promise<{ status: number; retryAfter?: string }> {
    return waitFor('the gateway to refuse as busy', async () => {
      const answer = await post(openUrl, INITIALIZE, from);
      return answer.status === 503 ? answer : undefined;
    });
  }

  it('holds a quarter of the budget per address and the budget in all: the rest 503 with Retry-After; the engine keeps serving', async () => {
    const perRequest = DEFAULT_LIMITS.maxBodyBytes;
    const perAddress = Math.floor(DEFAULT_BODY_BUDGET_BYTES / 4 / perRequest);
    const sockets: Socket[] = [];
    try {
      // one address: its share, then one more is refused at once
      const first = Array.from({ length: perAddress }, () => holdBody('127.0.0.2', sockets));
      expect(await busyFor('127.0.0.2')).toEqual({ status: 503, retryAfter: '1' });
      // another address is still served while the first holds its share
      const client = await sdkClient(openUrl);
      try {
        expect(text(await client.callTool({ name: 'greet', arguments: { name: 'Ada' } }))).toBe('Hello Ada');
      } finally {
        await client.close();
      }
      // three more addresses fill the whole budget; a fifth is refused
      for (const from of ['127.0.0.3', '127.0.0.4', '127.0.0.5'])
        for (let i = 0; i < perAddress; i += 1) first.push(holdBody(from, sockets));
      expect(await busyFor('127.0.0.6')).toEqual({ status: 503, retryAfter: '1' });
      // over the size limit is 413 whatever the budget
      const tooLarge = await post(openUrl, 'x', '127.0.0.7', { 'content-length': String(perRequest + 1) }).catch(
        () => ({ status: 0 }),
      );
      expect([413, 0]).toContain(tooLarge.status);
      // the engine's API answers throughout
      expect((await fetch(`${engine.url}/v1/health`, { headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(
        200,
      );
      // the held uploads give their room back when they end
      for (const socket of sockets) socket.destroy();
      await Promise.all(first);
      const served = await waitFor('a client served again', async () => {
        const again = await sdkClient(openUrl).catch(() => undefined);
        if (again === undefined) return undefined;
        try {
          return text(await again.callTool({ name: 'greet', arguments: { name: 'Grace' } }));
        } finally {
          await again.close();
        }
      });
      expect(served).toBe('Hello Grace');
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  }, 120_000);
});

describe('wrong bearer tokens through the gateway', () => {
  it('get 429 with Retry-After after 10 from one address; another address with the right token is served', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      statuses.push((await post(guardedUrl, INITIALIZE, '127.0.0.2', { authorization: `Bearer wrong-${i}` })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(10).fill(429));
    const blocked = await post(guardedUrl, INITIALIZE, '127.0.0.2', { authorization: `Bearer ${TOKEN}` });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await post(guardedUrl, INITIALIZE, '127.0.0.1', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  }, 60_000);
});
