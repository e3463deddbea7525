/**
 * The runtime driven through the MCP SDK's own client over a real socket: every handler kind,
 * content type, resource source and prompt shape, in both protocol eras the SDK speaks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import {
  FIXTURES,
  connect,
  firstText,
  makeTempDir,
  serveDefinition,
  startBackend,
  type Served,
} from '../support/runtime.js';

const KITCHEN = join(FIXTURES, 'kitchen', 'server.yaml');
const API_KEY = 'sk-test-0123456789';

let backend: Awaited<ReturnType<typeof startBackend>>;
let served: Served;

beforeAll(async () => {
  backend = await startBackend();
  served = await serveDefinition(KITCHEN, {
    env: { BACKEND_URL: backend.url, API_KEY, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    allowedOrigins: ['http://localhost:5173'],
    debug: true,
  });
});

afterAll(async () => {
  await served?.[Symbol.asyncDispose]();
  await backend?.[Symbol.asyncDispose]();
});

describe.each(['legacy', 'modern'] as const)('over the %s protocol era', (era) => {
  it('lists tools, resources, templates and prompts', async () => {
    await using client = await connect(served.mcpUrl, { era });
    expect(client.getServerVersion()).toMatchObject({ name: 'kitchen', version: '1.2.3' });
    expect(client.getInstructions()).toBe('Use the tools to test the runtime.');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('greet');
    const greet = tools.find((t) => t.name === 'greet')!;
    expect(greet.inputSchema).toMatchObject({ type: 'object', required: ['name'] });
    const add = tools.find((t) => t.name === 'add')!;
    expect(add.outputSchema).toMatchObject({ required: ['sum'] });

    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(['notes://readme', 'files://logo', 'notes://mine', 'empty://nothing']));
    // team://plan is for alice only, and this caller named no user
    expect(uris).not.toContain('team://plan');
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(
      expect.arrayContaining(['items://{id}', 'greeting://{name}', 'remote://{key}']),
    );

    const { prompts } = await client.listPrompts();
    expect(prompts.find((p) => p.name === 'summarize')).toMatchObject({
      title: 'Summarize a topic',
      arguments: [
        { name: 'topic', required: true },
        { name: 'style', description: 'the tone' },
      ],
    });
  });

  it('renders a templated static tool', async () => {
    await using client = await connect(served.mcpUrl, { era });
    const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
    expect(result.isError).toBeFalsy();
    expect(firstText(result)).toBe('Hello, Ada! I am kitchen 1.2.3.');
  });

  it('returns structured JSON content, keeping the types of whole placeholders and applying defaults', async () => {
    await using client = await connect(served.mcpUrl, { era });
    const result = await client.callTool({ name: 'plan', arguments: { days: 3 } });
    expect(result.structuredContent).toEqual({ days: 3, unit: 'c', label: '3 days' });
    expect(JSON.parse(firstText(result))).toEqual({ days: 3, unit: 'c', label: '3 days' });
  });

  it('names the bad field of invalid arguments in an error result', async () => {
    await using client = await connect(served.mcpUrl, { era });
    const missing = await client.callTool({ name: 'greet', arguments: {} });
    expect(missing.isError).toBe(true);
    expect(firstText(missing)).toMatch(/Invalid arguments for tool "greet": name is required/);
    // how it failed, for test agents: the arguments, not the handler
    expect(missing._meta).toMatchObject({ 'mcpctl/failure': { kind: 'arguments' } });

    const wrong = await client.callTool({ name: 'plan', arguments: { days: 'three', unit: 'k', extra: 1 } });
    expect(wrong.isError).toBe(true);
    const text = firstText(wrong);
    expect(text).toContain('days must be integer');
    expect(text).toContain('unit must be one of "c", "f"');
    expect(text).toContain('extra is not an accepted argument');
  });

  it('answers an unknown tool with a protocol error', async () => {
    await using client = await connect(served.mcpUrl, { era });
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool: nope/);
  });

  it('returns image, audio and embedded resource content', async () => {
    await using client = await connect(served.mcpUrl, { era, headers: { 'X-MCP-User-Id': 'carol' } });
    const result = await client.callTool({ name: 'media', arguments: {} });
    const content = result.content as Array<Record<string, unknown>>;
    expect(content.map((c) => c.type)).toEqual(['image', 'audio', 'resource', 'resource']);
    expect(content[0]).toMatchObject({ mimeType: 'image/png' });
    expect(
      Buffer.from(content[0]!.data as string, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(content[1]).toMatchObject({ mimeType: 'audio/wav' });
    expect(
      Buffer.from(content[1]!.data as string, 'base64')
        .subarray(0, 4)
        .toString(),
    ).toBe('RIFF');
    expect(content[2]).toEqual({
      type: 'resource',
      resource: { uri: 'memo://inline', mimeType: 'text/markdown', text: 'Memo for carol' },
    });
    expect(content[3]).toEqual({
      type: 'resource',
      resource: { uri: 'notes://readme', mimeType: 'text/markdown', text: '# Read me\n\nServed by kitchen.' },
    });
  });

  it('answers with an error result for an error handler and for a tool without a handler', async () => {
    await using client = await connect(served.mcpUrl, { era });
    const outage = await client.callTool({ name: 'outage', arguments: { what: 'billing' } });
    expect(outage).toMatchObject({ isError: true });
    expect(firstText(outage)).toBe('The billing service is down.');
    expect(outage._meta).toMatchObject({ 'mcpctl/failure': { kind: 'thrown' } });
    const unbuilt = await client.callTool({ name: 'unbuilt', arguments: {} });
    expect(unbuilt.isError).toBe(true);
    expect(firstText(unbuilt)).toMatch(/has no handler/);
  });

  it('calls an HTTP backend with URL-encoded values and resolved headers', async () => {
    await using client = await connect(served.mcpUrl, { era, headers: { 'X-MCP-User-Id': 'dave' } });
    const before = backend.requests.length;
    const result = await client.callTool({ name: 'weather', arguments: { city: 'São Paulo/admin?x=1' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ city: 'São Paulo/admin?x=1', temperature: 21.5 });
    const request = backend.requests[before]!;
    // the value is one path segment: its / and ? cannot change where the request goes
    expect(request.url).toBe(`/forecast/S%C3%A3o%20Paulo%2Fadmin%3Fx%3D1?units=metric&key=${API_KEY}`);
    expect(request.headers['x-api-key']).toBe(API_KEY);
    expect(request.headers['x-user']).toBe('dave');
  });

  it('posts a templated JSON body', async () => {
    await using client = await connect(served.mcpUrl, { era });
    const result = await client.callTool({
      name: 'post_echo',
      arguments: { text: 'hi "there"', count: 2 },
      _meta: { 'mcpctl/user_id': 'erin' },
    });
    expect(result.structuredContent).toEqual({ received: { message: 'hi "there"', times: 2, by: 'erin' } });
  });

  it('runs a subprocess with the arguments as JSON on stdin', async () => {
    await using client = await connect(served.mcpUrl, { era });
    const result = await client.callTool({ name: 'sum', arguments: { numbers: [1, 2, 3.5] } });
    expect(result.structuredContent).toEqual({ sum: 6.5, count: 3 });
  });

  it('calls functions of a TypeScript module, with its output checked against outputSchema', async () => {
    await using client = await connect(served.mcpUrl, { era, headers: { 'X-MCP-User-Id': 'frank' } });
    const add = await client.callTool({ name: 'add', arguments: { a: 0.1, b: 0.2 } });
    expect(add.structuredContent).toEqual({ sum: 0.3 });
    const divide = await client.callTool({ name: 'divide', arguments: { a: 1, b: 0 } });
    expect(divide.isError).toBe(true);
    expect(firstText(divide)).toBe('Tool "divide" failed: cannot divide by zero');
    const who = await client.callTool({ name: 'who', arguments: {} });
    expect(firstText(who)).toBe('user=frank tool=who');
  });

  it('reads inline, file, binary, templated and URL resources', async () => {
    await using client = await connect(served.mcpUrl, { era });
    expect((await client.readResource({ uri: 'notes://readme' })).contents).toEqual([
      { uri: 'notes://readme', mimeType: 'text/markdown', text: '# Read me\n\nServed by kitchen.' },
    ]);
    const logo = (await client.readResource({ uri: 'files://logo' })).contents[0] as { blob: string; mimeType: string };
    expect(logo.mimeType).toBe('image/png');
    expect(Buffer.from(logo.blob, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect((await client.readResource({ uri: 'files://guide' })).contents[0]).toMatchObject({
      mimeType: 'text/markdown',
      text: '# Guide\n\nRead me first.\n',
    });
    expect((await client.readResource({ uri: 'files://beep' })).contents[0]).toMatchObject({
      mimeType: 'audio/wav',
      blob: expect.any(String),
    });
    expect((await client.readResource({ uri: 'items://42' })).contents[0]).toMatchObject({
      uri: 'items://42',
      mimeType: 'application/json',
      text: '{"id": 42, "name": "answer"}\n',
    });
    expect((await client.readResource({ uri: 'greeting://Grace' })).contents[0]).toMatchObject({
      text: 'Hello, Grace!',
    });
    expect((await client.readResource({ uri: 'remote://a%20b' })).contents[0]).toMatchObject({
      mimeType: 'text/plain',
      text: expect.stringMatching(/^raw path: \/data\//),
    });
    expect((await client.readResource({ uri: 'empty://nothing' })).contents[0]).toMatchObject({
      text: expect.stringMatching(/no source/),
    });
  });

  it('answers an unknown resource and a missing templated file with errors', async () => {
    await using client = await connect(served.mcpUrl, { era });
    await expect(client.readResource({ uri: 'nothing://here' })).rejects.toThrow(/Unknown resource/);
    await expect(client.readResource({ uri: 'items://7' })).rejects.toThrow(/Nothing is stored for items:\/\/7/);
  });

  it('serves per-user resources by header and by _meta, and enforces users:', async () => {
    await using anonymous = await connect(served.mcpUrl, { era });
    await expect(anonymous.readResource({ uri: 'notes://mine' })).rejects.toThrow(
      /depends on the caller.*X-MCP-User-Id/,
    );

    await using alice = await connect(served.mcpUrl, { era, headers: { 'X-MCP-User-Id': 'alice' } });
    expect((await alice.readResource({ uri: 'notes://mine' })).contents[0]).toMatchObject({
      text: '# Alice notes\n\n- buy milk\n',
    });
    expect((await alice.listResources()).resources.map((r) => r.uri)).toContain('team://plan');
    expect((await alice.readResource({ uri: 'team://plan' })).contents[0]).toMatchObject({
      text: 'Plan for alice: ship it.',
    });

    // _meta names the caller per request, and wins over the header
    const bob = await alice.readResource({ uri: 'notes://mine', _meta: { 'mcpctl/user_id': 'bob' } });
    expect(bob.contents[0]).toMatchObject({ text: '# Bob notes\n\n- fix bike\n' });
    await expect(alice.readResource({ uri: 'team://plan', _meta: { 'mcpctl/user_id': 'bob' } })).rejects.toThrow(
      /User "bob" may not read team:\/\/plan/,
    );
  });

  it('gets prompts with arguments, and refuses a missing required argument', async () => {
    await using client = await connect(served.mcpUrl, { era });
    const prompt = await client.getPrompt({ name: 'summarize', arguments: { topic: 'MCP', style: 'brief' } });
    expect(prompt.description).toBe('Asks for a summary.');
    expect(prompt.messages).toHaveLength(4);
    expect(prompt.messages[0]).toEqual({
      role: 'user',
      content: { type: 'text', text: 'Summarize MCP in a brief style.' },
    });
    expect(prompt.messages[1]).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'Summary of MCP coming up.' },
    });
    expect(prompt.messages[2]!.content).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(prompt.messages[3]!.content).toMatchObject({
      type: 'resource',
      resource: { uri: 'notes://readme', text: expect.stringContaining('Read me') },
    });

    // an optional argument left out renders empty
    const plainStyle = await client.getPrompt({ name: 'summarize', arguments: { topic: 'MCP' } });
    expect(plainStyle.messages[0]!.content).toEqual({ type: 'text', text: 'Summarize MCP in a  style.' });

    await expect(client.getPrompt({ name: 'summarize', arguments: { style: 'long' } })).rejects.toThrow(
      /needs the argument "topic"/,
    );
    await expect(client.getPrompt({ name: 'nope' })).rejects.toThrow(/Unknown prompt: nope/);

    const plain = await client.getPrompt({ name: 'plain', arguments: { subject: 'tides' } });
    expect(plain.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'A prompt without messages.\nsubject: tides' } },
    ]);
  });
});

describe('the 2025 protocol revisions', () => {
  it('answers ping and logging/setLevel', async () => {
    await using client = await connect(served.mcpUrl);
    await expect(client.ping()).resolves.toEqual({});
    await expect(client.setLoggingLevel('debug')).resolves.toEqual({});
  });

  it.each(['2025-03-26', '2025-06-18', '2024-11-05'])(
    'initializes a client of revision %s with raw HTTP, then serves tools/call',
    async (protocolVersion) => {
      const post = (body: unknown, extra: Record<string, string> = {}) =>
        fetch(served.mcpUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra },
          body: JSON.stringify(body),
        });
      const init = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'old', version: '0' } },
      });
      expect(init.status).toBe(200);
      const initText = await init.text();
      expect(initText).toContain(`"protocolVersion":"${protocolVersion}"`);
      expect(initText).toContain('"name":"kitchen"');

      const headers: Record<string, string> =
        protocolVersion === '2024-11-05' ? {} : { 'mcp-protocol-version': protocolVersion };
      const call = await post(
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'greet', arguments: { name: 'Old' } } },
        headers,
      );
      expect(call.status).toBe(200);
      expect(await call.text()).toContain('Hello, Old!');
    },
  );
});

describe('the HTTP surface', () => {
  it('reports health', async () => {
    const response = await fetch(`${served.url}/health`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      status: 'ok',
      name: 'kitchen',
      version: '1.2.3',
      tools: 21,
      resources: 11,
      prompts: 2,
    });
    expect(body.uptime_seconds).toEqual(expect.any(Number));
  });

  it('rejects a foreign Host header and a foreign Origin (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          served.mcpUrl,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
      });
    expect(await status({ host: 'evil.example.com' })).toBe(403);
    expect(await status({ origin: 'https://evil.example.com' })).toBe(403);
    expect(await status({ host: `localhost:${new URL(served.url).port}`, origin: 'http://localhost:5173' })).not.toBe(
      403,
    );
    // another port of localhost is another origin
    expect(await status({ host: `localhost:${new URL(served.url).port}`, origin: 'http://localhost:5174' })).toBe(403);
    const rejected = served.logs.filter((entry) => entry.event === 'request' && entry.status === 403);
    expect(rejected.length).toBeGreaterThanOrEqual(2);
  });

  it('answers 404 off the MCP path, 400 for a body that is not JSON, 413 past the size limit', async () => {
    expect((await fetch(`${served.url}/other`)).status).toBe(404);
    const bad = await fetch(served.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{nope',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } });
    const huge = await fetch(served.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'greet', arguments: { name: 'x'.repeat(5 * 1024 * 1024) } },
      }),
    });
    expect(huge.status).toBe(413);
  });

  it('logs one line per request, with debug details and secrets redacted', async () => {
    await using client = await connect(served.mcpUrl, { headers: { 'X-MCP-User-Id': 'alice' } });
    await client.callTool({ name: 'weather', arguments: { city: 'Oslo' } });
    const line = served.logs.findLast(
      (entry) => entry.event === 'request' && entry.rpc === 'tools/call' && entry.target === 'weather',
    );
    expect(line).toMatchObject({
      level: 'info',
      method: 'POST',
      path: '/mcp',
      status: 200,
      user_id: 'alice',
      params: { name: 'weather' },
    });
    expect(line!.duration_ms).toEqual(expect.any(Number));
    expect(JSON.stringify(served.logs)).not.toContain(API_KEY);

    await client.callTool({ name: 'outage', arguments: { what: 'x' } });
    // a failed tool call is a warning, so `mcpctl logs --level warn` finds it
    expect(served.logs.findLast((entry) => entry.target === 'outage')).toMatchObject({ level: 'warn', is_error: true });
  });
});

describe('values from the environment', () => {
  it('are hidden from every log line and from the error text returned, whatever the variable is called and wherever it is used', async () => {
    const value = 'plain-value-42xy';
    await using dir = await makeTempDir();
    const file = join(dir.path, 'server.yaml');
    // exec env values resolve after the logger is made: they must still be hidden
    await writeFile(
      file,
      [
        'name: env-values',
        'template: basic',
        'tools:',
        '  - name: tell',
        '    description: Prints its variable on stderr and fails',
        '    inputSchema: { type: object }',
        '    handler:',
        '      type: exec',
        `      command: [${JSON.stringify(process.execPath)}, "-e", "process.stderr.write('it is ' + process.env.SETTING); process.exit(1)"]`,
        '      env: { SETTING: "${HARMLESS_NAME}" }',
      ].join('\n'),
    );
    await using served = await serveDefinition(file, {
      env: { HARMLESS_NAME: value, PATH: process.env.PATH ?? '/usr/bin:/bin' },
      debug: true,
    });
    await using client = await connect(served.mcpUrl);
    const result = await client.callTool({ name: 'tell', arguments: { echo: value } });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toContain('it is [redacted]');
    expect(JSON.stringify(served.logs)).not.toContain(value);
    expect(JSON.stringify(served.logs)).toContain('[redacted]');
  });
});
