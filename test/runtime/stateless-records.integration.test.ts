/**
 * Stateless serving (a server without `sessions`) on a real 127.0.0.1 socket: the handlers of a
 * request find its record (the validated identity, the log line) without an AsyncLocalStorage, so
 * Node never turns its promise hooks on (with them on, every promise of the process is tracked).
 * Twenty callers at once, each with a token of their own and naming someone else in `_meta` and in
 * the X-MCP-User-Id header, each get their own identity, over 2025 and 2026-07-28 requests alike,
 * and each request's log line names its caller.
 */
import { AsyncLocalStorage, executionAsyncId } from 'node:async_hooks';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalCredentials, type LocalCredentials } from '../../src/engine/local-credentials.js';
import { readBundle } from '../../src/runtime/host/bundle.js';
import type { LogEntry } from '../../src/runtime/server/logger.js';
import { createRuntime, type Runtime, type RuntimeDefinition } from '../../src/runtime/server/server.js';
import { bundleDefinition, closeServer, connect, firstText, listen, makeTempDir } from '../support/runtime.js';
import { eventually } from '../support/wait.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'auth', 'notes', 'server.yaml');
const USERS = Array.from({ length: 20 }, (_, i) => `user-${String(i).padStart(2, '0')}`);
const ALICE_DIARY = 'notes://alice/diary';

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let definition: RuntimeDefinition;
let credentials: LocalCredentials;
let runtime: Runtime;
let server: Awaited<ReturnType<typeof listen>>['server'];
let mcpUrl: string;
const logs: LogEntry[] = [];

beforeAll(async () => {
  temp = await makeTempDir('mcpctl-stateless-');
  const bundle = await readBundle((await bundleDefinition(FIXTURE, temp.path)).dir);
  definition = bundle.definition;
  credentials = createLocalCredentials();
  // the engine's own key: tokens for any user, signed here, no authorization server
  const { env } = await credentials.prepare(definition, { AUTH_ISSUER: 'https://issuer.invalid' });
  runtime = await createRuntime(definition, {
    dir: bundle.filesDir,
    env,
    logger: { debug: false, log: (entry) => logs.push(entry) },
  });
  let url: string;
  ({ server, url } = await listen(runtime.handler));
  mcpUrl = `${url}/mcp`;
});

afterAll(async () => {
  if (server !== undefined) await closeServer(server);
  await runtime?.close();
  await temp?.[Symbol.asyncDispose]();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Whether Node tracks promises: with its promise hooks on, a promise reaction runs under an async id of its own. */
async function promiseHooksOn(): Promise<boolean> {
  return (await Promise.resolve().then(() => executionAsyncId())) !== 0;
}

async function tokenFor(user: string): Promise<string> {
  const token = await (await credentials.prepare(definition, {}, user)).token(mcpUrl);
  if (token === undefined) throw new Error('the notes server has auth: a token was expected');
  return token;
}

interface Answer {
  result?: { content?: Array<{ text?: string }>; contents?: Array<{ text?: string }> };
}

/** A 2025 request, as a stateless client sends it: the text of the tool result or resource it answers with. */
async function legacyText(
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<string | undefined> {
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await response.text();
  const data = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).trim())
        .at(-1)
    : text;
  const answer = JSON.parse(data ?? '{}') as Answer;
  return (answer.result?.content ?? answer.result?.contents)?.[0]?.text;
}

/** The other user a caller pretends to be, by `_meta` and by header. */
const otherThan = (index: number): string => USERS[(index + 1) % USERS.length]!;

describe('stateless serving', () => {
  it('serves 2025 and 2026-07-28 requests without turning on promise hooks', async () => {
    expect(await promiseHooksOn()).toBe(false);
    const run = vi.spyOn(AsyncLocalStorage.prototype, 'run');
    const enterWith = vi.spyOn(AsyncLocalStorage.prototype, 'enterWith');
    const headers = { authorization: `Bearer ${await tokenFor('alice')}` };

    expect(await legacyText('tools/call', { name: 'whoami', arguments: {} }, headers)).toBe('You are alice.');
    expect(await legacyText('resources/read', { uri: ALICE_DIARY }, headers)).toBe('ALICE-DIARY read by alice');
    await using legacy = await connect(mcpUrl, { headers });
    expect((await legacy.listTools()).tools.map((tool) => tool.name)).toContain('whoami');
    expect(firstText(await legacy.callTool({ name: 'whoami', arguments: {} }))).toBe('You are alice.');

    await using modern = await connect(mcpUrl, { era: 'modern', headers });
    expect(firstText(await modern.callTool({ name: 'whoami', arguments: {} }))).toBe('You are alice.');
    expect((await modern.listResources()).resources.map((resource) => resource.uri)).toContain(ALICE_DIARY);
    const read = await modern.readResource({ uri: ALICE_DIARY });
    expect(read.contents[0]).toMatchObject({ text: 'ALICE-DIARY read by alice' });

    expect(run).not.toHaveBeenCalled();
    expect(enterWith).not.toHaveBeenCalled();
    expect(await promiseHooksOn()).toBe(false);
  });

  it('gives twenty 2025 callers at once each their own validated identity, whoever they name', async () => {
    const tokens = await Promise.all(USERS.map(tokenFor));
    const texts = await Promise.all(
      USERS.map((_user, i) =>
        legacyText(
          'tools/call',
          { name: 'whoami', arguments: {}, _meta: { 'mcpctl/user_id': otherThan(i) } },
          { authorization: `Bearer ${tokens[i]!}`, 'x-mcp-user-id': otherThan(i) },
        ),
      ),
    );
    expect(texts).toEqual(USERS.map((user) => `You are ${user}.`));
    // each request's log line names the caller of its token
    await eventually(async () => {
      const logged = logs.filter((entry) => entry.event === 'request' && entry.rpc === 'tools/call');
      for (const user of USERS) expect(logged.map((entry) => entry.user_id)).toContain(user);
    });
    expect(await promiseHooksOn()).toBe(false);
  });

  it('gives twenty 2026-07-28 callers at once each their own validated identity, whoever they name', async () => {
    const tokens = await Promise.all(USERS.map(tokenFor));
    const clients = await Promise.all(
      tokens.map((token, i) =>
        connect(mcpUrl, {
          era: 'modern',
          headers: { authorization: `Bearer ${token}`, 'x-mcp-user-id': otherThan(i) },
        }),
      ),
    );
    try {
      const texts = await Promise.all(
        clients.map(async (client, i) =>
          firstText(
            await client.callTool({ name: 'whoami', arguments: {}, _meta: { 'mcpctl/user_id': otherThan(i) } }),
          ),
        ),
      );
      expect(texts).toEqual(USERS.map((user) => `You are ${user}.`));
      // alice's diary is listed for alice only: user-00 names her, and does not see it
      const listed = await clients[0]!.listResources({ _meta: { 'mcpctl/user_id': 'alice' } });
      expect(listed.resources.map((resource) => resource.uri)).not.toContain(ALICE_DIARY);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    expect(await promiseHooksOn()).toBe(false);
  });
});
