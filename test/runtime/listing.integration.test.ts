/**
 * What a definition says about its listings reaches clients: icons on the server, tools,
 * resources, templates and prompts; caching hints for 2026-07-28 clients only; and the
 * `Mcp-Param-*` headers of a tool's annotated arguments held to the arguments themselves.
 * Spoken to with plain JSON-RPC over fetch, so the wire is what is checked.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modernRequest } from '../support/modern.js';
import { FIXTURES, serveDefinition, type Served } from '../support/runtime.js';

const LISTING = join(FIXTURES, 'listing', 'server.yaml');

let served: Served;
beforeAll(async () => {
  served = await serveDefinition(LISTING, { defaultUserId: 'ada' });
});
afterAll(async () => {
  await served?.[Symbol.asyncDispose]();
});

let nextId = 1;
/** One 2026-07-28 request: its envelope, its Mcp-Method and Mcp-Name headers, and any more. */
async function modern(
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { result?: Record<string, unknown>; error?: { code: number; message: string } } }> {
  const response = await fetch(
    served.mcpUrl,
    modernRequest(method, params, { client: 'listing-test', id: nextId++, headers }),
  );
  return { status: response.status, body: (await response.json()) as never };
}

/** One request of a 2025 client, without a session (the server is stateless). */
async function legacy(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const response = await fetch(served.mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  const text = await response.text();
  const data = text.startsWith('{')
    ? text
    : (text.split('\n').find((line) => line.startsWith('data: ')) ?? '').slice(6);
  return (JSON.parse(data) as { result: Record<string, unknown> }).result;
}

describe('icons', () => {
  it('are listed on tools, resources, templates and prompts as the definition gives them', async () => {
    const tools = (await modern('tools/list')).body.result!.tools as Array<Record<string, unknown>>;
    expect(tools[0]!.icons).toEqual([{ src: 'https://example.com/transfer.png', theme: 'dark' }]);
    const resources = (await modern('resources/list')).body.result!.resources as Array<Record<string, unknown>>;
    expect(resources.find((r) => r.uri === 'docs://guide')!.icons).toEqual([{ src: 'https://example.com/guide.png' }]);
    const templates = (await modern('resources/templates/list')).body.result!.resourceTemplates as Array<
      Record<string, unknown>
    >;
    expect(templates[0]!.icons).toEqual([{ src: 'https://example.com/page.png' }]);
    const prompts = (await modern('prompts/list')).body.result!.prompts as Array<Record<string, unknown>>;
    expect(prompts[0]!.icons).toEqual([{ src: 'https://example.com/ask.png' }]);
  });

  it("are in the server's own description", async () => {
    const result = await legacy('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'listing-test', version: '1.0.0' },
    });
    expect((result.serverInfo as Record<string, unknown>).icons).toEqual([
      { src: 'https://example.com/server.png', mimeType: 'image/png', sizes: ['48x48'] },
    ]);
  });
});

describe('caching hints', () => {
  it.each(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'])(
    "%s carries the server's cache",
    async (method) => {
      const { result } = (await modern(method)).body;
      expect(result).toMatchObject({ ttlMs: 60000, cacheScope: 'public' });
    },
  );

  it("a resource's own cache wins over the server's", async () => {
    const { result } = (await modern('resources/read', { uri: 'docs://guide' })).body;
    expect(result).toMatchObject({ ttlMs: 300000, cacheScope: 'public' });
  });

  it("a resource without one takes the server's", async () => {
    const { result } = (await modern('resources/read', { uri: 'docs://intro' })).body;
    expect(result).toMatchObject({ ttlMs: 60000, cacheScope: 'public', contents: [{ text: 'Page intro' }] });
  });

  it('ATTACK: a resource that depends on the caller is private, though the server says public', async () => {
    const { result } = (await modern('resources/read', { uri: 'docs://mine' })).body;
    expect(result).toMatchObject({ cacheScope: 'private', contents: [{ text: 'Hello ada' }] });
  });

  it('are not sent to 2025 clients', async () => {
    const result = await legacy('tools/list');
    expect(result.tools).toHaveLength(1);
    expect(result).not.toHaveProperty('ttlMs');
    expect(result).not.toHaveProperty('cacheScope');
  });
});

describe('Mcp-Param headers', () => {
  const call = (args: Record<string, unknown>, headers: Record<string, string>) =>
    modern('tools/call', { name: 'transfer', arguments: args }, headers);

  it('a call whose headers agree with its arguments runs, plain or Base64', async () => {
    const plain = await call(
      { account: 'alice', amount: 500 },
      { 'mcp-param-account': 'alice', 'mcp-param-amount': '500' },
    );
    expect(plain.status).toBe(200);
    expect(plain.body.result).toMatchObject({ content: [{ text: '500 to alice' }] });
    const encoded = Buffer.from('alice').toString('base64');
    const base64 = await call(
      { account: 'alice', amount: 500 },
      { 'Mcp-Param-Account': `=?base64?${encoded}?=`, 'Mcp-Param-Amount': ' 500.0 ' },
    );
    expect(base64.status).toBe(200);
  });

  it('ATTACK: a header that shows a proxy another account than the body pays is refused', async () => {
    const smuggled = await call(
      { account: 'mallory', amount: 500 },
      { 'mcp-param-account': 'alice', 'mcp-param-amount': '500' },
    );
    expect(smuggled.status).toBe(400);
    expect(smuggled.body.error).toMatchObject({ code: -32020 });
    expect(smuggled.body.error!.message).toMatch(/Mcp-Param-Account/);
  });

  it('ATTACK: a Base64 header that decodes to another value is refused', async () => {
    const encoded = Buffer.from('alice').toString('base64');
    const smuggled = await call(
      { account: 'mallory', amount: 500 },
      { 'mcp-param-account': `=?base64?${encoded}?=`, 'mcp-param-amount': '500' },
    );
    expect(smuggled.status).toBe(400);
  });

  it.each([
    ['missing', { 'mcp-param-amount': '500' }],
    ['not canonical Base64', { 'mcp-param-account': '=?base64?YWxpY2U?=', 'mcp-param-amount': '500' }],
    ['a different number', { 'mcp-param-account': 'alice', 'mcp-param-amount': '5000' }],
  ])('a header that is %s is refused with HeaderMismatch', async (_, headers) => {
    const refused = await call({ account: 'alice', amount: 500 }, headers);
    expect(refused.status).toBe(400);
    expect(refused.body.error?.code).toBe(-32020);
  });

  it('2025 clients send no such headers and are not asked for them', async () => {
    const result = await legacy('tools/call', { name: 'transfer', arguments: { account: 'alice', amount: 5 } });
    expect(result).toMatchObject({ content: [{ text: '5 to alice' }] });
  });
});
