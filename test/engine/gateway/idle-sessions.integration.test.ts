/**
 * Scale to zero and the two protocol revisions, through the gateway of a real engine (the built
 * runtime: `npm run build` first). A definition with `sessions: true` deployed to staging with an
 * idle period of 1 s: a 2025-11-25 session opened before the deployment went idle is gone with its
 * instance, so its next request is answered 404 "Session not found" (the client initializes
 * again, and that wakes the deployment); a 2026-07-28 request carries no session and is served.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../../src/api/contract.js';
import { ApiClient } from '../../../src/api/client.js';
import { toBuildRequest } from '../../../src/api/build-request.js';
import { loadDefinition } from '../../../src/definition/load.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { createSandbox, type Sandbox } from '../../support/cli.js';
import { startRealEngine } from '../../support/engine.js';
import { eventually } from '../../support/wait.js';

const API_KEY = 'idle-sessions-test-key-0123456789abcdef';
const MODERN = '2026-07-28';

const DEFINITION = `
name: sleepy
template: custom
sessions: true
tools:
  - name: hello
    description: Says hello.
    inputSchema: { type: object }
    handler: { type: module, module: sleepy.mjs, export: hello }
`;
const MODULE = `export const hello = () => 'hello';\n`;

let sandbox: Sandbox;
let engine: RunningEngine | undefined;
let api: ApiClient;
let deployment: Deployment;
let mcpUrl: string;

beforeAll(async () => {
  sandbox = await createSandbox();
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, {
    apiKey: API_KEY,
    // the process runner's sandbox must see the runtime's packages where they really are (a linked node_modules)
    ...(process.env.MCPCTL_SANDBOX_PATHS === undefined
      ? {}
      : { env: { MCPCTL_SANDBOX_PATHS: process.env.MCPCTL_SANDBOX_PATHS } }),
  });
  const dir = join(sandbox.dir, 'sleepy');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'server.yaml'), DEFINITION);
  await writeFile(join(dir, 'sleepy.mjs'), MODULE);
  api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  const server = await api.build(await toBuildRequest(await loadDefinition(join(dir, 'server.yaml'))));
  ({ deployment } = await api.deploy({
    mcp_id: server.mcp_id,
    environment: 'staging',
    config: { scaling: { idle_seconds: 1 } },
  }));
  expect(deployment.status).toBe('deployed');
  mcpUrl = `${deployment.url}/mcp`;
}, 120_000);
afterAll(async () => {
  await api?.close();
  await engine?.close(1000);
  engine = undefined;
  await sandbox?.cleanup();
});

interface Answer {
  status: number;
  session: string | null;
  body: { result?: { content?: Array<{ text?: string }> }; error?: { code: number; message: string } };
}

async function post(message: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
  const text = await response.text();
  // an answer may come as an event stream (its message on a `data:` line that is not empty); a notification's has no body
  const json = text.startsWith('{') ? text : (/^data: (.+)$/m.exec(text)?.[1] ?? '{}');
  return { status: response.status, session: response.headers.get('mcp-session-id'), body: JSON.parse(json) };
}

/** A 2025-11-25 client's handshake: its session id. */
async function initialize(): Promise<string> {
  const answer = await post({
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'idle-test', version: '1.0.0' } },
  });
  expect(answer.status).toBe(200);
  expect(answer.session).toBeTruthy();
  const headers = { 'mcp-session-id': answer.session!, 'mcp-protocol-version': '2025-11-25' };
  expect((await post({ method: 'notifications/initialized' }, headers)).status).toBe(202);
  return answer.session!;
}

function callInSession(session: string): Promise<Answer> {
  return post(
    { id: 2, method: 'tools/call', params: { name: 'hello', arguments: {} } },
    { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
  );
}

/** Waits (bounded) until the deployment holds no instance. */
async function idle(): Promise<Deployment> {
  let seen: Deployment | undefined;
  await eventually(async () => {
    seen = (await api.status(deployment.deployment_id)).deployment;
    expect(seen).toMatchObject({ status: 'deployed', idle: true, instances: [] });
  }, 20_000);
  return seen!;
}

describe('an idle deployment and the protocol revisions', () => {
  it('ends a 2025-11-25 session whose instance stopped while idle with 404, and a new initialize wakes it', async () => {
    const session = await initialize();
    const first = await callInSession(session);
    expect(first.status).toBe(200);
    expect(first.body.result?.content?.[0]?.text).toBe('hello');

    await idle();
    const gone = await callInSession(session);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: -32001, message: expect.stringMatching(/^Session not found/) });
    // no instance was started to say so: it is still idle until the client initializes again
    expect((await api.status(deployment.deployment_id)).deployment).toMatchObject({ idle: true, instances: [] });

    const again = await initialize();
    expect(again).not.toBe(session);
    const answer = await callInSession(again);
    expect(answer.status).toBe(200);
    expect(answer.body.result?.content?.[0]?.text).toBe('hello');
    expect((await api.status(deployment.deployment_id)).deployment).toMatchObject({ stage: 'running' });
  });

  it('serves a 2026-07-28 request to an idle deployment: it carries no session and wakes it', async () => {
    await idle();
    const answer = await post(
      {
        id: 3,
        method: 'tools/call',
        params: {
          name: 'hello',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientInfo': { name: 'idle-test', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'hello' },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.result?.content?.[0]?.text).toBe('hello');
    expect(answer.session).toBeNull();
    const woken = (await api.status(deployment.deployment_id)).deployment;
    expect(woken).toMatchObject({ status: 'deployed', stage: 'running' });
    expect(woken?.idle).toBeUndefined();
  });
});
