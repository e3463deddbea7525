/**
 * Browser origins a server lets call it across origins (CORS): exact `scheme://host[:port]`
 * values, so `http://localhost:6274` lets the page on that port in and no other port of
 * localhost. The list comes from `MCPCTL_ALLOWED_ORIGINS` (comma- or space-separated). Pure.
 */
import { SETTINGS, settingValue } from './settings.js';

/** The variable that lists the origins allowed to call deployments and `mcpctl dev` from a browser. */
export const ALLOWED_ORIGINS_ENV = SETTINGS.allowedOrigins.env;

/** `HTTP://LocalHost:80/` → `http://localhost`; undefined for what is not an http(s) origin. */
export function normalizeOrigin(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'null') return undefined;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  // an origin has no path, query or credentials: a value with them is not one
  if (
    (url.pathname !== '/' && url.pathname !== '') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  )
    return undefined;
  return url.origin;
}

/** The origins of a list such as `http://localhost:6274, https://app.example.com`; `*` stays `*`. */
export function parseOrigins(value: string | undefined): { origins: string[]; problems: string[] } {
  const origins: string[] = [];
  const problems: string[] = [];
  for (const entry of (value ?? '').split(/[\s,]+/).filter((part) => part !== '')) {
    if (entry === '*') {
      origins.push('*');
      continue;
    }
    const origin = normalizeOrigin(entry);
    if (origin === undefined)
      problems.push(
        `${JSON.stringify(entry)} is not an origin such as http://localhost:6274 (scheme, host and port, no path)`,
      );
    else origins.push(origin);
  }
  return { origins, problems };
}

/** The origins `MCPCTL_ALLOWED_ORIGINS` lists (entries that are not origins are left out). */
export function originsFromEnv(env: Record<string, string | undefined>): string[] {
  return parseOrigins(settingValue(SETTINGS.allowedOrigins, { env })).origins;
}

/** The `Origin` header's origin when the list lets it in (exact scheme, host and port), else undefined. */
export function allowedOrigin(header: string, allowed: readonly string[]): string | undefined {
  const origin = normalizeOrigin(header);
  if (origin === undefined) return undefined;
  return allowed.includes('*') || allowed.includes(origin) ? origin : undefined;
}
