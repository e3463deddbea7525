/**
 * Both protocol revisions through the gateway, on a real production deployment of 2 instances
 * (the built runtime: `npm run build` first). A request of the 2026-07-28 revision carries no
 * session: any healthy instance takes it, so they are shared out; a 2025-11-25 session stays on the
 * instance that holds it. The gateway reads the `Mcp-Method` / `Mcp-Name` headers of a 2026
 * request and refuses one that is not well formed; the instance refuses headers that disagree with
 * the body. A `subscriptions/listen` stream stays open through the gateway and hears resource updates.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import { toBuildRequest } from '../../../src/api/build-request.js';
import { loadDefinition } from '../../../src/definition/load.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createSandbox, type Sandbox } from '../../support/cli.js';
import { startRealEngine } from '../../support/engine.js';
import { eventually } from '../../support/wait.js';

const API_KEY = 'revisions-test-key-0123456789abcdef';
const MODERN = '2026-07-28';

const DEFINITION = `
name: revisions
template: custom
sessions: true
tools:
  - name: pid
    description: The id of the instance that answered.
    inputSchema: { type: object }
    handler: { type: module, module: revisions.mjs, export: pid }
  - name: touch
    description: Tells listeners that test://note changed.
    inputSchema: { type: object }
    handler: { type: module, module: revisions.mjs, export: touch }
resources:
  - uri: test://note
    name: note
    description: A note.
    mimeType: text/plain
    source: { type: file, path: note.txt }
`;
// a module is loaded once per process: its id names the instance (a sandboxed process is pid 1)
const MODULE = `
import { randomUUID } from 'node:crypto';
const instance = randomUUID();
export const pid = () => instance;
export async function touch(_args, context) {
  await context.resourceUpdated('test://note');
  return instance;
}
`;

let sandbox: Sandbox;
let engine: RunningEngine | undefined;
let mcpUrl: string;

beforeAll(async () => {
  sandbox = await createSandbox();
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: API_KEY });
  const dir = join(sandbox.dir, 'revisions');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'server.yaml'), DEFINITION);
  await writeFile(join(dir, 'revisions.mjs'), MODULE);
  await writeFile(join(dir, 'note.txt'), 'a note\n');
  const api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  const server = await api.build(await toBuildRequest(await loadDefinition(join(dir, 'server.yaml'))));
  const { deployment } = await api.deploy({
    mcp_id: server.mcp_id,
    environment: 'production',
    config: { scaling: { min_instances: 2, max_instances: 2 } },
  });
  expect(deployment.status).toBe('deployed');
  mcpUrl = `${deployment.url}/mcp`;
  expect(deployment.instances?.filter((instance) => instance.state === 'healthy')).toHaveLength(2);
}, 120_000);
afterAll(async () => {
  await engine?.close(1000);
  engine = undefined;
  await sandbox?.cleanup();
});

/** The `_meta` every request of the 2026-07-28 revision carries instead of a session. */
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'revisions-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Answer {
  status: number;
  body: { result?: { content?: Array<{ text?: string }> }; error?: { code: number; message: string } };
}

/** A 2026-07-28 request, its standard headers as given (`undefined` leaves one out). */
async function modern(
  method: string,
  params: Record<string, unknown>,
  headers: { 'mcp-method'?: string | undefined; 'mcp-name'?: string | undefined } = {},
): Promise<Answer> {
  const name = typeof params.name === 'string' ? params.name : undefined;
  const sent: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
  };
  const method_ = 'mcp-method' in headers ? headers['mcp-method'] : method;
  const name_ = 'mcp-name' in headers ? headers['mcp-name'] : name;
  if (method_ !== undefined) sent['mcp-method'] = method_;
  if (name_ !== undefined) sent['mcp-name'] = name_;
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: sent,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: envelope } }),
  });
  const text = await response.text();
  // an answer may come as an event stream of one message
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return { status: response.status, body: JSON.parse(json) as Answer['body'] };
}

const pidOf = (answer: Answer) => answer.body.result?.content?.[0]?.text;

describe('protocol revisions through the gateway, 2 instances', () => {
  it('shares 2026-07-28 requests out over both instances', async () => {
    const answered = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const answer = await modern('tools/call', { name: 'pid', arguments: {} });
      expect(answer.status).toBe(200);
      answered.add(pidOf(answer)!);
    }
    expect(answered.size).toBe(2);
  });

  it('keeps a 2025-11-25 session on the instance that holds it', async () => {
    const client = new Client({ name: 'revisions-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl));
    await client.connect(transport);
    try {
      expect(transport.sessionId).toBeDefined();
      const answered = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const result = await client.callTool({ name: 'pid', arguments: {} });
        answered.add((result.content as Array<{ text: string }>)[0]!.text);
      }
      expect(answered.size).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('refuses a 2026-07-28 request whose Mcp-Name header cannot be read, with HeaderMismatch', async () => {
    const answer = await modern('tools/call', { name: 'pid', arguments: {} }, { 'mcp-name': '=?base64?not base64?=' });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(-32020);
    expect(answer.body.error?.message).toMatch(/Mcp-Name/);
  });

  it('passes a request without Mcp-Method on, for the instance to refuse as the revision says', async () => {
    const answer = await modern('tools/list', {}, { 'mcp-method': undefined });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(-32020);
  });

  // ATTACK: the gateway counts a 2026 request by its headers; headers that name one tool while the
  // body calls another must not run the body's tool.
  it('does not run a tool other than the one the Mcp-Name header names', async () => {
    const answer = await modern('tools/call', { name: 'touch', arguments: {} }, { 'mcp-name': 'pid' });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(-32020);
    const method = await modern('tools/call', { name: 'pid', arguments: {} }, { 'mcp-method': 'tools/list' });
    expect(method.status).toBe(400);
    expect(method.body.error?.code).toBe(-32020);
  });

  it('keeps a subscriptions/listen stream open through the gateway, and it hears a resource update', async () => {
    // Two listeners: each stream holds a request in flight, so the second goes to the other
    // instance, and a module's update reaches the streams of the instance it ran on.
    const clients: Client[] = [];
    const heard: string[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const client = new Client(
          { name: 'revisions-listener', version: '1.0.0' },
          { versionNegotiation: { mode: { pin: MODERN } } },
        );
        await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
        client.setNotificationHandler('notifications/resources/updated', (n) => void heard.push(n.params.uri));
        const subscription = await client.listen({ resourceSubscriptions: ['test://note'] });
        expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['test://note']);
        clients.push(client);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const toucher = await modern('tools/call', { name: 'touch', arguments: {} });
      expect(toucher.status).toBe(200);
      await eventually(async () => expect(heard).toContain('test://note'), 5000);
    } finally {
      for (const client of clients) await client.close();
    }
  });
});
