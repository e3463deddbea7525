/**
 * MCP sessions behind the gateway: a server written on the MCP SDK that holds sessions
 * (test/fixtures/instance/session-server.mjs), deployed with 2 instances. Every request of a
 * session reaches the instance that holds it; a session whose instance is gone is answered 404
 * (so the client initializes again); a stopping deployment lets its instances drain their sessions.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../support/deployments.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness({ limits: { drainTimeoutMs: 20_000 } });
});
afterEach(async () => {
  await h.close();
});

interface Answer {
  status: number;
  session: string | undefined;
  message: { result?: { content?: Array<{ text?: string }> }; error?: { message: string } } | undefined;
}

async function rpc(mcpUrl: string, body: unknown, session?: string, method = 'POST'): Promise<Answer> {
  const response = await fetch(mcpUrl, {
    method,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(session === undefined ? {} : { 'mcp-session-id': session }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let message: Answer['message'];
  try {
    message = text === '' ? undefined : (JSON.parse(text) as Answer['message']);
  } catch {
    message = undefined;
  }
  return { status: response.status, session: response.headers.get('mcp-session-id') ?? undefined, message };
}

/** initialize, then notifications/initialized: a session id. */
async function openSession(mcpUrl: string): Promise<string> {
  const init = await rpc(mcpUrl, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'sessions-test', version: '1.0.0' },
    },
  });
  expect(init.status).toBe(200);
  expect(init.session).toBeDefined();
  const ready = await rpc(mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
  expect(ready.status).toBe(202);
  return init.session!;
}

async function call(mcpUrl: string, session: string, tool: string): Promise<Answer & { text?: string }> {
  const answer = await rpc(
    mcpUrl,
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: {} } },
    session,
  );
  return { ...answer, text: answer.message?.result?.content?.[0]?.text };
}

describe('sessions through the gateway', () => {
  it('go to the instance that holds them, new ones are balanced, and a session whose instance died is gone', async () => {
    const server = await h.addServer('sessions', { sessions: true });
    const d = await h.deploy(server, 'production', { scaling: { min_instances: 2, max_instances: 2 } });
    expect(d.status).toBe('deployed');
    const mcp = `${d.url}/mcp`;

    const sessions = [];
    for (let i = 0; i < 4; i += 1) sessions.push(await openSession(mcp));
    const pidOf = new Map<string, string>();
    for (const session of sessions) {
      // The counter lives in one process: three calls count 1, 2, 3 only if all reach it.
      const counts = [];
      for (let i = 0; i < 3; i += 1) counts.push((await call(mcp, session, 'count')).text);
      expect(counts).toEqual(['1', '2', '3']);
      const pid = (await call(mcp, session, 'pid')).text!;
      expect((await call(mcp, session, 'pid')).text).toBe(pid);
      pidOf.set(session, pid);
    }
    // New sessions are shared out over both instances.
    expect(new Set(pidOf.values()).size).toBe(2);

    const [first] = sessions;
    const victim = Number(pidOf.get(first!));
    const survivor = sessions.find((session) => Number(pidOf.get(session)) !== victim)!;
    process.kill(victim, 'SIGKILL');
    const gone = await call(mcp, first!, 'count');
    expect(gone.status).toBe(404);
    expect(gone.message?.error?.message).toMatch(/session .* is gone/);
    // Asked again, it is not routed to the other instance either.
    expect((await call(mcp, first!, 'count')).status).toBe(404);
    // A session on the other instance goes on where it was.
    expect((await call(mcp, survivor, 'count')).text).toBe('4');

    // The client initializes again and goes on; the official client does the same through the gateway.
    const again = await openSession(mcp);
    expect((await call(mcp, again, 'count')).text).toBe('1');
    const client = new Client({ name: 'sessions-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp)));
    try {
      const texts = [];
      for (let i = 0; i < 3; i += 1) {
        const result = (await client.callTool({ name: 'count', arguments: {} })) as {
          content: Array<{ text: string }>;
        };
        texts.push(result.content[0]!.text);
      }
      expect(texts).toEqual(['1', '2', '3']);
    } finally {
      await client.close();
    }
  });

  it('end with DELETE, and a stopping deployment lets its instances finish their sessions first', async () => {
    const server = await h.addServer('sessions', { sessions: true });
    const d = await h.deploy(server, 'production', { scaling: { min_instances: 2, max_instances: 2 } });
    const mcp = `${d.url}/mcp`;
    const session = await openSession(mcp);
    expect((await call(mcp, session, 'count')).text).toBe('1');

    const stopping = h.service.stop(d.deployment_id);
    await h.waitUntil(d.deployment_id, (x) => x.status === 'stopped', 'the deployment to be stopped');
    // New requests are refused, but the session's instance drains: the session goes on.
    expect((await rpc(mcp, { jsonrpc: '2.0', id: 3, method: 'tools/list' })).status).toBe(503);
    expect((await call(mcp, session, 'count')).text).toBe('2');

    // Its end lets the instance stop.
    expect((await rpc(mcp, undefined, session, 'DELETE')).status).toBe(200);
    const stopped = await stopping;
    expect(stopped.status).toBe('stopped');
    expect((await call(mcp, session, 'count')).status).not.toBe(200);
    expect(
      (await h.service.status(d.deployment_id))!.instances!.every((instance) => instance.state === 'stopped'),
    ).toBe(true);
  });
});
