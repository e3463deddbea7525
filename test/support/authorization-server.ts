/**
 * A real OAuth 2.0 authorization server on loopback, for tests of the servers that check its tokens:
 * oidc-provider with the client credentials grant and resource indicators (RFC 8707), issuing JWT
 * access tokens (RFC 9068) whose `aud` is the requested resource, plus forged tokens made with jose
 * for attack tests.
 *
 * Who a token speaks for: a client credentials token has no end user, and oidc-provider then sets
 * `sub` to the client id. So each user a test needs is a client of its own ('alice', 'bob').
 * Other claims (an email, say) come from a client's `claims`, through oidc-provider's
 * `extraTokenClaims`; they can add claims but never replace sub, iss, aud, scope, exp, jti or client_id.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  base64url,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTHeaderParameters,
  type JWTPayload,
} from 'jose';
import Provider, { type Adapter, type AdapterPayload, type ClientMetadata, type Configuration } from 'oidc-provider';
import { closeServer, listen } from './http.js';

export interface AuthorizationServerClient {
  clientId: string;
  clientSecret: string;
  /** the scopes this client may be granted, space-separated */
  scope: string;
  /** more claims for this client's access tokens (they cannot replace the standard ones) */
  claims?: Record<string, unknown>;
}

export type DiscoveryDocument = 'openid-configuration' | 'oauth-authorization-server';

export interface AuthorizationServerOptions {
  /** default: DEFAULT_CLIENTS */
  clients?: AuthorizationServerClient[];
  /** lifetime of the access tokens it issues, in seconds (default 300) */
  accessTokenTTL?: number;
  /** the metadata documents it serves under /.well-known/ (default: only OpenID Connect discovery) */
  discovery?: DiscoveryDocument[];
}

export interface TokenRequest {
  clientId: string;
  /** default: the secret the client was configured with */
  clientSecret?: string;
  /** the resource indicator: the token's `aud`. Without it the token is opaque (no JWT), as oidc-provider makes it. */
  resource?: string;
  /** the scopes asked for; default: all the client's scopes. Scopes the client may not have are refused. */
  scope?: string | string[];
}

export interface SigningKey {
  kid: string;
  alg: 'RS256';
  privateKey: CryptoKey;
  /** the private key as published to the provider (with kid, alg and use) */
  privateJwk: JWK;
  publicJwk: JWK;
}

/** Claims of a forged token; what is left out takes the value the server itself would give it. */
export interface ForgedClaims extends JWTPayload {
  /** the resource the token pretends to be for */
  aud: string;
}

/** Tokens the server never issued, each wrong in one way only. */
export interface TokenForger {
  /** signed with the server's current key and kid: indistinguishable from an issued token */
  sign(claims: ForgedClaims, header?: Partial<JWTHeaderParameters>): Promise<string>;
  /** signed with a key that is not in the JWKS; no `kid` in its header unless one is given */
  unknownKey(claims: ForgedClaims, options?: { kid?: string }): Promise<string>;
  /** unsigned: header `{"alg":"none","typ":"at+jwt"}`, the payload, an empty signature */
  algNone(claims: ForgedClaims): string;
  /** signed with the current key, `exp` an hour ago */
  expired(claims: ForgedClaims): Promise<string>;
  /** signed with the current key, `iss` FORGED_ISSUER */
  wrongIssuer(claims: ForgedClaims): Promise<string>;
  /** signed with the current key, `aud` FORGED_AUDIENCE */
  wrongAudience(claims: ForgedClaims): Promise<string>;
}

export interface AuthorizationServer extends AsyncDisposable {
  /** http://127.0.0.1:PORT, without a trailing slash: the `iss` of its tokens */
  readonly issuer: string;
  /** the OpenID Connect discovery document */
  readonly discoveryUrl: string;
  readonly jwksUri: string;
  readonly tokenEndpoint: string;
  readonly clients: readonly AuthorizationServerClient[];
  /** the key that signs the tokens issued now */
  readonly signingKey: SigningKey;
  readonly forge: TokenForger;
  /** a real token from the token endpoint (client_credentials, client_secret_basic); throws TokenRequestError if refused */
  token(request: TokenRequest): Promise<string>;
  /**
   * Signs with a new key (new kid) from now on, same port and issuer. The JWKS then holds only the
   * new key, so tokens signed before no longer verify; with `keepPrevious` it also keeps the old key.
   */
  rotateKeys(options?: { keepPrevious?: boolean }): Promise<SigningKey>;
  /** stops the server and closes its connections */
  close(): Promise<void>;
}

/** An error answer from the token endpoint. */
export class TokenRequestError extends Error {
  constructor(
    readonly status: number,
    readonly error: string | undefined,
    readonly description: string | undefined,
  ) {
    super(`token request refused (${status}): ${error ?? 'no error code'}${description ? `: ${description}` : ''}`);
    this.name = 'TokenRequestError';
  }
}

export const DEFAULT_CLIENTS: readonly AuthorizationServerClient[] = [
  { clientId: 'alice', clientSecret: 'alice-secret', scope: 'notes:read notes:write' },
  { clientId: 'bob', clientSecret: 'bob-secret', scope: 'notes:read' },
];

/** `iss` of wrongIssuer tokens and `aud` of wrongAudience ones (reserved names, never resolved) */
export const FORGED_ISSUER = 'https://issuer.invalid';
export const FORGED_AUDIENCE = 'https://resource.invalid/mcp';

const OPENID_CONFIGURATION = '/.well-known/openid-configuration';
const OAUTH_METADATA = '/.well-known/oauth-authorization-server';

/** Starts an authorization server on 127.0.0.1 with a port chosen by the system. */
export async function startAuthorizationServer(options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const clients = options.clients ?? DEFAULT_CLIENTS;
  const accessTokenTTL = options.accessTokenTTL ?? 300;
  const discovery = new Set(options.discovery ?? ['openid-configuration']);
  const store = new Map<string, AdapterPayload>();
  let keys = [await createSigningKey()];
  let handle: ReturnType<Provider['callback']> | undefined;

  const { server, url: issuer } = await listen((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url?.split('?')[0];
    if (path === OAUTH_METADATA && discovery.has('oauth-authorization-server')) req.url = OPENID_CONFIGURATION;
    else if (path === OPENID_CONFIGURATION && !discovery.has('openid-configuration')) req.url = '/not-served';
    if (handle) void handle(req, res);
    else res.writeHead(503).end();
  });
  const configure = () => {
    handle = createProvider(issuer, { keys, clients, accessTokenTTL, store }).callback();
  };
  try {
    configure();
  } catch (error) {
    await closeServer(server);
    throw error;
  }

  const tokenEndpoint = `${issuer}/token`;
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= closeServer(server));
  const current = () => keys[0] as SigningKey;

  return {
    issuer,
    discoveryUrl: `${issuer}${OPENID_CONFIGURATION}`,
    jwksUri: `${issuer}/jwks`,
    tokenEndpoint,
    clients,
    get signingKey() {
      return current();
    },
    forge: createForger(issuer, current, clients[0]?.clientId ?? 'alice', accessTokenTTL),
    token: (request) => requestToken(tokenEndpoint, clients, request),
    async rotateKeys({ keepPrevious = false } = {}) {
      // the provider signs with the first key that fits: the new one goes first
      keys = [await createSigningKey(), ...(keepPrevious ? keys : [])];
      configure();
      return current();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

async function createSigningKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  const meta = { kid, alg: 'RS256', use: 'sig' };
  return {
    kid,
    alg: 'RS256',
    privateKey,
    privateJwk: { ...(await exportJWK(privateKey)), ...meta },
    publicJwk: { ...(await exportJWK(publicKey)), ...meta },
  };
}

interface ProviderSettings {
  keys: SigningKey[];
  clients: readonly AuthorizationServerClient[];
  accessTokenTTL: number;
  store: Map<string, AdapterPayload>;
}

function createProvider(issuer: string, { keys, clients, accessTokenTTL, store }: ProviderSettings): Provider {
  const byId = new Map(clients.map((client) => [client.clientId, client]));
  const configuration: Configuration = {
    // an adapter of our own: oidc-provider's default one warns that it is for development only
    adapter: (model) => memoryAdapter(model, store),
    jwks: { keys: keys.map((key) => key.privateJwk) },
    clients: clients.map(clientMetadata),
    // a client's `scope` may only name scopes the provider knows
    scopes: [...new Set(clients.flatMap((client) => client.scope.split(' ').filter(Boolean)))],
    features: {
      clientCredentials: { enabled: true },
      // no login pages: nothing here signs a person in (and the default pages warn at startup)
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        // any resource (loopback tests); the token's scope is what was asked for, within the client's
        getResourceServerInfo: (_ctx, resource, client) => ({
          scope: client.scope ?? '',
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => (token.clientId === undefined ? undefined : byId.get(token.clientId)?.claims),
    ttl: { ClientCredentials: accessTokenTTL },
    clientBasedCORS: () => false,
    routes: { token: '/token', jwks: '/jwks' },
  };
  return new Provider(issuer, configuration);
}

function clientMetadata(client: AuthorizationServerClient): ClientMetadata {
  return {
    client_id: client.clientId,
    client_secret: client.clientSecret,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: client.scope,
  };
}

/** Everything in one Map, kept for the server's life (tests are short: nothing expires). */
function memoryAdapter(model: string, store: Map<string, AdapterPayload>): Adapter {
  const key = (id: string) => `${model}:${id}`;
  const findBy = async (field: 'uid' | 'userCode', value: string) =>
    [...store.entries()].find(([k, payload]) => k.startsWith(`${model}:`) && payload[field] === value)?.[1];
  return {
    upsert: async (id, payload) => void store.set(key(id), payload),
    find: async (id) => store.get(key(id)),
    findByUid: (uid) => findBy('uid', uid),
    findByUserCode: (userCode) => findBy('userCode', userCode),
    consume: async (id) => {
      const payload = store.get(key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    },
    destroy: async (id) => void store.delete(key(id)),
    revokeByGrantId: async (grantId) => {
      for (const [k, payload] of store) if (payload.grantId === grantId) store.delete(k);
    },
  };
}

async function requestToken(
  tokenEndpoint: string,
  clients: readonly AuthorizationServerClient[],
  request: TokenRequest,
): Promise<string> {
  const client = clients.find((candidate) => candidate.clientId === request.clientId);
  const secret = request.clientSecret ?? client?.clientSecret ?? '';
  const scope = request.scope === undefined ? client?.scope : [request.scope].flat().join(' ');
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope) body.set('scope', scope);
  if (request.resource !== undefined) body.set('resource', request.resource);
  // RFC 6749 §2.3.1: both parts form-encoded before Basic
  const basic = Buffer.from(`${encodeURIComponent(request.clientId)}:${encodeURIComponent(secret)}`).toString('base64');
  const response = await fetch(tokenEndpoint, { method: 'POST', headers: { authorization: `Basic ${basic}` }, body });
  const answer = (await response.json()) as { access_token?: unknown; error?: string; error_description?: string };
  if (!response.ok || typeof answer.access_token !== 'string')
    throw new TokenRequestError(response.status, answer.error, answer.error_description);
  return answer.access_token;
}

function createForger(
  issuer: string,
  current: () => SigningKey,
  defaultSubject: string,
  accessTokenTTL: number,
): TokenForger {
  // the claims oidc-provider puts in its JWT access tokens, with the caller's over them
  const claimsOf = (claims: ForgedClaims): JWTPayload => {
    const now = Math.floor(Date.now() / 1000);
    const sub = claims.sub ?? defaultSubject;
    return { iss: issuer, sub, client_id: sub, jti: randomUUID(), iat: now, exp: now + accessTokenTTL, ...claims };
  };
  const signWith = (payload: JWTPayload, key: CryptoKey, header: JWTHeaderParameters) =>
    new SignJWT(payload).setProtectedHeader(header).sign(key);
  const sign = (claims: ForgedClaims, header: Partial<JWTHeaderParameters> = {}) => {
    const { privateKey, kid, alg } = current();
    return signWith(claimsOf(claims), privateKey, { alg, typ: 'at+jwt', kid, ...header });
  };
  return {
    sign,
    async unknownKey(claims, { kid } = {}) {
      const { privateKey } = await generateKeyPair('RS256');
      return signWith(claimsOf(claims), privateKey, {
        alg: 'RS256',
        typ: 'at+jwt',
        ...(kid === undefined ? {} : { kid }),
      });
    },
    algNone(claims) {
      const encode = (value: object) => base64url.encode(JSON.stringify(value));
      return `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(claimsOf(claims))}.`;
    },
    expired(claims) {
      const now = Math.floor(Date.now() / 1000);
      return sign({ ...claims, iat: now - 7200, exp: now - 3600 });
    },
    wrongIssuer: (claims) => sign({ ...claims, iss: FORGED_ISSUER }),
    wrongAudience: (claims) => sign({ ...claims, aud: FORGED_AUDIENCE }),
  };
}
