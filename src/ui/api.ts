/**
 * Every request the page makes. /v1 calls carry the session cookie (same origin) and the session's
 * CSRF token in `X-Mcpctl-Csrf`, which the engine requires with the cookie: another site's page can
 * make the browser send the cookie, but it cannot read the token. A 401 means the session is gone:
 * the handler set by the app shows the log-in form again.
 */
import type { ApiErrorBody, Envelope, Session } from './api-types.js';

export const CSRF_HEADER = 'X-Mcpctl-Csrf';

/** An answer that was not a success, with the service's words for it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let csrf: string | undefined;
let unauthorized: (reason: string) => void = () => undefined;

/** Remembers the session's CSRF token (undefined: logged out). */
export function setCsrf(token: string | undefined): void {
  csrf = token;
}

/** What to do when a request finds the session gone. */
export function onUnauthorized(handler: (reason: string) => void): void {
  unauthorized = handler;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { Accept: 'application/json', ...(csrf === undefined ? {} : { [CSRF_HEADER]: csrf }), ...extra };
}

function errorOf(status: number, body: Envelope<unknown> | undefined): ApiError {
  const error: ApiErrorBody | undefined = body?.error;
  if (error !== undefined) return new ApiError(status, error.code, error.message, error.hint);
  return new ApiError(status, 'http_' + String(status), `The engine answered HTTP ${status}.`);
}

async function readEnvelope<T>(response: Response): Promise<Envelope<T> | undefined> {
  try {
    return (await response.json()) as Envelope<T>;
  } catch {
    return undefined;
  }
}

export interface Answer<T> {
  data: T;
  status: number;
  etag: string | undefined;
}

async function request<T>(method: string, path: string, init: RequestInit = {}): Promise<Answer<T>> {
  let response: Response;
  try {
    response = await fetch(path, { credentials: 'same-origin', cache: 'no-store', ...init, method });
  } catch (error) {
    if (init.signal?.aborted) throw error;
    throw new ApiError(
      0,
      'network',
      'The engine cannot be reached.',
      'Check that the engine runs: mcpctl engine status',
    );
  }
  const etag = response.headers.get('ETag') ?? undefined;
  if (response.status === 304) return { data: undefined as T, status: 304, etag };
  const body = await readEnvelope<T>(response);
  if (!response.ok || body?.success !== true) {
    const error = errorOf(response.status, body);
    // a request the page gave up on (it left the view) has nothing to report
    if (response.status === 401 && path.startsWith('/v1/') && init.signal?.aborted !== true)
      unauthorized(error.message);
    throw error;
  }
  return { data: body.data as T, status: response.status, etag };
}

/** `GET` a /v1 path; `data` of its envelope. */
export async function getJson<T>(path: string, options: { signal?: AbortSignal; etag?: string } = {}): Promise<T> {
  return (await getAnswer<T>(path, options)).data;
}

/** How long an answer fetched ahead waits for the view that asks for it. */
const EARLY_MS = 5000;
const early = new Map<string, { at: number; answer: Promise<Answer<unknown>> }>();

/**
 * Starts the GETs the first view is about to make, as soon as the session is there: they are under
 * way while the page renders instead of after it. The view's own `getJson` of each path takes the
 * answer (once, within EARLY_MS); its failures are reported there too.
 */
export function prefetch(paths: readonly string[]): void {
  for (const path of paths) {
    const answer = getAnswer<unknown>(path);
    answer.catch(() => undefined);
    early.set(path, { at: Date.now(), answer });
  }
}

function takeEarly(path: string): Promise<Answer<unknown>> | undefined {
  const fetched = early.get(path);
  if (fetched === undefined) return undefined;
  early.delete(path);
  return Date.now() - fetched.at <= EARLY_MS ? fetched.answer : undefined;
}

/** `GET` with the status and the ETag, for long-polls. */
export async function getAnswer<T>(
  path: string,
  options: { signal?: AbortSignal; etag?: string } = {},
): Promise<Answer<T>> {
  const fetched = options.etag === undefined ? takeEarly(path) : undefined;
  if (fetched !== undefined) return fetched as Promise<Answer<T>>;
  const extra: Record<string, string> = options.etag === undefined ? {} : { 'If-None-Match': options.etag };
  return request<T>('GET', path, { headers: headers(extra), ...(options.signal ? { signal: options.signal } : {}) });
}

/** `POST` to a path, with a JSON body when one is given. */
export async function postJson<T>(path: string, body?: unknown): Promise<T> {
  const init: RequestInit =
    body === undefined
      ? { headers: headers() }
      : { headers: headers({ 'Content-Type': 'application/json' }), body: JSON.stringify(body) };
  return (await request<T>('POST', path, init)).data;
}

/** Logs in with a one-time code or an API key; the engine sets the session cookie. */
export async function openSession(credential: { code: string } | { api_key: string }): Promise<Session> {
  return postJson<Session>('/ui/session', credential);
}

/** The current session, or undefined when there is none (the engine answers `data: null`). */
export async function currentSession(): Promise<Session | undefined> {
  return (await getJson<Session | null>('/ui/session')) ?? undefined;
}

export async function logout(): Promise<void> {
  await postJson<unknown>('/ui/logout');
}

/**
 * Reads a streamed answer (NDJSON) chunk by chunk until it ends or `signal` aborts; `onText` gets
 * each decoded chunk.
 */
export async function streamText(path: string, signal: AbortSignal, onText: (text: string) => void): Promise<void> {
  const response = await fetch(path, {
    credentials: 'same-origin',
    cache: 'no-store',
    headers: headers({ Accept: 'application/x-ndjson' }),
    signal,
  });
  if (!response.ok || response.body === null) {
    const error = errorOf(response.status, await readEnvelope(response));
    if (response.status === 401) unauthorized(error.message);
    throw error;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      onText(value);
    }
  } finally {
    reader.releaseLock();
  }
}

/** What an error says to a person: the service's message, and its hint when it gave one. */
export function describeError(error: unknown): { message: string; hint?: string } {
  if (error instanceof ApiError)
    return error.hint === undefined ? { message: error.message } : { message: error.message, hint: error.hint };
  if (error instanceof Error) return { message: error.message };
  return { message: String(error) };
}
