/**
 * Who may call a server: the check of a request's credential, shared by the instance (the
 * resource server itself, so a container or pod reached directly is protected too) and the
 * engine's gateway. Two kinds:
 *
 * - `bearer`: shared secrets; any of the configured tokens is accepted (several, for rotation).
 *   No identity comes with them.
 * - `oauth`: an OAuth 2.1 resource server as the MCP authorization specification describes it.
 *   JWT access tokens from one issuer, checked with `jose` (signature by the issuer's JWKS, `iss`,
 *   `aud`, `exp`/`nbf` with a small leeway, an algorithm allow-list), the scopes every request
 *   needs plus those of the tool called, and the identity (`user.id`) from one claim. The
 *   protected resource metadata (RFC 9728) names the issuer; a refusal's `WWW-Authenticate`
 *   points at it, which is how MCP clients discover where to get a token.
 *
 * Tokens of the engine's own short-lived key (issuer `urn:mcpctl:engine`) are accepted only where
 * the engine gave that key (`MCPCTL_AUTH_LOCAL_JWKS`): a build's check and a test run.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type * as JoseModule from 'jose';
import type { JSONWebKeySet, JWTPayload, JWTVerifyGetKey } from 'jose';

/** Where the protected resource metadata of an MCP endpoint is: this prefix, then the endpoint's path. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
/** The issuer of the tokens the engine mints for its own checks and test runs. */
export const LOCAL_ISSUER = 'urn:mcpctl:engine';
/** Environment an engine gives an instance: the MCP URLs it is reached at (space-separated). */
export const AUDIENCES_ENV = 'MCPCTL_AUTH_AUDIENCES';
/** Environment an engine gives a build check's or a test's instance: the public JWKS of its own key. */
export const LOCAL_JWKS_ENV = 'MCPCTL_AUTH_LOCAL_JWKS';
/** Asymmetric algorithms only: never `none`, never an HMAC keyed with something public. */
const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_LEEWAY_SECONDS = 30;
const DISCOVERY_RETRY_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;

/** `auth` with its `${VAR}` references resolved. */
export type ResolvedAuth =
  | { type: 'bearer'; tokens: string[] }
  | {
      type: 'oauth';
      issuer: string;
      audience?: string | undefined;
      scopes: string[];
      userClaim: string;
      jwksUri?: string | undefined;
      /** the scopes each tool needs besides `scopes` */
      toolScopes: ReadonlyMap<string, readonly string[]>;
    };

/** The definition's `auth` as written (a structural view of its schema). */
export type AuthSection =
  | { type: 'bearer'; token?: string | undefined; tokens?: string[] | undefined }
  | {
      type: 'oauth';
      issuer: string;
      audience?: string | undefined;
      scopes: string[];
      user_claim?: string | undefined;
      jwks_uri?: string | undefined;
    }
  | { type: 'none' };

/**
 * `auth` with its `${VAR}` references resolved by `resolve(value, path)`, and the tools' own
 * scopes; undefined when anyone may call (no `auth`, or `type: none`).
 */
export function resolveAuth(
  auth: AuthSection | undefined,
  tools: ReadonlyArray<{ name: string; scopes?: string[] | undefined }>,
  resolve: (value: string, path: string) => string,
): ResolvedAuth | undefined {
  if (auth === undefined || auth.type === 'none') return undefined;
  if (auth.type === 'bearer') {
    const tokens =
      auth.tokens !== undefined
        ? auth.tokens.map((t, i) => resolve(t, `auth.tokens[${i}]`))
        : auth.token === undefined
          ? []
          : [resolve(auth.token, 'auth.token')];
    return { type: 'bearer', tokens: tokens.filter((t) => t !== '') };
  }
  const optional = (value: string | undefined, path: string) =>
    value === undefined ? undefined : resolve(value, path);
  return {
    type: 'oauth',
    issuer: resolve(auth.issuer, 'auth.issuer'),
    audience: optional(auth.audience, 'auth.audience'),
    scopes: auth.scopes,
    userClaim: auth.user_claim ?? 'sub',
    jwksUri: optional(auth.jwks_uri, 'auth.jwks_uri'),
    toolScopes: new Map(
      tools.filter((t) => t.scopes !== undefined && t.scopes.length > 0).map((t) => [t.name, t.scopes!]),
    ),
  };
}

export interface GuardOptions {
  /** more MCP URLs that name this server (the engine's deployment and stable URLs): accepted as `aud` */
  audiences?: readonly string[] | undefined;
  /** the engine's own public keys, for its checks and test runs */
  localJwks?: JSONWebKeySet | undefined;
  /** the server's name, shown in its metadata */
  resourceName?: string | undefined;
}

/** A request as far as its credential goes. */
export interface AuthRequest {
  /** the Authorization header */
  authorization: string | undefined;
  /** the MCP endpoint as this request reached it (scheme, host, path) */
  resource: string;
}

export type AuthDecision = Admitted | Refused;
export interface Admitted {
  ok: true;
  /** the validated identity (oauth's `user_claim`) */
  userId: string | undefined;
  scopes: ReadonlySet<string>;
}
export interface Refused {
  ok: false;
  status: 401 | 403 | 503;
  /** the headers of the refusal (`WWW-Authenticate`) */
  headers: Record<string, string>;
  message: string;
}

export interface Guard {
  readonly kind: 'bearer' | 'oauth';
  /** the credential of a request: admitted with its identity, or refused with the answer to give */
  check(request: AuthRequest): Promise<AuthDecision>;
  /** refused when `admitted` lacks a scope the tool needs */
  checkTool(admitted: Admitted, tool: string, resource: string): Refused | undefined;
  /** the RFC 9728 document for the endpoint `resource`; undefined for bearer */
  metadata(resource: string): Record<string, unknown> | undefined;
}

/** Where the metadata of the MCP endpoint `resource` is served (RFC 9728 §3.1). */
export function metadataUrlOf(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}${PROTECTED_RESOURCE_PATH}${path}`;
}

/** The MCP endpoint a request to a well-known metadata path is about, or undefined if it is not one. */
export function endpointOfMetadataPath(pathname: string): string | undefined {
  if (pathname === PROTECTED_RESOURCE_PATH) return '';
  return pathname.startsWith(`${PROTECTED_RESOURCE_PATH}/`)
    ? pathname.slice(PROTECTED_RESOURCE_PATH.length)
    : undefined;
}

/** The origin a request reached: `https` over TLS, and its Host header. */
export function requestOrigin(req: IncomingMessage): string {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  return `${encrypted ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}`;
}

/** The audiences an engine gave in `MCPCTL_AUTH_AUDIENCES`, and the local keys of `MCPCTL_AUTH_LOCAL_JWKS`. */
export function guardOptionsFromEnv(env: Record<string, string | undefined>): GuardOptions {
  const audiences = (env[AUDIENCES_ENV] ?? '').split(/\s+/).filter((a) => a !== '');
  let localJwks: JSONWebKeySet | undefined;
  const raw = env[LOCAL_JWKS_ENV];
  if (raw !== undefined && raw !== '') {
    try {
      const parsed = JSON.parse(raw) as JSONWebKeySet;
      if (Array.isArray(parsed.keys)) localJwks = parsed;
    } catch {
      // not keys: none are trusted
    }
  }
  return { audiences, localJwks };
}

export function createGuard(auth: ResolvedAuth, options: GuardOptions = {}): Guard {
  return auth.type === 'bearer' ? bearerGuard(auth.tokens) : oauthGuard(auth, options);
}

function bearerOf(header: string | undefined): string | undefined {
  const given = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim();
  return given === '' ? undefined : given;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function bearerGuard(tokens: string[]): Guard {
  const digests = tokens.map(sha256);
  const refuse = (message: string): Refused => ({
    ok: false,
    status: 401,
    headers: { 'www-authenticate': 'Bearer realm="mcp"' },
    message,
  });
  return {
    kind: 'bearer',
    async check({ authorization }) {
      const given = bearerOf(authorization);
      if (given === undefined) return refuse('Unauthorized: send Authorization: Bearer <token>');
      const digest = sha256(given);
      // every token is compared, whichever matches: the time taken says nothing about which
      let matched = false;
      for (const expected of digests) matched = timingSafeEqual(digest, expected) || matched;
      return matched
        ? { ok: true, userId: undefined, scopes: new Set() }
        : refuse('Unauthorized: the bearer token is not valid');
    },
    checkTool: () => undefined,
    metadata: () => undefined,
  };
}

type Jose = typeof JoseModule;
let joseModule: Promise<Jose> | undefined;
const loadJose = (): Promise<Jose> => (joseModule ??= import('jose'));

function oauthGuard(auth: Extract<ResolvedAuth, { type: 'oauth' }>, options: GuardOptions): Guard {
  const required = [...new Set(auth.scopes)];
  const allScopes = [...new Set([...required, ...[...auth.toolScopes.values()].flat()])];
  const issuers = issuerForms(auth.issuer);
  const extraAudiences = (options.audiences ?? []).map(withoutTrailingSlash);
  /**
   * The endpoint as clients know it: behind a proxy that ends TLS (an Ingress) a request arrives
   * as http://, while its URL given by the engine is https:// with the same host and path.
   */
  const canonical = (resource: string): string => {
    const at = resource.indexOf('://');
    const rest = resource.slice(at);
    return (
      extraAudiences.find(
        (audience) => audience.endsWith(rest) && audience.indexOf('://') === audience.length - rest.length,
      ) ?? resource
    );
  };
  let remote: JWTVerifyGetKey | undefined;
  let local: JWTVerifyGetKey | undefined;
  let discovery: Promise<JWTVerifyGetKey> | undefined;
  let failedAt: number | undefined;

  const remoteKeys = (): Promise<JWTVerifyGetKey> => {
    if (remote !== undefined) return Promise.resolve(remote);
    // a failed discovery is tried again after a pause, not at every request
    if (discovery !== undefined && (failedAt === undefined || Date.now() - failedAt < DISCOVERY_RETRY_MS))
      return discovery;
    failedAt = undefined;
    discovery = (async () => {
      const jose = await loadJose();
      const jwksUri = auth.jwksUri ?? (await discoverJwksUri(auth.issuer));
      // Unknown key ids are looked up again (a rotated key), at most once a second.
      remote = jose.createRemoteJWKSet(new URL(jwksUri), {
        cooldownDuration: 1_000,
        cacheMaxAge: 10 * 60_000,
        timeoutDuration: FETCH_TIMEOUT_MS,
      });
      return remote;
    })();
    discovery.catch(() => (failedAt = Date.now()));
    return discovery;
  };

  const challenge = (
    resource: string,
    extra: Record<string, string> = {},
    scopes: readonly string[] = required,
  ): string => {
    const params: Record<string, string> = { ...extra, resource_metadata: metadataUrlOf(canonical(resource)) };
    if (scopes.length > 0) params.scope = scopes.join(' ');
    return `Bearer ${Object.entries(params)
      .map(([key, value]) => `${key}="${value.replace(/["\\]/g, '')}"`)
      .join(', ')}`;
  };
  const unauthorized = (resource: string, message: string, tokenSent: boolean): Refused => ({
    ok: false,
    status: 401,
    headers: {
      'www-authenticate': challenge(resource, tokenSent ? { error: 'invalid_token', error_description: message } : {}),
    },
    message: `Unauthorized: ${message}`,
  });
  const insufficient = (resource: string, needed: readonly string[], missing: string[]): Refused => ({
    ok: false,
    status: 403,
    headers: { 'www-authenticate': challenge(resource, { error: 'insufficient_scope' }, needed) },
    message: `Forbidden: the token lacks the scope${missing.length === 1 ? '' : 's'} ${missing.join(' ')}`,
  });

  return {
    kind: 'oauth',
    async check({ authorization, resource }) {
      const token = bearerOf(authorization);
      if (token === undefined)
        return unauthorized(resource, 'send Authorization: Bearer <access token> from the authorization server', false);
      const jose = await loadJose();
      let claimedIssuer: unknown;
      try {
        const header = jose.decodeProtectedHeader(token);
        if (typeof header.alg !== 'string' || !ALLOWED_ALGORITHMS.includes(header.alg)) {
          return unauthorized(resource, `tokens signed with ${JSON.stringify(header.alg)} are not accepted`, true);
        }
        claimedIssuer = jose.decodeJwt(token).iss;
      } catch {
        return unauthorized(resource, 'the token is not a JWT access token', true);
      }
      const isLocal = claimedIssuer === LOCAL_ISSUER && options.localJwks !== undefined;
      let keys: JWTVerifyGetKey;
      try {
        keys = isLocal ? (local ??= jose.createLocalJWKSet(options.localJwks!)) : await remoteKeys();
      } catch (error) {
        return {
          ok: false,
          status: 503,
          headers: { 'retry-after': '5' },
          message: `Service Unavailable: the issuer's keys could not be fetched (${messageOf(error)}); retry shortly`,
        };
      }
      const audience =
        auth.audience !== undefined
          ? [withoutTrailingSlash(auth.audience)]
          : [withoutTrailingSlash(canonical(resource)), ...extraAudiences];
      let payload: JWTPayload;
      try {
        ({ payload } = await jose.jwtVerify(token, keys, {
          issuer: isLocal ? LOCAL_ISSUER : issuers,
          audience: withSlashForms(audience),
          algorithms: ALLOWED_ALGORITHMS,
          clockTolerance: CLOCK_LEEWAY_SECONDS,
          requiredClaims: ['exp'],
        }));
      } catch (error) {
        return unauthorized(resource, describeJoseError(error), true);
      }
      const scopes = scopesOf(payload);
      const missing = required.filter((scope) => !scopes.has(scope));
      if (missing.length > 0) return insufficient(resource, required, missing);
      const claim = payload[auth.userClaim];
      const userId =
        typeof claim === 'string' && claim !== '' ? claim : typeof claim === 'number' ? String(claim) : undefined;
      return { ok: true, userId, scopes };
    },
    checkTool(admitted, tool, resource) {
      const needed = auth.toolScopes.get(tool);
      if (needed === undefined) return undefined;
      const missing = needed.filter((scope) => !admitted.scopes.has(scope));
      return missing.length === 0 ? undefined : insufficient(resource, [...new Set([...required, ...needed])], missing);
    },
    metadata(resource) {
      // The resource is the URL the client reached (RFC 9728 §3.3: clients check it); `audience`
      // only says which `aud` tokens must carry (Entra and Okta name an API, not a URL).
      return {
        resource: canonical(resource),
        authorization_servers: [auth.issuer],
        scopes_supported: allScopes,
        bearer_methods_supported: ['header'],
        ...(options.resourceName === undefined ? {} : { resource_name: options.resourceName }),
      };
    },
  };
}

/** `scope` (RFC 9068: space-separated) or `scp` (a list, as Okta and Entra send it). */
function scopesOf(payload: JWTPayload): Set<string> {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  const list =
    typeof scope === 'string'
      ? scope.split(' ')
      : Array.isArray(scp)
        ? scp
        : typeof scp === 'string'
          ? scp.split(' ')
          : [];
  return new Set(list.filter((s): s is string => typeof s === 'string' && s !== ''));
}

/** An issuer as configured and with or without its trailing slash (Auth0's ends in one, most do not). */
function issuerForms(issuer: string): string[] {
  return withSlashForms([issuer]);
}
function withSlashForms(values: string[]): string[] {
  return [...new Set(values.flatMap((v) => [v, v.endsWith('/') ? v.slice(0, -1) : `${v}/`]))];
}
function withoutTrailingSlash(value: string): string {
  return value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value;
}

/** The issuer's JWKS URL, from its metadata: OpenID discovery, else RFC 8414's two forms. The metadata must name the same issuer. */
async function discoverJwksUri(issuer: string): Promise<string> {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : withoutTrailingSlash(url.pathname);
  const candidates = [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  const failures: string[] = [];
  for (const candidate of candidates) {
    try {
      const response = await fetch(candidate, {
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        headers: { accept: 'application/json' },
      });
      if (!response.ok) {
        failures.push(`${candidate}: HTTP ${response.status}`);
        continue;
      }
      const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
      if (typeof metadata.issuer !== 'string' || !issuerForms(issuer).includes(metadata.issuer)) {
        failures.push(`${candidate}: names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}`);
        continue;
      }
      if (typeof metadata.jwks_uri !== 'string') {
        failures.push(`${candidate}: has no jwks_uri`);
        continue;
      }
      return metadata.jwks_uri;
    } catch (error) {
      failures.push(`${candidate}: ${messageOf(error)}`);
    }
  }
  throw new Error(`no metadata of ${issuer} was found (${failures.join('; ')}); set auth.jwks_uri`);
}

/** What was wrong with a token, in a few words; never the token itself. */
function describeJoseError(error: unknown): string {
  const { code, claim, reason } = (error ?? {}) as { code?: string; claim?: string; reason?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'the token has expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'aud') return 'the token is for another audience (its aud is not this server)';
      if (claim === 'iss') return 'the token is from another issuer';
      if (claim === 'nbf') return 'the token is not valid yet';
      return `the token's ${claim ?? 'claims'} ${reason === 'missing' ? 'is missing' : 'is not valid'}`;
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return 'the token is signed with a key the issuer does not publish';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'the token signature is not valid';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'the token is signed with an algorithm that is not accepted';
    default:
      return 'the token is not valid';
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
