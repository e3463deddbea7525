/**
 * A production deployment behind real OAuth: an authorization server on loopback (oidc-provider)
 * issues the tokens; the engine's gateway and the instances check them. Every path to the server
 * (the deployment's URL, its stable URL, its domain) refuses a missing or bad token with the
 * challenge an MCP client discovers the metadata from, and the identity is the token's alone.
 * Real engine, real runtime processes, from dist/.
 */
import { request as httpRequest } from 'node:http';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { BuildRequestInput, Deployment } from '../../../src/api/contract.js';
import { ApiError } from '../../../src/api/errors.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { requireBuilt } from '../../support/app.js';
import { startAuthorizationServer, type AuthorizationServer } from '../../support/authorization-server.js';
import { startRealEngine } from '../../support/engine.js';
import { tempDir, type TempDir } from '../../support/temp.js';

const API_KEY = 'auth-test-key-0123456789abcdef0123456789';
const DOMAIN = 'notes.example.test';

function definition(issuer: string, name = 'notes'): BuildRequestInput {
  return {
    name,
    template: 'basic',
    auth: { type: 'oauth', issuer, scopes: ['notes:read'] },
    tools: [
      {
        name: 'whoami',
        description: 'Says who is calling, as the server knows it',
        inputSchema: { type: 'object', properties: {} },
        handler: { type: 'static', content: [{ type: 'text', text: 'you are {{user.id}}' }] },
      },
      {
        name: 'write_note',
        description: 'Writes a note; needs the notes:write scope',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        scopes: ['notes:write'],
        handler: { type: 'static', content: [{ type: 'text', text: 'written' }] },
      },
    ],
    resources: [
      {
        uri: 'notes://alice/private',
        name: 'alice-private',
        description: 'Only alice may read this',
        mimeType: 'text/plain',
        per_user: true,
        users: ['alice'],
        source: { type: 'text', text: 'alice-secret-notes' },
      },
    ],
  };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request, with any Host (a domain) and no pooling. */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const text = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream',
      ...(text === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    };
    const request = httpRequest(
      url,
      { method: options.method ?? (text === undefined ? 'GET' : 'POST'), headers, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}

/** The JSON-RPC result of an answer (JSON or one event of a stream). */
function resultOf(answer: Answer): {
  result?: { content?: Array<{ text?: string }>; contents?: Array<{ text?: string }> };
  error?: { message: string };
} {
  const data = answer.body.startsWith('{') ? answer.body : (/^data: (.*)$/m.exec(answer.body)?.[1] ?? '{}');
  return JSON.parse(data) as ReturnType<typeof resultOf>;
}

const call = (name: string, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: {}, ...(meta === undefined ? {} : { _meta: meta }) },
});
const read = (uri: string, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 2,
  method: 'resources/read',
  params: { uri, ...(meta === undefined ? {} : { _meta: meta }) },
});

let as: AuthorizationServer;
let home: TempDir;
let engine: RunningEngine;
let client: ApiClient;
let deployment: Deployment;
let port: string;
/** the three ways to the server: URL and the Host to send */
let paths: Array<{ label: string; url: string; host?: string; resource: string }>;

beforeAll(async () => {
  requireBuilt();
  as = await startAuthorizationServer();
  home = await tempDir('mcpctl-auth-');
  // the MCP Inspector's page may call the deployments
  engine = await startRealEngine(home.dir, {
    apiKey: API_KEY,
    fast: false,
    env: { MCPCTL_ALLOWED_ORIGINS: 'http://localhost:6274' },
  });
  client = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  const server = await client.build(definition(as.issuer));
  deployment = (await client.deploy({ mcp_id: server.mcp_id, environment: 'production', config: { domain: DOMAIN } }))
    .deployment;
  expect(deployment.status).toBe('deployed');
  port = new URL(engine.url).port;
  const stable = `${engine.url}/d/notes.production/mcp`;
  paths = [
    { label: 'deployment URL', url: `${deployment.url}/mcp`, resource: `${deployment.url}/mcp` },
    { label: 'stable URL', url: stable, resource: stable },
    { label: 'domain', url: `${engine.url}/mcp`, host: `${DOMAIN}:${port}`, resource: `http://${DOMAIN}:${port}/mcp` },
  ];
}, 120_000);

afterAll(async () => {
  await engine?.close();
  await as?.close();
  await home?.cleanup();
});

const hostHeader = (host: string | undefined): Record<string, string> => (host === undefined ? {} : { host });
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
/** alice's token, for the stable URL (any of the deployment's URLs is its audience) */
const aliceToken = () => as.token({ clientId: 'alice', resource: paths[1]!.resource });

describe('a production deployment with OAuth', () => {
  it('answers no token 401 with the metadata URL of the path it was reached by, and serves that RFC 9728 document', async () => {
    for (const path of paths) {
      const answer = await send(path.url, { body: call('whoami'), headers: hostHeader(path.host) });
      expect(answer.status, path.label).toBe(401);
      const challenge = String(answer.headers['www-authenticate']);
      const resource = new URL(path.resource);
      const metadataUrl = `${resource.origin}/.well-known/oauth-protected-resource${resource.pathname}`;
      expect(challenge, path.label).toContain(`resource_metadata="${metadataUrl}"`);
      expect(challenge, path.label).toContain('scope="notes:read"');

      const document = await send(`${engine.url}/.well-known/oauth-protected-resource${resource.pathname}`, {
        headers: hostHeader(path.host),
      });
      expect(document.status, path.label).toBe(200);
      expect(JSON.parse(document.body), path.label).toMatchObject({
        resource: path.resource,
        authorization_servers: [as.issuer],
        scopes_supported: expect.arrayContaining(['notes:read', 'notes:write']),
      });
    }
    expect(deployment.auth).toEqual({
      type: 'oauth',
      resource_metadata: `http://${DOMAIN}:${port}/.well-known/oauth-protected-resource/mcp`,
    });
  });

  it('lets a page (a browser-based client) read the refusal and the metadata', async () => {
    const origin = { origin: 'http://localhost:6274' };
    const refused = await send(paths[1]!.url, { body: call('whoami'), headers: origin });
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    expect(String(refused.headers['access-control-expose-headers'])).toContain('WWW-Authenticate');
    const document = await send(`${engine.url}/.well-known/oauth-protected-resource/d/notes.production/mcp`, {
      headers: origin,
    });
    expect(document.status).toBe(200);
    expect(document.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers a good token through the deployment URL, the stable URL and the domain, with the identity from the token', async () => {
    const token = await aliceToken();
    for (const path of paths) {
      const answer = await send(path.url, {
        body: call('whoami'),
        headers: { ...hostHeader(path.host), ...bearer(token) },
      });
      expect(answer.status, path.label).toBe(200);
      expect(resultOf(answer).result?.content?.[0]?.text, path.label).toBe('you are alice');
    }
  });

  it('refuses wrong-audience, wrong-issuer, expired, unsigned and unknown-key tokens on every path', async () => {
    const claims = { aud: paths[1]!.resource, sub: 'alice', scope: 'notes:read notes:write' };
    const forged = {
      'wrong audience': await as.forge.wrongAudience(claims),
      'wrong issuer': await as.forge.wrongIssuer(claims),
      expired: await as.forge.expired(claims),
      'alg none': as.forge.algNone(claims),
      'unknown key': await as.forge.unknownKey(claims),
      'another server': await as.token({ clientId: 'alice', resource: `${engine.url}/d/other.production/mcp` }),
    };
    for (const path of paths) {
      for (const [what, token] of Object.entries(forged)) {
        const answer = await send(path.url, {
          body: call('whoami'),
          headers: { ...hostHeader(path.host), ...bearer(token) },
        });
        expect(answer.status, `${what} via ${path.label}`).toBe(401);
        expect(String(answer.headers['www-authenticate']), `${what} via ${path.label}`).toContain(
          'error="invalid_token"',
        );
      }
    }
  });

  it('answers a token without a needed scope 403 insufficient_scope, for the server and for a tool', async () => {
    const none = await as.forge.sign({ aud: paths[1]!.resource, sub: 'alice', scope: 'profile' });
    const noRead = await send(paths[1]!.url, { body: call('whoami'), headers: bearer(none) });
    expect(noRead.status).toBe(403);
    expect(String(noRead.headers['www-authenticate'])).toContain('error="insufficient_scope"');

    const bob = await as.token({ clientId: 'bob', resource: paths[1]!.resource });
    const bobWrites = await send(paths[1]!.url, { body: call('write_note'), headers: bearer(bob) });
    expect(bobWrites.status).toBe(403);
    expect(String(bobWrites.headers['www-authenticate'])).toMatch(/scope="[^"]*notes:write/);
    const aliceWrites = await send(paths[1]!.url, { body: call('write_note'), headers: bearer(await aliceToken()) });
    expect(aliceWrites.status).toBe(200);
    expect(resultOf(aliceWrites).result?.content?.[0]?.text).toBe('written');
  });

  it('gives a per-user resource to its user by token, and nothing to an identity a client names', async () => {
    const alice = await send(paths[1]!.url, {
      body: read('notes://alice/private'),
      headers: bearer(await aliceToken()),
    });
    expect(resultOf(alice).result?.contents?.[0]?.text).toBe('alice-secret-notes');

    const bob = await as.token({ clientId: 'bob', resource: paths[1]!.resource });
    const spoofs: Array<{ what: string; headers: Record<string, string>; body: unknown }> = [
      {
        what: 'header, bob',
        headers: { ...bearer(bob), 'x-mcp-user-id': 'alice' },
        body: read('notes://alice/private'),
      },
      { what: '_meta, bob', headers: bearer(bob), body: read('notes://alice/private', { 'mcpctl/user_id': 'alice' }) },
      {
        what: 'both, bob',
        headers: { ...bearer(bob), 'x-mcp-user-id': 'alice' },
        body: read('notes://alice/private', { 'mcpctl/user_id': 'alice' }),
      },
      { what: 'header, no token', headers: { 'x-mcp-user-id': 'alice' }, body: read('notes://alice/private') },
      { what: '_meta, no token', headers: {}, body: read('notes://alice/private', { 'mcpctl/user_id': 'alice' }) },
    ];
    for (const spoof of spoofs) {
      for (const path of paths) {
        const answer = await send(path.url, {
          body: spoof.body,
          headers: { ...hostHeader(path.host), ...spoof.headers },
        });
        expect(answer.body, `${spoof.what} via ${path.label}`).not.toContain('alice-secret-notes');
      }
    }
    const whoami = await send(paths[1]!.url, {
      body: call('whoami', { 'mcpctl/user_id': 'admin' }),
      headers: { ...bearer(bob), 'x-mcp-user-id': 'admin' },
    });
    expect(resultOf(whoami).result?.content?.[0]?.text).toBe('you are bob');
  });

  it('lets the official MCP client discover the authorization server from a 401 and call a tool', async () => {
    const authProvider = new ClientCredentialsProvider({
      clientId: 'alice',
      clientSecret: as.clients.find((c) => c.clientId === 'alice')!.clientSecret,
      scope: 'notes:read notes:write',
      expectedIssuer: as.issuer,
    });
    const mcp = new Client({ name: 'auth-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(paths[1]!.url), { authProvider }));
    try {
      const result = await mcp.callTool({ name: 'whoami', arguments: {} });
      expect((result.content as Array<{ text: string }>)[0]!.text).toBe('you are alice');
    } finally {
      await mcp.close();
    }
  });

  it('tests an OAuth server offline: the engine signs the test user’s token itself', async () => {
    const result = await client.test({
      mcp_id: deployment.mcp_id!,
      message: 'Who am I?',
      context: { user_id: 'carol' },
      expect: { tools: ['whoami'] },
    });
    expect(result.tools_used).toContain('whoami');
    expect(result.tool_calls?.[0]).toMatchObject({ name: 'whoami', ok: true });
    expect(JSON.stringify(result)).toContain('you are carol');
  });
});

describe('exposure', () => {
  it('refuses a deployment with a domain whose definition has no auth, naming auth; auth: none deploys and says so', async () => {
    const open = await client.build({ ...definition(as.issuer, 'open'), auth: undefined });
    const refused = await client
      .deploy({ mcp_id: open.mcp_id, environment: 'production', config: { domain: 'open.example.test' } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('validation_failed');
    expect((refused as ApiError).message).toContain('auth');
    expect((refused as ApiError).details.map((d) => d.path)).toEqual(['auth']);

    // without a domain, on a loopback engine, nothing changes
    const local = await client.deploy({ mcp_id: open.mcp_id, environment: 'staging' });
    expect(local.deployment.status).toBe('deployed');
    expect(local.deployment.auth).toBeUndefined();

    const publicServer = await client.build({ ...definition(as.issuer, 'public'), auth: { type: 'none' } });
    const shown = await client.deploy({
      mcp_id: publicServer.mcp_id,
      environment: 'production',
      config: { domain: 'public.example.test' },
    });
    expect(shown.deployment.status).toBe('deployed');
    expect(shown.deployment.auth).toEqual({ type: 'none' });
    expect(shown.deployment.notices?.some((n) => n.startsWith('public: anyone who reaches it can call it'))).toBe(true);
  });
});
