/**
 * Browser pages and a runtime's HTTP front: no page of another origin may call it unless its exact
 * origin (scheme, host and port) is listed, by `allowedOrigins` or by MCPCTL_ALLOWED_ORIGINS in the
 * runtime's environment (how `mcpctl dev` and serve-bundle take it); a listed one gets CORS headers.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, serveDefinition } from '../support/runtime.js';

const DEFINITION = join(FIXTURES, 'dev', 'server.yaml');

async function preflight(mcpUrl: string, origin: string): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
}

async function list(mcpUrl: string, origin: string): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

describe('CORS of a runtime', () => {
  it('refuses every page by default, localhost pages included', async () => {
    await using served = await serveDefinition(DEFINITION, { env: {} });
    // ATTACK: a page on any port of localhost used to be let in
    for (const origin of ['http://localhost:9999', 'http://127.0.0.1:5173', 'http://evil.example']) {
      const answer = await preflight(served.mcpUrl, origin);
      expect(answer.status, origin).toBe(403);
      expect(answer.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect((await list(served.mcpUrl, origin)).status, origin).toBe(403);
    }
  });

  it('lets in exactly the origins of MCPCTL_ALLOWED_ORIGINS (the MCP Inspector on its port)', async () => {
    await using served = await serveDefinition(DEFINITION, {
      env: { MCPCTL_ALLOWED_ORIGINS: 'http://localhost:6274' },
    });
    const answer = await preflight(served.mcpUrl, 'http://localhost:6274');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    const call = await list(served.mcpUrl, 'http://localhost:6274');
    expect(call.status).toBe(200);
    expect(call.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    // the same host on another port, or over another scheme, is another origin
    expect((await preflight(served.mcpUrl, 'http://localhost:6275')).status).toBe(403);
    expect((await preflight(served.mcpUrl, 'https://localhost:6274')).status).toBe(403);
  });

  it("lets in a page of the server's own origin, and still no rebinding host", async () => {
    await using served = await serveDefinition(DEFINITION, { env: {} });
    const own = new URL(served.mcpUrl).origin;
    expect((await list(served.mcpUrl, own)).status).toBe(200);
    // ATTACK: DNS rebinding: the page's origin is the attacker's name, and so is the Host it sends
    const rebound = await fetch(served.mcpUrl, {
      method: 'POST',
      headers: {
        host: 'evil.example.com',
        origin: 'http://evil.example.com',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(rebound.status).toBe(403);
  });

  it('lets a listed page send the 2026-07-28 headers: Mcp-Method, Mcp-Name and the Mcp-Param-* it asks for', async () => {
    await using served = await serveDefinition(DEFINITION, {
      env: { MCPCTL_ALLOWED_ORIGINS: 'http://localhost:6274' },
    });
    const answer = await fetch(served.mcpUrl, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:6274',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-method, mcp-name, Mcp-Param-Region, x-other',
      },
    });
    expect(answer.status).toBe(204);
    const allowed = (answer.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['mcp-method', 'mcp-name', 'mcp-param-region']));
    // only headers of the Mcp-Param-* form are taken from what the page asks for
    expect(allowed).not.toContain('x-other');
  });
});
