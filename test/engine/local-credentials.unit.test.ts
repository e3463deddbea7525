/**
 * The engine's own credentials for its checks and test runs: tokens of its in-memory key for an
 * oauth server (who, what for, which scopes, how long), random values for a bearer server's token
 * variables, and nothing for a server anyone may call.
 */
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { describe, expect, it } from 'vitest';
import type { BuildRequest } from '../../src/api/contract.js';
import { createLocalCredentials, LOCAL_SUBJECT } from '../../src/engine/local-credentials.js';
import { LOCAL_ISSUER, LOCAL_JWKS_ENV } from '../../src/runtime/server/auth.js';

type Definition = Pick<BuildRequest, 'auth' | 'tools'>;

const MCP_URL = 'http://127.0.0.1:41234/mcp';

function tool(name: string, scopes?: string[]): NonNullable<BuildRequest['tools']>[number] {
  return {
    name,
    description: `the ${name} tool`,
    inputSchema: { type: 'object' },
    handler: { type: 'static', content: [{ type: 'text', text: name }] },
    ...(scopes === undefined ? {} : { scopes }),
  };
}

const OAUTH: Definition = {
  auth: { type: 'oauth', issuer: 'https://tenant.example.com/', scopes: ['notes:read'] },
  tools: [tool('search'), tool('write_note', ['notes:write']), tool('delete_note', ['notes:write', 'notes:admin'])],
};

/** The token's claims, verified with the public keys the process was given. */
async function verified(env: Record<string, string>, token: string | undefined, audience = MCP_URL) {
  expect(token).toEqual(expect.any(String));
  const jwks = JSON.parse(env[LOCAL_JWKS_ENV]!) as JSONWebKeySet;
  const { payload } = await jwtVerify(token!, createLocalJWKSet(jwks), {
    issuer: LOCAL_ISSUER,
    audience,
    algorithms: ['ES256'],
  });
  return payload;
}

describe('oauth: tokens of the engine key', () => {
  it('gives the process the public key only, and signs a token for its URL as the user, with every scope', async () => {
    const access = await createLocalCredentials().prepare(OAUTH, { KEEP: 'me' }, 'alice');
    expect(access.env.KEEP).toBe('me');
    const jwks = JSON.parse(access.env[LOCAL_JWKS_ENV]!) as JSONWebKeySet;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) });
    // public only: no private part travels in the environment
    expect(jwks.keys[0]).not.toHaveProperty('d');

    const token = await access.token(MCP_URL);
    expect(decodeProtectedHeader(token!)).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: jwks.keys[0]!.kid });
    const claims = await verified(access.env, token);
    expect(claims).toMatchObject({ iss: LOCAL_ISSUER, aud: MCP_URL, sub: 'alice' });
    expect((claims.scope as string).split(' ').sort()).toEqual(['notes:admin', 'notes:read', 'notes:write']);
    const now = Math.floor(Date.now() / 1000);
    expect(claims.exp).toBeGreaterThan(now);
    expect(claims.exp! - now).toBeLessThanOrEqual(10 * 60);
    expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(10 * 60);
  });

  it('names the test subject without a user, and the user in the configured claim too', async () => {
    const credentials = createLocalCredentials();
    const anonymous = await credentials.prepare(OAUTH, {});
    expect(await verified(anonymous.env, await anonymous.token(MCP_URL))).toMatchObject({ sub: LOCAL_SUBJECT });

    const byEmail: Definition = {
      auth: { type: 'oauth', issuer: 'https://tenant.example.com/', scopes: [], user_claim: 'email' },
    };
    const access = await credentials.prepare(byEmail, {}, 'alice@example.com');
    const claims = await verified(access.env, await access.token(MCP_URL));
    expect(claims).toMatchObject({ email: 'alice@example.com', sub: 'alice@example.com' });
    // no scopes named: an empty scope, never one the definition does not have
    expect(claims.scope ?? '').toBe('');
  });

  it("signs for the URL it is asked for, and another URL's token does not verify here", async () => {
    const access = await createLocalCredentials().prepare(OAUTH, {}, 'bob');
    const other = 'http://127.0.0.1:50000/mcp';
    expect(await verified(access.env, await access.token(other), other)).toMatchObject({ aud: other });
    await expect(verified(access.env, await access.token(other), MCP_URL)).rejects.toMatchObject({
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
      claim: 'aud',
    });
  });

  it('keeps one key for an hour, then makes a new one; another engine has a key of its own', async () => {
    let now = Date.now();
    const credentials = createLocalCredentials(() => now);
    const kidOf = (env: Record<string, string>) => (JSON.parse(env[LOCAL_JWKS_ENV]!) as JSONWebKeySet).keys[0]!.kid;
    const first = await credentials.prepare(OAUTH, {});
    now += 30 * 60_000;
    const second = await credentials.prepare(OAUTH, {});
    expect(kidOf(second.env)).toBe(kidOf(first.env));
    now += 31 * 60_000;
    const third = await credentials.prepare(OAUTH, {});
    expect(kidOf(third.env)).not.toBe(kidOf(first.env));

    const elsewhere = await createLocalCredentials().prepare(OAUTH, {});
    expect(kidOf(elsewhere.env)).not.toBe(kidOf(first.env));
    const foreign = await elsewhere.token(MCP_URL);
    await expect(verified(first.env, foreign)).rejects.toBeDefined();
  });
});

describe('bearer: random values for the token variables', () => {
  it('sets the variable of a single token and sends its value', async () => {
    const access = await createLocalCredentials().prepare(
      { auth: { type: 'bearer', token: '${MCP_AUTH_TOKEN}' } },
      { OTHER: 'x' },
    );
    expect(access.env.OTHER).toBe('x');
    expect(access.env.MCP_AUTH_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(await access.token(MCP_URL)).toBe(access.env.MCP_AUTH_TOKEN);
    expect(access.env).not.toHaveProperty(LOCAL_JWKS_ENV);
  });

  it('sets every variable of several tokens, each its own value, and sends the first', async () => {
    const access = await createLocalCredentials().prepare(
      { auth: { type: 'bearer', tokens: ['${TOKEN_NEW}', 'old-${TOKEN_OLD}'] } },
      {},
    );
    expect(access.env.TOKEN_NEW).toMatch(/^[0-9a-f]{32}$/);
    expect(access.env.TOKEN_OLD).toMatch(/^[0-9a-f]{32}$/);
    expect(access.env.TOKEN_NEW).not.toBe(access.env.TOKEN_OLD);
    expect(await access.token(MCP_URL)).toBe(access.env.TOKEN_NEW);
  });

  it('replaces a value the base environment had: the engine never sends a deployed secret', async () => {
    const access = await createLocalCredentials().prepare(
      { auth: { type: 'bearer', token: 'Bearer-${SECRET}' } },
      { SECRET: 'the-real-one' },
    );
    expect(access.env.SECRET).not.toBe('the-real-one');
    expect(await access.token(MCP_URL)).toBe(`Bearer-${access.env.SECRET}`);
  });

  it('fresh values for every preparation', async () => {
    const credentials = createLocalCredentials();
    const definition: Definition = { auth: { type: 'bearer', token: '${MCP_AUTH_TOKEN}' } };
    const one = await credentials.prepare(definition, {});
    const two = await credentials.prepare(definition, {});
    expect(one.env.MCP_AUTH_TOKEN).not.toBe(two.env.MCP_AUTH_TOKEN);
  });
});

describe('no credentials', () => {
  it.each([
    ['without auth', {}],
    ['with auth type none', { auth: { type: 'none' } }],
  ] as Array<[string, Definition]>)('%s: the environment as given and no token', async (_name, definition) => {
    const access = await createLocalCredentials().prepare(definition, { A: '1' }, 'alice');
    expect(access.env).toEqual({ A: '1' });
    expect(await access.token(MCP_URL)).toBeUndefined();
  });
});
