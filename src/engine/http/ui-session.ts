/**
 * The dashboard's sessions. A browser never holds the API key in a URL or in script: the CLI asks
 * for a one-time code (`POST /v1/dashboard/codes`, API key only), the page trades it (or a typed
 * key) for a session cookie (`POST /ui/session`), and then calls /v1 with that cookie and the
 * session's CSRF token in `X-Mcpctl-Csrf`. The cookie alone is no credential: a page of another
 * site can make the browser send it, but cannot read the token.
 *
 * Codes and sessions live in memory, stored by the SHA-256 of their value, so neither a heap dump
 * nor a log line holds one; an engine restart ends every session.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { firstHeader } from '../../shared/http.js';
import { requestOrigin } from '../../runtime/server/auth.js';
import { blocked, digest } from './api-key-check.js';
import { isJsonMediaType, parseJsonBody, readBody } from './body.js';
import { apiOriginProblem } from './cors.js';
import type { Exchange } from './exchange.js';
import type { FailureLimiter } from './failure-limit.js';
import { HttpError } from './respond.js';
import type { Route } from './routes.js';
import { validateBody } from './zod-details.js';

export const SESSION_COOKIE = 'mcpctl_session';
export const CSRF_HEADER = 'X-Mcpctl-Csrf';
export const DASHBOARD_CODES_PATH = '/v1/dashboard/codes';

export interface UiSessionLimits {
  codeLifetimeMs: number;
  sessionLifetimeMs: number;
  /** codes outstanding at once; the oldest give way */
  maxCodes: number;
  /** sessions at once; the oldest give way */
  maxSessions: number;
}

export const DEFAULT_UI_SESSION_LIMITS: UiSessionLimits = {
  codeLifetimeMs: 60_000,
  sessionLifetimeMs: 12 * 3600_000,
  maxCodes: 32,
  maxSessions: 1000,
};

export interface OpenedSession {
  /** the cookie's value: given to the browser once, kept here only as its digest */
  id: string;
  csrf: string;
  expiresAt: number;
}

interface Session {
  csrf: string;
  expiresAt: number;
}

function hashOf(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** 32 random bytes (256 bits), URL-safe. */
function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Equal strings, compared in the same time whatever they hold. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** The table of codes and sessions. Pure apart from the clock it is given and the random values. */
export class UiSessions {
  /** digest of a code → when it expires; the Map's order is the order of making, oldest first */
  private readonly codes = new Map<string, number>();
  private readonly sessions = new Map<string, Session>();
  private readonly limits: UiSessionLimits;

  constructor(
    limits: Partial<UiSessionLimits> = {},
    private readonly clock: () => number = Date.now,
  ) {
    this.limits = { ...DEFAULT_UI_SESSION_LIMITS, ...limits };
  }

  makeCode(): { code: string; expiresAt: number } {
    const now = this.clock();
    dropExpired(this.codes, now, (expiresAt) => expiresAt);
    dropOldest(this.codes, this.limits.maxCodes - 1);
    const code = randomToken();
    const expiresAt = now + this.limits.codeLifetimeMs;
    this.codes.set(hashOf(code), expiresAt);
    return { code, expiresAt };
  }

  /** True once for a code made here that has not expired; the code is gone afterwards either way. */
  redeemCode(code: string): boolean {
    const key = hashOf(code);
    const expiresAt = this.codes.get(key);
    this.codes.delete(key);
    return expiresAt !== undefined && expiresAt > this.clock();
  }

  open(): OpenedSession {
    const now = this.clock();
    dropExpired(this.sessions, now, (s) => s.expiresAt);
    dropOldest(this.sessions, this.limits.maxSessions - 1);
    const id = randomToken();
    const session = { csrf: randomToken(), expiresAt: now + this.limits.sessionLifetimeMs };
    this.sessions.set(hashOf(id), session);
    return { id, ...session };
  }

  /** The live session of a cookie value, or undefined. */
  find(id: string): (Session & { key: string }) | undefined {
    const key = hashOf(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.clock()) {
      this.sessions.delete(key);
      return undefined;
    }
    return { ...session, key };
  }

  /** How long a new session lasts, for the cookie's Max-Age. */
  get lifetimeSeconds(): number {
    return Math.floor(this.limits.sessionLifetimeMs / 1000);
  }

  close(id: string): void {
    this.sessions.delete(hashOf(id));
  }

  get size(): { codes: number; sessions: number } {
    return { codes: this.codes.size, sessions: this.sessions.size };
  }
}

function dropExpired<T>(map: Map<string, T>, now: number, expiry: (value: T) => number): void {
  for (const [key, value] of map) if (expiry(value) <= now) map.delete(key);
}

function dropOldest(map: Map<string, unknown>, keep: number): void {
  for (const key of map.keys()) {
    if (map.size <= keep) break;
    map.delete(key);
  }
}

/** The session cookie's value in a request, or undefined. */
export function sessionCookieOf(req: IncomingMessage): string | undefined {
  const header = firstHeader(req.headers.cookie);
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at !== -1 && part.slice(0, at).trim() === SESSION_COOKIE) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * The session cookie taken out of a request for a deployment (the data plane shares the engine's
 * origin): a deployed server must never see a credential of the engine.
 */
export function removeSessionCookie(req: IncomingMessage): void {
  const header = req.headers.cookie;
  if (header === undefined || !header.includes(SESSION_COOKIE)) return;
  const kept = header
    .split(';')
    .filter((part) => part.split('=')[0]?.trim() !== SESSION_COOKIE)
    .join(';')
    .trim();
  if (kept === '') delete req.headers.cookie;
  else req.headers.cookie = kept;
}

function unauthorized(message: string): HttpError {
  return new HttpError('unauthorized', message, { 'WWW-Authenticate': 'Bearer realm="mcpctl"' });
}

/**
 * The session of a /v1 request that sends no API key: its cookie and its CSRF token, both valid,
 * or undefined when the request has no session cookie (it then needs the key). The answer is the
 * key the rate limiter and `Idempotency-Key` scope the session's requests under.
 */
export function authenticateSession(
  req: IncomingMessage,
  path: string | undefined,
  sessions: UiSessions,
): string | undefined {
  if (req.headers.authorization !== undefined) return undefined;
  const id = sessionCookieOf(req);
  if (id === undefined) return undefined;
  const session = sessions.find(id);
  if (session === undefined) throw unauthorized('the dashboard session has ended; log in again (mcpctl dashboard)');
  const token = firstHeader(req.headers[CSRF_HEADER.toLowerCase()]);
  if (token === undefined || !sameSecret(token, session.csrf)) {
    throw unauthorized(`a request with the dashboard's session cookie needs its ${CSRF_HEADER} header`);
  }
  // a code logs a browser in: only the key's holder may make one, or a stolen session could renew itself
  // the router forgives one trailing slash: so does this check
  if (path?.replace(/(.)\/$/, '$1') === DASHBOARD_CODES_PATH) {
    throw new HttpError('forbidden', 'a dashboard session cannot make login codes; use the API key (mcpctl dashboard)');
  }
  return `session:${session.key}`;
}

/** The session's cookie, `Secure` when the browser reached the engine over HTTPS. */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/** Whether the browser reached the engine over HTTPS: its own TLS listener, or a public https:// URL in front of it. */
export function reachedOverHttps(req: IncomingMessage, publicUrl: string | undefined): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
  if (publicUrl === undefined || !publicUrl.startsWith('https:')) return false;
  try {
    return new URL(publicUrl).host === req.headers.host;
  } catch {
    return false;
  }
}

/** POST /v1/dashboard/codes: a one-time code, and the page's URL that logs a browser in with it. */
export function dashboardCodesRoute(sessions: UiSessions, publicUrl: string | undefined): Route {
  return {
    handle: async (ctx) => {
      const { code, expiresAt } = sessions.makeCode();
      const base = (publicUrl ?? requestOrigin(ctx.req)).replace(/\/+$/, '');
      return {
        status: 201,
        data: { code, url: `${base}/ui/#code=${code}`, expires_at: new Date(expiresAt).toISOString() },
      };
    },
  };
}

/**
 * A credential sent to `POST /ui/session` (a typed API key, or a code), refused with 429 for an
 * address that sent too many wrong ones: the same limiter as the API key's header, so guessing
 * through the page is throttled exactly as guessing through the API.
 */
function checkCredential(req: IncomingMessage, failures: FailureLimiter, valid: () => boolean, wrong: string): void {
  const address = req.socket.remoteAddress;
  const waiting = failures.blockedFor(address);
  if (waiting > 0) throw blocked(waiting);
  if (valid()) return;
  const seconds = failures.fail(address);
  if (seconds > 0) throw blocked(seconds);
  throw unauthorized(wrong);
}

export interface SessionEndpointParts {
  sessions: UiSessions;
  keyDigest: Buffer;
  failures: FailureLimiter;
  publicUrl: string | undefined;
  bodyBytes: number;
}

const LOGIN = z.union([
  z.strictObject({ code: z.string().min(1).max(200) }),
  z.strictObject({ api_key: z.string().min(1).max(4096) }),
]);

/** `POST /ui/session`, `GET /ui/session` and `POST /ui/logout`, answered in the /v1 envelope; false for any other path. */
export async function answerSessionEndpoint(x: Exchange, parts: SessionEndpointParts): Promise<boolean> {
  const { path, method } = x;
  if (path !== '/ui/session' && path !== '/ui/logout') return false;
  x.res.setHeader('X-Request-Id', x.requestId);
  const foreignPage = apiOriginProblem(x.req, parts.publicUrl);
  if (foreignPage !== undefined) throw new HttpError('forbidden', foreignPage);
  if (path === '/ui/session' && method === 'POST') await logIn(x, parts);
  else if (path === '/ui/session' && (method === 'GET' || method === 'HEAD')) {
    x.req.resume();
    // no session is an answer, not a failure: a first visit asks before it shows the log-in form
    const id = sessionCookieOf(x.req);
    const session = id === undefined ? undefined : parts.sessions.find(id);
    x.send(200, { success: true, data: session === undefined ? null : sessionData(session) });
  } else if (path === '/ui/logout' && method === 'POST') {
    x.req.resume();
    const id = sessionCookieOf(x.req);
    // the token too: a page of another site must not be able to end a session
    authenticateSession(x.req, undefined, parts.sessions);
    if (id === undefined) throw unauthorized('there is no dashboard session to end');
    parts.sessions.close(id);
    const expired = sessionCookie('', 0, reachedOverHttps(x.req, parts.publicUrl));
    x.send(200, { success: true, data: { logged_out: true } }, { 'Set-Cookie': expired });
  } else {
    x.req.resume();
    const allow = path === '/ui/session' ? 'GET, POST' : 'POST';
    throw new HttpError('method_not_allowed', `${method} is not allowed on ${path}; use ${allow}`, { Allow: allow });
  }
  return true;
}

async function logIn(x: Exchange, parts: SessionEndpointParts): Promise<void> {
  if (!isJsonMediaType(x.req.headers['content-type'])) {
    x.req.resume();
    throw new HttpError('unsupported_media_type', 'send the login as JSON, with Content-Type: application/json');
  }
  const body = validateBody(LOGIN, parseJsonBody(await readBody(x.req, parts.bodyBytes)));
  const { sessions, keyDigest, failures } = parts;
  if ('code' in body) {
    checkCredential(
      x.req,
      failures,
      () => sessions.redeemCode(body.code),
      'the login code is not valid: it was used already, it expired (a code lasts 60 s) or it was never made; run `mcpctl dashboard` for a new one',
    );
  } else {
    checkCredential(
      x.req,
      failures,
      () => timingSafeEqual(digest(body.api_key), keyDigest),
      'the API key is not valid for this service',
    );
  }
  // a new session for every login, and the one the browser had ends: a planted cookie is never promoted
  const previous = sessionCookieOf(x.req);
  if (previous !== undefined) sessions.close(previous);
  const opened = sessions.open();
  const cookie = sessionCookie(opened.id, sessions.lifetimeSeconds, reachedOverHttps(x.req, parts.publicUrl));
  x.send(200, { success: true, data: sessionData(opened) }, { 'Set-Cookie': cookie });
}

function sessionData(session: Session): { csrf: string; expires_at: string } {
  return { csrf: session.csrf, expires_at: new Date(session.expiresAt).toISOString() };
}
