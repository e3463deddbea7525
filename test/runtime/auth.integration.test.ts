/**
 * The runtime as an OAuth resource server, against a real authorization server on loopback: what a
 * caller without a valid token sees (401 and where to get one), the protected resource metadata,
 * each kind of bad token, key rotation, scopes (403), the identity that reaches per-user
 * resources, an explicit audience, the engine's audiences and its own key, bearer tokens, and the
 * MCP SDK client's own OAuth flow.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createLocalCredentials } from '../../src/engine/local-credentials.js';
import { AUDIENCES_ENV, LOCAL_JWKS_ENV } from '../../src/runtime/server/auth.js';
import { readBundle } from '../../src/runtime/host/bundle.js';
import { createRuntime, type RuntimeDefinition } from '../../src/runtime/server/server.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/authorization-server.js';
import { bundleDefinition, closeServer, listen, makeTempDir } from '../support/runtime.js';
import { eventually } from '../support/wait.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'auth', 'notes', 'server.yaml');
const PROTOCOL_VERSION = '2025-11-25';
const CONFIGURED_AUDIENCE = 'https://notes.example.com/mcp';
const ALICE_DIARY = 'notes://alice/diary';
const TODAY = 'notes://me/today';

type Auth = NonNullable<RuntimeDefinition['auth']>;

interface Instance {
  url: string;
  mcpUrl: string;
  metadataUrl: string;
  [Symbol.asyncDispose](): Promise<void>;
}

interface RpcAnswer {
  status: number;
  headers: Headers;
  /** the JSON-RPC response, when the body held one */
  message: { result?: Record<string, unknown>; error?: { code: number; message: string } } | undefined;
  text: string;
}

let as: AuthorizationServer;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let definition: RuntimeDefinition;
let filesDir: string;
let main: Instance;

beforeAll(async () => {
  as = await startAuthorizationServer();
  temp = await makeTempDir('mcpctl-auth-');
  const { dir } = await bundleDefinition(FIXTURE, temp.path);
  const bundle = await readBundle(dir);
  definition = bundle.definition;
  filesDir = bundle.filesDir;
  main = await serve(definition);
});

afterAll(async () => {
  await main?.[Symbol.asyncDispose]();
  await temp?.[Symbol.asyncDispose]();
  await as?.close();
});

/** Serves `served` on 127.0.0.1 with the authorization server's issuer in its environment. */
async function serve(
  served: RuntimeDefinition,
  env: Record<string, string> = {},
  issuer = as.issuer,
): Promise<Instance> {
  const runtime = await createRuntime(served, { dir: filesDir, env: { AUTH_ISSUER: issuer, ...env } });
  const { server, url } = await listen(runtime.handler);
  return {
    url,
    mcpUrl: `${url}/mcp`,
    metadataUrl: `${url}/.well-known/oauth-protected-resource/mcp`,
    async [Symbol.asyncDispose]() {
      await closeServer(server);
      await runtime.close();
    },
  };
}

function withAuth(auth: Auth, base: RuntimeDefinition = definition): RuntimeDefinition {
  return { ...base, auth };
}

function oauthOf(base: RuntimeDefinition = definition): Extract<Auth, { type: 'oauth' }> {
  const auth = base.auth;
  if (auth?.type !== 'oauth') throw new Error('the fixture is an oauth server');
  return auth;
}

/** One JSON-RPC request, as a client posts it to a stateless server. */
async function rpc(
  mcpUrl: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<RpcAnswer> {
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    message: parseMessage(text, response.headers.get('content-type') ?? ''),
    text,
  };
}

function parseMessage(text: string, contentType: string): RpcAnswer['message'] {
  try {
    if (contentType.startsWith('text/event-stream')) {
      const data = text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).trim())
        .filter((line) => line.startsWith('{'))
        .at(-1);
      return data === undefined ? undefined : (JSON.parse(data) as RpcAnswer['message']);
    }
    return JSON.parse(text) as RpcAnswer['message'];
  } catch {
    return undefined;
  }
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** A token of the authorization server for `resource` (default: the main instance's MCP URL). */
function tokenFor(clientId: 'alice' | 'bob', options: { resource?: string; scope?: string } = {}): Promise<string> {
  return as.token({
    clientId,
    resource: options.resource ?? main.mcpUrl,
    ...(options.scope === undefined ? {} : { scope: options.scope }),
  });
}

function toolText(answer: RpcAnswer): string {
  const content = answer.message?.result?.content as Array<{ type: string; text?: string }> | undefined;
  return content?.map((block) => block.text ?? '').join('') ?? '';
}

function resourceText(answer: RpcAnswer): string {
  const contents = answer.message?.result?.contents as Array<{ text?: string }> | undefined;
  return contents?.map((c) => c.text ?? '').join('') ?? '';
}

function listedUris(answer: RpcAnswer): string[] {
  return ((answer.message?.result?.resources as Array<{ uri: string }> | undefined) ?? []).map((r) => r.uri);
}

/** The parameters of a `Bearer` challenge. */
function challengeOf(answer: { headers: Headers }): Record<string, string> {
  const header = answer.headers.get('www-authenticate') ?? '';
  expect(header).toMatch(/^Bearer /);
  return Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

describe('an oauth server refuses a request without a valid token', () => {
  it('answers 401 without a token, naming its metadata and the scopes', async () => {
    const answer = await rpc(main.mcpUrl, 'tools/list');
    expect(answer.status).toBe(401);
    const header = answer.headers.get('www-authenticate') ?? '';
    expect(header).toMatch(/^Bearer /);
    expect(header).toContain(`resource_metadata="${main.metadataUrl}"`);
    expect(header).toContain('scope="notes:read"');
    // no token was sent: no error code (RFC 6750 §3.1)
    expect(header).not.toContain('error=');
    expect(main.metadataUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp$/);
    expect(answer.message?.result).toBeUndefined();
  });

  it('serves the protected resource metadata (RFC 9728) at the MCP path and at the root', async () => {
    for (const url of [main.metadataUrl, `${main.url}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const document = (await response.json()) as {
        resource: string;
        authorization_servers: string[];
        scopes_supported: string[];
        bearer_methods_supported: string[];
      };
      expect(document.resource).toBe(main.mcpUrl);
      expect(document.authorization_servers).toEqual([as.issuer]);
      expect(document.scopes_supported).toEqual(expect.arrayContaining(['notes:read', 'notes:write']));
      expect(document.bearer_methods_supported).toEqual(['header']);
    }
  });

  it('lists the tools for a token of the authorization server issued for its URL', async () => {
    const answer = await rpc(main.mcpUrl, 'tools/list', {}, bearer(await tokenFor('alice')));
    expect(answer.status).toBe(200);
    const tools = (answer.message?.result?.tools as Array<{ name: string }>).map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['whoami', 'write_note']));
  });

  const claims = () => ({ aud: main.mcpUrl, sub: 'alice', scope: 'notes:read notes:write' });
  const forged: Array<[string, () => Promise<string> | string]> = [
    ['for another audience', () => as.forge.wrongAudience(claims())],
    ['from another issuer', () => as.forge.wrongIssuer(claims())],
    ['expired', () => as.forge.expired(claims())],
    ['unsigned (alg none)', () => as.forge.algNone(claims())],
    ['signed by an unknown key without kid', () => as.forge.unknownKey(claims())],
    ['signed by an unknown key with an unknown kid', () => as.forge.unknownKey(claims(), { kid: 'not-published' })],
    ['signed by an unknown key with the real kid', () => as.forge.unknownKey(claims(), { kid: as.signingKey.kid })],
    [
      'for the audience of a whole other server',
      async () => as.token({ clientId: 'alice', resource: 'http://127.0.0.1:1/mcp' }),
    ],
  ];
  it.each(forged)('refuses a token %s with 401 invalid_token', async (_name, make) => {
    // the forger signs well: the same claims with nothing wrong are accepted
    const good = await rpc(main.mcpUrl, 'tools/list', {}, bearer(await as.forge.sign(claims())));
    expect(good.status).toBe(200);
    const answer = await rpc(main.mcpUrl, 'tools/list', {}, bearer(await make()));
    expect(answer.status).toBe(401);
    const challenge = challengeOf(answer);
    expect(challenge.error).toBe('invalid_token');
    expect(challenge.resource_metadata).toBe(main.metadataUrl);
    expect(answer.message?.result).toBeUndefined();
  });

  it('refuses what is not a JWT, and an Authorization that is not Bearer', async () => {
    const opaque = await rpc(main.mcpUrl, 'tools/list', {}, bearer('not-a-jwt'));
    expect(opaque.status).toBe(401);
    expect(challengeOf(opaque).error).toBe('invalid_token');
    const basic = await rpc(
      main.mcpUrl,
      'tools/list',
      {},
      { authorization: `Basic ${Buffer.from('alice:alice-secret').toString('base64')}` },
    );
    expect(basic.status).toBe(401);
    expect(challengeOf(basic).resource_metadata).toBe(main.metadataUrl);
  });
});

describe('key rotation', () => {
  it('accepts tokens of the new key and refuses those of the old one once the issuer rotates', async () => {
    // an authorization server of its own: the rotation must not touch the other tests' keys
    const rotating = await startAuthorizationServer();
    await using instance = await serve(definition, {}, rotating.issuer);
    try {
      const old = await rotating.token({ clientId: 'alice', resource: instance.mcpUrl });
      expect((await rpc(instance.mcpUrl, 'tools/list', {}, bearer(old))).status).toBe(200);

      await rotating.rotateKeys();
      const fresh = await rotating.token({ clientId: 'alice', resource: instance.mcpUrl });
      // the server reads the keys again on an unknown kid, at most once a second
      await eventually(async () =>
        expect((await rpc(instance.mcpUrl, 'tools/list', {}, bearer(fresh))).status).toBe(200),
      );

      const refused = await rpc(instance.mcpUrl, 'tools/list', {}, bearer(old));
      expect(refused.status).toBe(401);
      expect(challengeOf(refused).error).toBe('invalid_token');
    } finally {
      await rotating.close();
    }
  });
});

describe('scopes', () => {
  it('refuses a token without the scopes every request needs with 403 insufficient_scope', async () => {
    const token = await tokenFor('alice', { scope: 'notes:write' });
    const answer = await rpc(main.mcpUrl, 'tools/list', {}, bearer(token));
    expect(answer.status).toBe(403);
    const challenge = challengeOf(answer);
    expect(challenge.error).toBe('insufficient_scope');
    expect(challenge.scope?.split(' ')).toContain('notes:read');
    expect(challenge.resource_metadata).toBe(main.metadataUrl);
  });

  it('refuses bob (notes:read) the tool that needs notes:write, naming that scope, and lets alice call it', async () => {
    const args = { name: 'write_note', arguments: { text: 'hello' } };
    const bob = await rpc(main.mcpUrl, 'tools/call', args, bearer(await tokenFor('bob')));
    expect(bob.status).toBe(403);
    const challenge = challengeOf(bob);
    expect(challenge.error).toBe('insufficient_scope');
    expect(challenge.scope?.split(' ')).toContain('notes:write');
    expect(bob.text).not.toContain('wrote');

    // bob may still call a tool that needs nothing more
    const whoami = await rpc(
      main.mcpUrl,
      'tools/call',
      { name: 'whoami', arguments: {} },
      bearer(await tokenFor('bob')),
    );
    expect(whoami.status).toBe(200);
    expect(toolText(whoami)).toBe('You are bob.');

    const alice = await rpc(main.mcpUrl, 'tools/call', args, bearer(await tokenFor('alice')));
    expect(alice.status).toBe(200);
    expect(toolText(alice)).toBe('alice wrote: hello');
  });

  it('refuses a batch that hides the tool needing notes:write behind another call', async () => {
    const response = await fetch(main.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': PROTOCOL_VERSION,
        ...bearer(await tokenFor('bob')),
      },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write_note', arguments: { text: 'sneaky' } } },
      ]),
    });
    expect(response.status).toBe(403);
    expect(await response.text()).not.toContain('sneaky');
  });
});

describe('identity comes from the token only', () => {
  it("gives alice's token alice's per-user data", async () => {
    const token = bearer(await tokenFor('alice'));
    const today = await rpc(main.mcpUrl, 'resources/read', { uri: TODAY }, token);
    expect(today.status).toBe(200);
    expect(resourceText(today)).toContain('ALICE-TODAY');
    const diary = await rpc(main.mcpUrl, 'resources/read', { uri: ALICE_DIARY }, token);
    expect(resourceText(diary)).toBe('ALICE-DIARY read by alice');
    const listed = await rpc(main.mcpUrl, 'resources/list', {}, token);
    expect(listedUris(listed)).toContain(ALICE_DIARY);
    const whoami = await rpc(main.mcpUrl, 'tools/call', { name: 'whoami', arguments: {} }, token);
    expect(toolText(whoami)).toBe('You are alice.');
  });

  /** What bob gets, whatever id the request names besides his token. */
  async function expectNothingOfAlice(
    headers: Record<string, string>,
    meta: Record<string, unknown> = {},
  ): Promise<void> {
    const params = (extra: Record<string, unknown>) => ({
      ...extra,
      ...(Object.keys(meta).length === 0 ? {} : { _meta: meta }),
    });
    const today = await rpc(main.mcpUrl, 'resources/read', params({ uri: TODAY }), headers);
    expect(today.status).toBe(200);
    expect(today.text).not.toContain('ALICE');
    expect(resourceText(today)).toContain('BOB-TODAY');
    const diary = await rpc(main.mcpUrl, 'resources/read', params({ uri: ALICE_DIARY }), headers);
    expect(diary.text).not.toContain('ALICE-DIARY');
    expect(diary.message?.error?.message).toMatch(/"bob" may not read/);
    const listed = await rpc(main.mcpUrl, 'resources/list', params({}), headers);
    expect(listed.status).toBe(200);
    expect(listedUris(listed)).toContain(TODAY);
    expect(listedUris(listed)).not.toContain(ALICE_DIARY);
    const whoami = await rpc(main.mcpUrl, 'tools/call', params({ name: 'whoami', arguments: {} }), headers);
    expect(toolText(whoami)).toBe('You are bob.');
  }

  it("gives bob's token nothing of alice's", async () => {
    await expectNothingOfAlice(bearer(await tokenFor('bob')));
  });

  it('ignores X-MCP-User-Id sent with a token', async () => {
    await expectNothingOfAlice({ ...bearer(await tokenFor('bob')), 'x-mcp-user-id': 'alice' });
  });

  it('ignores _meta["mcpctl/user_id"] sent with a token', async () => {
    await expectNothingOfAlice(bearer(await tokenFor('bob')), { 'mcpctl/user_id': 'alice' });
  });

  it('answers 401 to a request that only names alice, by header or by _meta', async () => {
    const header = await rpc(main.mcpUrl, 'resources/read', { uri: TODAY }, { 'x-mcp-user-id': 'alice' });
    expect(header.status).toBe(401);
    expect(header.text).not.toContain('ALICE');
    expect(challengeOf(header).resource_metadata).toBe(main.metadataUrl);
    const meta = await rpc(main.mcpUrl, 'resources/read', { uri: ALICE_DIARY, _meta: { 'mcpctl/user_id': 'alice' } });
    expect(meta.status).toBe(401);
    expect(meta.text).not.toContain('ALICE');
  });
});

describe('audiences', () => {
  it('with an explicit audience, accepts tokens for it only; the metadata names the URL the client reached', async () => {
    await using instance = await serve(withAuth({ ...oauthOf(), audience: CONFIGURED_AUDIENCE }));
    const forUrl = await as.token({ clientId: 'alice', resource: instance.mcpUrl });
    const refused = await rpc(instance.mcpUrl, 'tools/list', {}, bearer(forUrl));
    expect(refused.status).toBe(401);
    expect(challengeOf(refused).error).toBe('invalid_token');

    const forAudience = await as.token({ clientId: 'alice', resource: CONFIGURED_AUDIENCE });
    const accepted = await rpc(instance.mcpUrl, 'tools/call', { name: 'whoami', arguments: {} }, bearer(forAudience));
    expect(accepted.status).toBe(200);
    expect(toolText(accepted)).toBe('You are alice.');

    const document = (await (await fetch(instance.metadataUrl)).json()) as { resource: string };
    expect(document.resource).toBe(instance.mcpUrl);
  });

  it(`accepts a token for one of the URLs of ${AUDIENCES_ENV}`, async () => {
    const audiences = ['https://engine.example.com/d/notes/mcp', 'https://notes.example.com/mcp'];
    await using instance = await serve(definition, { [AUDIENCES_ENV]: audiences.join(' ') });
    // an Entra application id is an audience too, and is no URL
    await using entra = await serve(withAuth({ ...oauthOf(), audience: '00000000-1111-2222-3333-444444444444' }));
    const guid = await as.forge.sign({
      aud: '00000000-1111-2222-3333-444444444444',
      sub: 'alice',
      scope: 'notes:read',
    });
    expect((await rpc(entra.mcpUrl, 'tools/list', {}, bearer(guid))).status).toBe(200);
    for (const audience of audiences) {
      const answer = await rpc(
        instance.mcpUrl,
        'tools/call',
        { name: 'whoami', arguments: {} },
        bearer(await as.token({ clientId: 'bob', resource: audience })),
      );
      expect(answer.status, audience).toBe(200);
      expect(toolText(answer)).toBe('You are bob.');
    }
    // the URL the request reached still counts, and nothing else does
    expect(
      (
        await rpc(
          instance.mcpUrl,
          'tools/list',
          {},
          bearer(await as.token({ clientId: 'bob', resource: instance.mcpUrl })),
        )
      ).status,
    ).toBe(200);
    const other = await rpc(
      instance.mcpUrl,
      'tools/list',
      {},
      bearer(await as.token({ clientId: 'bob', resource: 'https://elsewhere.example.com/mcp' })),
    );
    expect(other.status).toBe(401);
    // and main, without that variable, refuses a token for those URLs
    const without = await rpc(
      main.mcpUrl,
      'tools/list',
      {},
      bearer(await as.token({ clientId: 'bob', resource: audiences[0]! })),
    );
    expect(without.status).toBe(401);
  });
});

describe("the engine's own key", () => {
  it(`is accepted where ${LOCAL_JWKS_ENV} gives it, as the user it names, and nowhere else`, async () => {
    const access = await createLocalCredentials().prepare(definition, {}, 'alice');
    expect(access.env[LOCAL_JWKS_ENV]).toEqual(expect.any(String));

    await using instance = await serve(definition, access.env);
    const token = await access.token(instance.mcpUrl);
    expect(token).toEqual(expect.any(String));
    const whoami = await rpc(instance.mcpUrl, 'tools/call', { name: 'whoami', arguments: {} }, bearer(token!));
    expect(whoami.status).toBe(200);
    expect(toolText(whoami)).toBe('You are alice.');
    // every scope the definition names, write_note's too
    const write = await rpc(
      instance.mcpUrl,
      'tools/call',
      { name: 'write_note', arguments: { text: 'local' } },
      bearer(token!),
    );
    expect(write.status).toBe(200);
    expect(toolText(write)).toBe('alice wrote: local');

    // a token for this instance does not open another one
    const elsewhere = await rpc(main.mcpUrl, 'tools/list', {}, bearer(await access.token(main.mcpUrl).then((t) => t!)));
    expect(elsewhere.status).toBe(401);
    expect(challengeOf(elsewhere).error).toBe('invalid_token');

    await using without = await serve(definition);
    const refused = await rpc(without.mcpUrl, 'tools/list', {}, bearer((await access.token(without.mcpUrl))!));
    expect(refused.status).toBe(401);
    expect(challengeOf(refused).error).toBe('invalid_token');
  });
});

describe('bearer auth', () => {
  const bearerDefinition = (): RuntimeDefinition => ({
    ...withAuth({ type: 'bearer', tokens: ['${A}', '${B}'] }),
    // tool scopes need oauth
    tools: (definition.tools ?? []).map(({ scopes: _scopes, ...tool }) => tool),
  });
  const env = { A: 'token-a-0123456789', B: 'token-b-9876543210' };

  it('accepts each configured token and refuses any other with 401', async () => {
    await using instance = await serve(bearerDefinition(), env);
    for (const token of [env.A, env.B]) {
      const answer = await rpc(instance.mcpUrl, 'tools/list', {}, bearer(token));
      expect(answer.status, token).toBe(200);
      expect(answer.message?.result?.tools).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'whoami' })]),
      );
    }
    for (const headers of [bearer('token-c-0000000000'), bearer(`${env.A}x`), {}]) {
      const refused = await rpc(instance.mcpUrl, 'tools/list', {}, headers);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(refused.message?.result).toBeUndefined();
    }
    // bearer servers have no protected resource metadata
    expect((await fetch(instance.metadataUrl)).status).toBe(404);
  });

  it('ignores X-MCP-User-Id and _meta: a shared token names no user', async () => {
    await using instance = await serve(bearerDefinition(), env);
    const headers = { ...bearer(env.A), 'x-mcp-user-id': 'alice' };
    const today = await rpc(instance.mcpUrl, 'resources/read', { uri: TODAY }, headers);
    expect(today.text).not.toContain('ALICE');
    expect(today.message?.error?.message).toMatch(/depends on the caller/);
    const diary = await rpc(
      instance.mcpUrl,
      'resources/read',
      { uri: ALICE_DIARY, _meta: { 'mcpctl/user_id': 'alice' } },
      headers,
    );
    expect(diary.text).not.toContain('ALICE-DIARY');
    const listed = await rpc(instance.mcpUrl, 'resources/list', {}, headers);
    expect(listed.status).toBe(200);
    expect(listedUris(listed)).toContain(TODAY);
    expect(listedUris(listed)).not.toContain(ALICE_DIARY);
    const whoami = await rpc(instance.mcpUrl, 'tools/call', { name: 'whoami', arguments: {} }, headers);
    expect(toolText(whoami)).not.toContain('alice');
  });
});

describe("the MCP SDK client's OAuth", () => {
  it('discovers the authorization server from the 401, gets a token for the resource, and calls the tools', async () => {
    const authProvider = new ClientCredentialsProvider({
      clientId: 'alice',
      clientSecret: 'alice-secret',
      expectedIssuer: as.issuer,
      scope: 'notes:read notes:write',
    });
    const client = new Client({ name: 'auth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(main.mcpUrl), { authProvider }));
    try {
      const whoami = await client.callTool({ name: 'whoami', arguments: {} });
      expect(whoami.isError).toBeFalsy();
      expect(whoami.content).toEqual([{ type: 'text', text: 'You are alice.' }]);
      const written = await client.callTool({ name: 'write_note', arguments: { text: 'via the SDK' } });
      expect(written.content).toEqual([{ type: 'text', text: 'alice wrote: via the SDK' }]);
      const today = await client.readResource({ uri: TODAY });
      expect(JSON.stringify(today.contents)).toContain('ALICE-TODAY');
      // the token it got is for this resource
      const access = authProvider.tokens()?.access_token;
      expect(access).toEqual(expect.any(String));
      const payload = JSON.parse(Buffer.from(access!.split('.')[1]!, 'base64url').toString('utf8')) as {
        aud: unknown;
        iss: unknown;
      };
      expect(payload).toMatchObject({ aud: main.mcpUrl, iss: as.issuer });
    } finally {
      await client.close();
    }
  });
});

describe('sessions', () => {
  /** initialize with `headers`: the session id, or the status when none came */
  async function initialize(
    mcpUrl: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; session: string | null }> {
    const response = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'auth-test', version: '1.0.0' },
        },
      }),
    });
    await response.text();
    return { status: response.status, session: response.headers.get('mcp-session-id') };
  }

  it('belong to the identity that opened them: another valid token with the same session id finds no session', async () => {
    await using instance = await serve({ ...definition, sessions: true });
    const alice = await tokenFor('alice', { resource: instance.mcpUrl });
    const bob = await tokenFor('bob', { resource: instance.mcpUrl });
    const opened = await initialize(instance.mcpUrl, bearer(alice));
    expect(opened.status).toBe(200);
    expect(opened.session).toBeTruthy();
    const inSession = (token: string) =>
      rpc(
        instance.mcpUrl,
        'tools/call',
        { name: 'whoami', arguments: {} },
        { ...bearer(token), 'mcp-session-id': opened.session! },
      );

    const asAlice = await inSession(alice);
    expect(asAlice.status).toBe(200);
    expect(toolText(asAlice)).toBe('You are alice.');
    const asBob = await inSession(bob);
    expect(asBob.status).toBe(404);
    expect(asBob.text).not.toContain('alice');
    // and without a token, the credential is refused before any session is looked up
    expect((await rpc(instance.mcpUrl, 'tools/list', {}, { 'mcp-session-id': opened.session! })).status).toBe(401);
  });
});
