/**
 * The `oauth` guard: an OAuth 2.1 resource server as the MCP authorization specification
 * describes it. A request's token passes named checks in turn (a bearer token at all, an
 * accepted algorithm, the issuer's keys, signature and claims, the required scopes) and the
 * first to fail gives the refusal, with a `WWW-Authenticate` that points at the metadata.
 */
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import {
  bearerOf,
  LOCAL_ISSUER,
  metadataUrlOf,
  type GuardOptions,
  type Guard,
  type Refused,
  type ResolvedAuth,
} from './auth.js';
import {
  createRemoteKeys,
  issuerForms,
  loadJose,
  messageOf,
  withoutTrailingSlash,
  withSlashForms,
} from './oauth-keys.js';

/** Asymmetric algorithms only: never `none`, never an HMAC keyed with something public. */
const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_LEEWAY_SECONDS = 30;

type OAuth = Extract<ResolvedAuth, { type: 'oauth' }>;
type Jose = Awaited<ReturnType<typeof loadJose>>;

export function oauthGuard(auth: OAuth, options: GuardOptions): Guard {
  const required = [...new Set(auth.scopes)];
  const allScopes = [...new Set([...required, ...[...auth.toolScopes.values()].flat()])];
  const extraAudiences = (options.audiences ?? []).map(withoutTrailingSlash);
  const canonical = (resource: string): string => canonicalResource(resource, extraAudiences);
  const refusals = createRefusals(required, canonical);
  const remoteKeys = createRemoteKeys(auth.issuer, auth.jwksUri);
  let local: JWTVerifyGetKey | undefined;

  const keysFor = async (jose: Jose, isLocal: boolean): Promise<JWTVerifyGetKey | Refused> => {
    try {
      return isLocal ? (local ??= jose.createLocalJWKSet(options.localJwks!)) : await remoteKeys();
    } catch (error) {
      return keysUnavailable(error);
    }
  };
  const audiencesFor = (resource: string): string[] =>
    auth.audience !== undefined
      ? [withoutTrailingSlash(auth.audience)]
      : [withoutTrailingSlash(canonical(resource)), ...extraAudiences];

  return {
    kind: 'oauth',
    async check({ authorization, resource }) {
      const token = bearerOf(authorization);
      if (token === undefined)
        return refusals.unauthorized(
          resource,
          'send Authorization: Bearer <access token> from the authorization server',
          false,
        );
      const jose = await loadJose();
      const claimed = readUnverified(jose, token);
      if (claimed.problem !== undefined) return refusals.unauthorized(resource, claimed.problem, true);
      const isLocal = claimed.issuer === LOCAL_ISSUER && options.localJwks !== undefined;
      const keys = await keysFor(jose, isLocal);
      if (typeof keys !== 'function') return keys;
      const verified = await verifyToken(jose, token, keys, {
        issuer: isLocal ? LOCAL_ISSUER : issuerForms(auth.issuer),
        audience: withSlashForms(audiencesFor(resource)),
      });
      if (verified.problem !== undefined) return refusals.unauthorized(resource, verified.problem, true);
      const scopes = scopesOf(verified.payload);
      const missing = required.filter((scope) => !scopes.has(scope));
      if (missing.length > 0) return refusals.insufficient(resource, required, missing);
      return { ok: true, userId: userIdOf(verified.payload[auth.userClaim]), scopes };
    },
    checkTool(admitted, tool, resource) {
      const needed = auth.toolScopes.get(tool);
      if (needed === undefined) return undefined;
      const missing = needed.filter((scope) => !admitted.scopes.has(scope));
      return missing.length === 0
        ? undefined
        : refusals.insufficient(resource, [...new Set([...required, ...needed])], missing);
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

/**
 * The endpoint as clients know it: behind a proxy that ends TLS (an Ingress) a request arrives
 * as http://, while its URL given by the engine is https:// with the same host and path.
 */
function canonicalResource(resource: string, extraAudiences: readonly string[]): string {
  const rest = resource.slice(resource.indexOf('://'));
  return (
    extraAudiences.find(
      (audience) => audience.endsWith(rest) && audience.indexOf('://') === audience.length - rest.length,
    ) ?? resource
  );
}

/** The refusals of a token: 401 with the metadata to find an issuer, 403 naming the scopes needed. */
function createRefusals(required: readonly string[], canonical: (resource: string) => string) {
  const challenge = (resource: string, extra: Record<string, string>, scopes: readonly string[]): string => {
    const params: Record<string, string> = { ...extra, resource_metadata: metadataUrlOf(canonical(resource)) };
    if (scopes.length > 0) params.scope = scopes.join(' ');
    return `Bearer ${Object.entries(params)
      .map(([key, value]) => `${key}="${value.replace(/["\\]/g, '')}"`)
      .join(', ')}`;
  };
  return {
    unauthorized: (resource: string, message: string, tokenSent: boolean): Refused => ({
      ok: false,
      status: 401,
      headers: {
        'www-authenticate': challenge(
          resource,
          tokenSent ? { error: 'invalid_token', error_description: message } : {},
          required,
        ),
      },
      message: `Unauthorized: ${message}`,
    }),
    insufficient: (resource: string, needed: readonly string[], missing: string[]): Refused => ({
      ok: false,
      status: 403,
      headers: { 'www-authenticate': challenge(resource, { error: 'insufficient_scope' }, needed) },
      message: `Forbidden: the token lacks the scope${missing.length === 1 ? '' : 's'} ${missing.join(' ')}`,
    }),
  };
}

/** The issuer a token claims, before anything is verified, or why it is not a token this guard reads. */
function readUnverified(jose: Jose, token: string): { issuer: unknown; problem?: undefined } | { problem: string } {
  try {
    const header = jose.decodeProtectedHeader(token);
    if (typeof header.alg !== 'string' || !ALLOWED_ALGORITHMS.includes(header.alg))
      return { problem: `tokens signed with ${JSON.stringify(header.alg)} are not accepted` };
    return { issuer: jose.decodeJwt(token).iss };
  } catch {
    return { problem: 'the token is not a JWT access token' };
  }
}

function keysUnavailable(error: unknown): Refused {
  return {
    ok: false,
    status: 503,
    headers: { 'retry-after': '5' },
    message: `Service Unavailable: the issuer's keys could not be fetched (${messageOf(error)}); retry shortly`,
  };
}

/** The token's payload once its signature and claims hold, or what was wrong with it. */
async function verifyToken(
  jose: Jose,
  token: string,
  keys: JWTVerifyGetKey,
  expected: { issuer: string | string[]; audience: string[] },
): Promise<{ payload: JWTPayload; problem?: undefined } | { problem: string }> {
  try {
    const { payload } = await jose.jwtVerify(token, keys, {
      ...expected,
      algorithms: ALLOWED_ALGORITHMS,
      clockTolerance: CLOCK_LEEWAY_SECONDS,
      requiredClaims: ['exp'],
    });
    return { payload };
  } catch (error) {
    return { problem: describeJoseError(error) };
  }
}

function userIdOf(claim: unknown): string | undefined {
  return typeof claim === 'string' && claim !== '' ? claim : typeof claim === 'number' ? String(claim) : undefined;
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
