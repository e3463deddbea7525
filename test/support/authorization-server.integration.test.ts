import { createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FORGED_AUDIENCE,
  startAuthorizationServer,
  TokenRequestError,
  type AuthorizationServer,
} from './authorization-server.js';

const RESOURCE = 'http://127.0.0.1:1/mcp';
/** what a resource server accepts (never none or HS*) */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

describe('a loopback authorization server', () => {
  let as: AuthorizationServer;
  let verify: (token: string) => Promise<JWTPayload>;

  beforeAll(async () => {
    as = await startAuthorizationServer({
      clients: [
        {
          clientId: 'alice',
          clientSecret: 'alice-secret',
          scope: 'notes:read notes:write',
          claims: { email: 'alice@example.com' },
        },
        { clientId: 'bob', clientSecret: 'bob-secret', scope: 'notes:read' },
      ],
    });
    const discovery = (await (await fetch(as.discoveryUrl)).json()) as { issuer: string; jwks_uri: string };
    // a JWKS read again on any unknown kid, as a resource server must do after a rotation
    const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri), { cooldownDuration: 0 });
    verify = async (token) =>
      (
        await jwtVerify(token, jwks, {
          issuer: discovery.issuer,
          audience: RESOURCE,
          algorithms: ALGORITHMS,
          typ: 'at+jwt',
        })
      ).payload;
  });
  afterAll(() => as.close());

  it('publishes discovery with its issuer, token endpoint and JWKS', async () => {
    const response = await fetch(as.discoveryUrl);
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ issuer: as.issuer, token_endpoint: as.tokenEndpoint, jwks_uri: as.jwksUri });
    expect(metadata.grant_types_supported).toContain('client_credentials');
    expect(as.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const jwks = (await (await fetch(as.jwksUri)).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys).toEqual([
      expect.objectContaining({ kid: as.signingKey.kid, kty: 'RSA', alg: 'RS256', use: 'sig' }),
    ]);
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('issues a JWT for the resource: aud, iss, sub = client id, the scopes granted', async () => {
    const token = await as.token({ clientId: 'alice', resource: RESOURCE, scope: 'notes:read' });
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'RS256', typ: 'at+jwt', kid: as.signingKey.kid });
    const claims = await verify(token);
    expect(claims).toMatchObject({
      iss: as.issuer,
      aud: RESOURCE,
      sub: 'alice',
      client_id: 'alice',
      scope: 'notes:read',
      email: 'alice@example.com',
    });
    expect(claims.exp).toBeGreaterThan(Date.now() / 1000);
    // without a scope asked for, every scope of the client
    expect(await verify(await as.token({ clientId: 'bob', resource: RESOURCE }))).toMatchObject({
      sub: 'bob',
      scope: 'notes:read',
    });
  });

  it('refuses a scope the client may not have and a wrong secret', async () => {
    const refused = as.token({ clientId: 'bob', resource: RESOURCE, scope: ['notes:read', 'notes:write'] });
    await expect(refused).rejects.toMatchObject({ status: 400, error: 'invalid_scope' });
    await expect(as.token({ clientId: 'bob', clientSecret: 'nope', resource: RESOURCE })).rejects.toBeInstanceOf(
      TokenRequestError,
    );
  });

  it('refuses each forged token', async () => {
    const claims = { aud: RESOURCE, sub: 'alice', scope: 'notes:read notes:write' };
    // the forger's own signature is a good one: only what each forgery changes is wrong
    expect(await verify(await as.forge.sign(claims))).toMatchObject({ sub: 'alice', iss: as.issuer });
    const cases: Array<[string, Promise<string> | string, unknown]> = [
      ['signed by an unknown key, no kid', as.forge.unknownKey(claims), errors.JWSSignatureVerificationFailed],
      [
        'signed by an unknown key, the real kid',
        as.forge.unknownKey(claims, { kid: as.signingKey.kid }),
        errors.JWSSignatureVerificationFailed,
      ],
      [
        'signed by an unknown key, an unknown kid',
        as.forge.unknownKey(claims, { kid: 'elsewhere' }),
        errors.JWKSNoMatchingKey,
      ],
      ['unsigned (alg none)', as.forge.algNone(claims), errors.JOSEAlgNotAllowed],
      ['expired', as.forge.expired(claims), errors.JWTExpired],
      ['from another issuer', as.forge.wrongIssuer(claims), errors.JWTClaimValidationFailed],
      ['for another audience', as.forge.wrongAudience(claims), errors.JWTClaimValidationFailed],
    ];
    for (const [name, token, error] of cases) {
      await expect(verify(await token), name).rejects.toBeInstanceOf(error);
    }
    await expect(verify(await as.forge.wrongIssuer(claims))).rejects.toMatchObject({ claim: 'iss' });
    await expect(verify(await as.forge.wrongAudience(claims))).rejects.toMatchObject({ claim: 'aud' });
    await expect(verify(await as.forge.sign({ ...claims, aud: FORGED_AUDIENCE }))).rejects.toMatchObject({
      claim: 'aud',
    });
  });

  it('rotates its signing key: new tokens carry the new kid, old ones stop verifying', async () => {
    const before = await as.token({ clientId: 'alice', resource: RESOURCE });
    const oldKid = as.signingKey.kid;
    await verify(before);

    const kept = await as.rotateKeys({ keepPrevious: true });
    expect(kept.kid).not.toBe(oldKid);
    const during = await as.token({ clientId: 'alice', resource: RESOURCE });
    expect(decodeProtectedHeader(during).kid).toBe(kept.kid);
    expect(await verify(during)).toMatchObject({ sub: 'alice' });
    expect(await verify(before)).toMatchObject({ sub: 'alice' });

    const fresh = await as.rotateKeys();
    expect(as.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const after = await as.token({ clientId: 'alice', resource: RESOURCE });
    expect(decodeProtectedHeader(after).kid).toBe(fresh.kid);
    expect(await verify(after)).toMatchObject({ sub: 'alice', aud: RESOURCE });
    await expect(verify(before)).rejects.toBeInstanceOf(errors.JWKSNoMatchingKey);
    await expect(verify(during)).rejects.toBeInstanceOf(errors.JWKSNoMatchingKey);
    const jwks = (await (await fetch(as.jwksUri)).json()) as { keys: Array<{ kid: string }> };
    expect(jwks.keys.map((key) => key.kid)).toEqual([fresh.kid]);
  });
});

describe('an authorization server with RFC 8414 metadata only', () => {
  it('serves /.well-known/oauth-authorization-server, not OpenID discovery, and stops when disposed', async () => {
    let issuer: string;
    {
      await using as = await startAuthorizationServer({ discovery: ['oauth-authorization-server'] });
      issuer = as.issuer;
      const metadata = await fetch(`${as.issuer}/.well-known/oauth-authorization-server`);
      expect(await metadata.json()).toMatchObject({ issuer: as.issuer, jwks_uri: as.jwksUri });
      expect((await fetch(as.discoveryUrl)).status).toBe(404);
    }
    await expect(fetch(`${issuer}/jwks`)).rejects.toThrow();
  });
});
