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
 * The `oauth` guard is in oauth-guard.ts, the issuer's keys in oauth-keys.ts.
 *
 * Tokens of the engine's own short-lived key (issuer `urn:mcpctl:engine`) are accepted only where
 * the engine gave that key (`MCPCTL_AUTH_LOCAL_JWKS`): a build's check and a test run.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { JSONWebKeySet } from 'jose';
import { oauthGuard } from './oauth-guard.js';

/** Where the protected resource metadata of an MCP endpoint is: this prefix, then the endpoint's path. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
/** The issuer of the tokens the engine mints for its own checks and test runs. */
export const LOCAL_ISSUER = 'urn:mcpctl:engine';
/** Environment an engine gives an instance: the MCP URLs it is reached at (space-separated). */
export const AUDIENCES_ENV = 'MCPCTL_AUTH_AUDIENCES';
/** Environment an engine gives a build check's or a test's instance: the public JWKS of its own key. */
export const LOCAL_JWKS_ENV = 'MCPCTL_AUTH_LOCAL_JWKS';

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

/** The token of an `Authorization: Bearer …` header. */
export function bearerOf(header: string | undefined): string | undefined {
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
