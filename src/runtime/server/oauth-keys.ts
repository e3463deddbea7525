/**
 * Where an OAuth guard gets the keys that sign tokens: the issuer's JWKS, found through its
 * metadata (OpenID discovery or RFC 8414) unless `jwks_uri` is given, cached by `jose`, and
 * looked for again after a pause when discovery failed. `jose` loads on the first token, so a
 * server without OAuth never pays for it.
 */
import type * as JoseModule from 'jose';
import type { JWTVerifyGetKey } from 'jose';

const DISCOVERY_RETRY_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;

type Jose = typeof JoseModule;
let joseModule: Promise<Jose> | undefined;
export const loadJose = (): Promise<Jose> => (joseModule ??= import('jose'));

/** The issuer's keys, discovered once (again after a pause if that failed). */
export function createRemoteKeys(issuer: string, jwksUri: string | undefined): () => Promise<JWTVerifyGetKey> {
  let remote: JWTVerifyGetKey | undefined;
  let discovery: Promise<JWTVerifyGetKey> | undefined;
  let failedAt: number | undefined;
  return () => {
    if (remote !== undefined) return Promise.resolve(remote);
    // a failed discovery is tried again after a pause, not at every request
    if (discovery !== undefined && (failedAt === undefined || Date.now() - failedAt < DISCOVERY_RETRY_MS))
      return discovery;
    failedAt = undefined;
    discovery = (async () => {
      const jose = await loadJose();
      const uri = jwksUri ?? (await discoverJwksUri(issuer));
      // Unknown key ids are looked up again (a rotated key), at most once a second.
      remote = jose.createRemoteJWKSet(new URL(uri), {
        cooldownDuration: 1_000,
        cacheMaxAge: 10 * 60_000,
        timeoutDuration: FETCH_TIMEOUT_MS,
      });
      return remote;
    })();
    discovery.catch(() => (failedAt = Date.now()));
    return discovery;
  };
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
    const found = await readJwksUri(candidate, issuer);
    if (found.jwksUri !== undefined) return found.jwksUri;
    failures.push(`${candidate}: ${found.failure}`);
  }
  throw new Error(`no metadata of ${issuer} was found (${failures.join('; ')}); set auth.jwks_uri`);
}

/** The `jwks_uri` of one metadata document, or why it gives none. */
async function readJwksUri(
  candidate: string,
  issuer: string,
): Promise<{ jwksUri: string; failure?: undefined } | { jwksUri?: undefined; failure: string }> {
  try {
    const response = await fetch(candidate, {
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      headers: { accept: 'application/json' },
    });
    if (!response.ok) return { failure: `HTTP ${response.status}` };
    const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (typeof metadata.issuer !== 'string' || !issuerForms(issuer).includes(metadata.issuer))
      return { failure: `names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}` };
    if (typeof metadata.jwks_uri !== 'string') return { failure: 'has no jwks_uri' };
    return { jwksUri: metadata.jwks_uri };
  } catch (error) {
    return { failure: messageOf(error) };
  }
}

/** An issuer as configured and with or without its trailing slash (Auth0's ends in one, most do not). */
export function issuerForms(issuer: string): string[] {
  return withSlashForms([issuer]);
}
export function withSlashForms(values: string[]): string[] {
  return [...new Set(values.flatMap((v) => [v, v.endsWith('/') ? v.slice(0, -1) : `${v}/`]))];
}
export function withoutTrailingSlash(value: string): string {
  return value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
