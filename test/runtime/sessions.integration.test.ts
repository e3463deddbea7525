/**
 * Sessions and what needs them, served by `mcpctl dev` from examples/everything and spoken to by
 * the official MCP client over a real socket: the session header, GET and DELETE, logging levels,
 * progress, sampling, elicitation, completions, subscriptions (a file changed on disk, a module's
 * announcement), list_changed on reload, resuming a closed stream. A stateless definition keeps
 * answering without a session.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { startDev } from '../support/dev-session.js';
import { closeServer, firstText, listen, makeTempDir, bundleDefinition } from '../support/runtime.js';
import { waitFor, waitUntil } from '../support/wait.js';
import { readBundle } from '../../src/runtime/host/bundle.js';
import { createRuntime } from '../../src/runtime/server/server.js';

const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'everything');

interface Heard {
  method: string;
  params: Record<string, unknown>;
}

/** A client that can answer sampling and elicitation, and records every notification. */
async function connectClient(mcpUrl: string): Promise<{
  client: Client;
  transport: StreamableHTTPClientTransport;
  heard: Heard[];
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const client = new Client(
    { name: 'sessions-test', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  const heard: Heard[] = [];
  for (const method of [
    'notifications/message',
    'notifications/resources/updated',
    'notifications/tools/list_changed',
  ] as const) {
    client.setNotificationHandler(
      method,
      (notification) => void heard.push({ method, params: notification.params ?? {} }),
    );
  }
  client.setRequestHandler('sampling/createMessage', async (request) => {
    const first = request.params.messages[0]?.content;
    const asked = first !== undefined && !Array.isArray(first) && first.type === 'text' ? first.text : '?';
    return { role: 'assistant', model: 'stand-in', content: { type: 'text', text: `you asked: ${asked}` } };
  });
  client.setRequestHandler('elicitation/create', async (request) => {
    const schema = request.params.mode === 'url' ? {} : request.params.requestedSchema.properties;
    // accept every default the server offered, and name the fields that had none
    const content = Object.fromEntries(
      Object.entries(schema).map(([name, field]) => [
        name,
        (field as { default?: unknown }).default ?? `filled ${name}`,
      ]),
    );
    return { action: 'accept', content: content as Record<string, string> };
  });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl));
  await client.connect(transport);
  return { client, transport, heard, [Symbol.asyncDispose]: () => client.close() };
}

async function copyExample(): Promise<{ path: string; file: string; [Symbol.asyncDispose](): Promise<void> }> {
  const temp = await makeTempDir('mcpctl-everything-');
  await cp(EXAMPLE, temp.path, { recursive: true });
  return { ...temp, file: join(temp.path, 'server.yaml') };
}

describe('a definition with sessions, through mcpctl dev', () => {
  it('opens a session on initialize, serves GET for its stream, and ends it on DELETE (then 404)', async () => {
    await using copy = await copyExample();
    await using dev = startDev([copy.file, '--port', '0']);
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    const { client, transport } = await connectClient(mcpUrl!);
    const sessionId = transport.sessionId;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerCapabilities()).toMatchObject({
      resources: { subscribe: true, listChanged: true },
      completions: {},
      logging: {},
    });

    const headers = { 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-11-25' };
    // the client opened the session's GET stream after initialize: a second one is refused
    const get = await fetch(mcpUrl!, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(get.status).toBe(409);
    expect(await get.text()).toMatch(/Conflict: Only one SSE stream is allowed per session/);

    const noSession = await fetch(mcpUrl!, { headers: { accept: 'text/event-stream' } });
    expect(noSession.status).toBe(400);

    await transport.terminateSession();
    const after = await fetch(mcpUrl!, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { error: { message: string } }).error.message).toMatch(
      /Session not found.*initialize a new session/,
    );
    await client.close();
  });

  it('lets a module log (at the level the client set), report progress, sample and elicit', async () => {
    await using copy = await copyExample();
    await using dev = startDev([copy.file, '--port', '0']);
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    await using session = await connectClient(mcpUrl!);
    const { client, heard } = session;

    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(heard.filter((h) => h.method === 'notifications/message')).toEqual([]);
    await client.setLoggingLevel('info');
    expect(firstText(await client.callTool({ name: 'test_tool_with_logging', arguments: {} }))).toBe(
      'Tool with logging executed successfully',
    );
    expect(heard.filter((h) => h.method === 'notifications/message').map((h) => h.params)).toEqual([
      { level: 'info', data: 'Tool execution started', logger: 'test_tool_with_logging' },
      { level: 'info', data: 'Tool processing data', logger: 'test_tool_with_logging' },
      { level: 'info', data: 'Tool execution completed', logger: 'test_tool_with_logging' },
    ]);

    const progress: unknown[] = [];
    await client.callTool(
      { name: 'test_tool_with_progress', arguments: {} },
      { onprogress: (p) => void progress.push(p) },
    );
    expect(progress).toEqual([
      { progress: 0, total: 100, message: '0% done' },
      { progress: 50, total: 100, message: '50% done' },
      { progress: 100, total: 100, message: '100% done' },
    ]);

    expect(firstText(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'what is 2+2?' } }))).toBe(
      'LLM response: you asked: what is 2+2?',
    );
    expect(firstText(await client.callTool({ name: 'test_elicitation', arguments: { message: 'who are you?' } }))).toBe(
      'User response: action=accept, content={"username":"filled username","email":"filled email"}',
    );
    expect(firstText(await client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} }))).toBe(
      'Elicitation completed: action=accept, content={"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}',
    );
  });

  it('completes prompt arguments and template variables from the values the definition lists, an enum, or a module function', async () => {
    await using copy = await copyExample();
    await using dev = startDev([copy.file, '--port', '0']);
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    await using session = await connectClient(mcpUrl!);
    const { client } = session;
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'TESTI' },
    });
    expect(prompt.completion).toEqual({ values: ['testing'], total: 1, hasMore: false });
    const none = await client.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg2', value: '' },
    });
    expect(none.completion.values).toEqual([]);
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
      argument: { name: 'id', value: '4' },
    });
    expect(template.completion.values).toEqual(['456']);
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'a', value: '' } }),
    ).rejects.toThrow(/Unknown prompt: nope/);
    // an enum completes by itself; a module function reads the arguments already chosen
    const country = await client.complete({
      ref: { type: 'ref/prompt', name: 'plan_trip' },
      argument: { name: 'country', value: 'j' },
    });
    expect(country.completion.values).toEqual(['Japan']);
    const city = await client.complete({
      ref: { type: 'ref/prompt', name: 'plan_trip' },
      argument: { name: 'city', value: 'L' },
      context: { arguments: { country: 'France' } },
    });
    expect(city.completion).toEqual({ values: ['Lyon', 'Lille'], total: 2, hasMore: false });
    await expect(client.getPrompt({ name: 'plan_trip', arguments: { country: 'Peru', city: 'Lima' } })).rejects.toThrow(
      /argument "country" must be one of "France", "Germany", "Japan" \(got "Peru"\)/,
    );
    // an embedded resource's uri may be a template
    const embedded = await client.getPrompt({
      name: 'test_prompt_with_embedded_resource',
      arguments: { resourceUri: 'test://chosen' },
    });
    expect(embedded.messages[0]?.content).toMatchObject({
      type: 'resource',
      resource: { uri: 'test://chosen', text: 'Embedded resource content for testing.' },
    });
  });

  it('tells subscribers when a module says a resource changed, when its file changes on disk, and that lists changed on reload', async () => {
    await using copy = await copyExample();
    await using dev = startDev([copy.file, '--port', '0']);
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    await using subscriber = await connectClient(mcpUrl!);
    await using bystander = await connectClient(mcpUrl!);
    await subscriber.client.subscribeResource({ uri: 'test://watched-resource' });
    const updates = (heard: Heard[]) => heard.filter((h) => h.method === 'notifications/resources/updated');

    // a module's announcement reaches the subscriber only
    await bystander.client.callTool({ name: 'touch_watched', arguments: {} });
    await waitUntil('the module update', () => updates(subscriber.heard).length === 1);
    expect(updates(subscriber.heard)[0]!.params).toEqual({ uri: 'test://watched-resource' });

    // the file changes on disk: dev reloads, the session moves to the new runtime and hears both
    await writeFile(join(copy.path, 'data', 'watched.txt'), 'Watched resource: version 2.\n');
    await dev.waitFor(/reloaded .*server\.yaml/, 'stderr');
    await waitUntil('the file update', () => updates(subscriber.heard).length === 2);
    await waitFor('list_changed', () => subscriber.heard.find((h) => h.method === 'notifications/tools/list_changed'));
    const read = await subscriber.client.readResource({ uri: 'test://watched-resource' });
    expect(read.contents[0]).toMatchObject({ text: 'Watched resource: version 2.\n' });
    expect(updates(bystander.heard)).toEqual([]);

    // unsubscribed: a later announcement is not sent
    await subscriber.client.unsubscribeResource({ uri: 'test://watched-resource' });
    await bystander.client.callTool({ name: 'touch_watched', arguments: {} });
    await subscriber.client.ping();
    expect(updates(subscriber.heard)).toHaveLength(2);
  });

  it('resumes a stream the tool closed: the client reconnects with Last-Event-ID and gets the result', async () => {
    await using copy = await copyExample();
    await using dev = startDev([copy.file, '--port', '0']);
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    await using session = await connectClient(mcpUrl!);
    expect(firstText(await session.client.callTool({ name: 'test_reconnection', arguments: {} }))).toBe(
      'Reconnection test completed',
    );
    const log = dev.stdout() + dev.stderr();
    expect(log).toMatch(/GET \/mcp/);
  });
});

describe('a definition without sessions', () => {
  it('answers statelessly, and a tool that asks the client says a session is needed', async () => {
    await using copy = await copyExample();
    const text = await readFile(copy.file, 'utf8');
    await writeFile(copy.file, text.replace('sessions: true', 'sessions: false'));
    await using dev = startDev([copy.file, '--port', '0']);
    const [, mcpUrl] = await dev.waitFor(/MCP URL\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    await using session = await connectClient(mcpUrl!);
    expect(session.transport.sessionId).toBeUndefined();
    expect(session.client.getServerCapabilities()?.resources).toEqual({});
    const sampled = await session.client.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } });
    expect(sampled.isError).toBe(true);
    expect(firstText(sampled)).toMatch(/sampling needs a session: set "sessions: true"/);
    // logging and progress travel on the response stream of the call itself
    const progress: unknown[] = [];
    await session.client.callTool(
      { name: 'test_tool_with_progress', arguments: {} },
      { onprogress: (p) => void progress.push(p) },
    );
    expect(progress).toHaveLength(3);
  });
});

describe('session lifetime', () => {
  async function serveExample(idleMs: number) {
    const temp = await makeTempDir();
    const { dir } = await bundleDefinition(join(EXAMPLE, 'server.yaml'), temp.path);
    const bundle = await readBundle(dir);
    const runtime = await createRuntime(bundle.definition, { dir: bundle.filesDir, sessionIdleMs: idleMs });
    const { server, url } = await listen(runtime.handler);
    // a raw client: the SDK's would hold the session's GET stream open, and a session with an open stream is in use
    const post = (body: unknown, sessionId?: string) =>
      fetch(`${url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
        },
        body: JSON.stringify(body),
      });
    const initialize = async (): Promise<Response> =>
      post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
    const open = async (): Promise<string> => {
      const init = await initialize();
      const sessionId = init.headers.get('mcp-session-id')!;
      await init.text();
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).status).toBe(202);
      return sessionId;
    };
    return {
      runtime,
      url,
      filesDir: bundle.filesDir,
      post,
      initialize,
      open,
      async [Symbol.asyncDispose]() {
        await closeServer(server);
        await runtime.close();
        await temp[Symbol.asyncDispose]();
      },
    };
  }

  it('drains: refuses new sessions, serves the open one until it ends, then reports drained', async () => {
    await using served = await serveExample(60_000);
    const sessionId = await served.open();
    const drained = served.runtime.drain(10_000);
    expect((await served.initialize()).status).toBe(503);
    expect((await fetch(`${served.url}/health`)).status).toBe(503);
    const listed = await served.post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId);
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain('test_sampling');
    const ended = await fetch(`${served.url}/mcp`, {
      method: 'DELETE',
      headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(ended.status).toBe(200);
    expect(await drained).toBe(true);
  });

  it('watches a subscribed file resource on disk, as a deployed instance does', async () => {
    await using served = await serveExample(60_000);
    await using session = await connectClient(`${served.url}/mcp`);
    await session.client.subscribeResource({ uri: 'test://watched-resource' });
    await writeFile(join(served.filesDir, 'data', 'watched.txt'), 'changed on disk\n');
    const update = await waitFor('the update', () =>
      session.heard.find((h) => h.method === 'notifications/resources/updated'),
    );
    expect(update.params).toEqual({ uri: 'test://watched-resource' });
  });

  it('closes a session nobody used for longer than the idle time', async () => {
    await using served = await serveExample(300);
    const { runtime, post } = served;
    const sessionId = await served.open();
    expect(runtime.health().sessions).toBe(1);
    await waitUntil('the idle session to close', () => runtime.health().sessions === 0);
    expect((await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId)).status).toBe(404);
  });
});
