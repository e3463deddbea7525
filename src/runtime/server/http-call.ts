/**
 * Outbound HTTP for `http` handlers and `url` resources: a time-out, a response size limit, the
 * egress policy (egress.ts) on every connection, redirects followed here (at most
 * MAX_REDIRECTS, each target checked again, the definition's headers dropped once the origin
 * changes), and error messages that never show a URL's query string (where API keys tend to live).
 */
import type { Response } from 'undici';
import { EgressRefusedError, type Egress } from './egress.js';

/** Redirects followed before a call fails. */
export const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers of mcpctl's own that may follow a redirect to another origin; the definition's do not. */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'content-type']);

export interface HttpCallOptions {
  method: string;
  url: string;
  /** sent to the URL's origin only: a redirect to another origin drops them (but for accept and content-type) */
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
  egress: Egress;
}

export interface HttpCallResult {
  status: number;
  statusText: string;
  contentType: string | undefined;
  body: Buffer;
}

export class HttpCallError extends Error {
  override readonly name = 'HttpCallError';
  /** the call ran out of time (rather than failing otherwise) */
  readonly timedOut: boolean;
  /** the egress policy refused the target: nothing was sent to it */
  readonly refused: boolean;
  constructor(message: string, options: { cause?: unknown; timedOut?: boolean; refused?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.timedOut = options.timedOut === true;
    this.refused = options.refused === true;
  }
}

/** `https://api.example.com/v1/forecast?key=…` → `https://api.example.com/v1/forecast` */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}

export async function callHttp(options: HttpCallOptions): Promise<HttpCallResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  let method = options.method;
  let headers = { ...options.headers };
  let body = options.body;
  let url = parseTarget(options.url, `${method} ${describeUrl(options.url)}`);
  for (let hop = 0; ; hop += 1) {
    const where = `${method} ${describeUrl(url.href)}`;
    const response = await send(
      url,
      { method, headers, body, signal, egress: options.egress },
      where,
      timeout,
      options.timeoutMs,
    );
    const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
    if (location === null) return readBody(response, where, options.maxBytes, timeout, options.timeoutMs);
    await response.body?.cancel().catch(() => {});
    if (hop === MAX_REDIRECTS) throw new HttpCallError(`${where}: more than ${MAX_REDIRECTS} redirects`);
    const next = parseTarget(location, where, url);
    // as browsers do: 303 (and 301/302 after a POST) becomes a GET without a body
    if (
      (response.status === 303 && method !== 'HEAD') ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      method = 'GET';
      body = undefined;
      delete headers['content-type'];
    }
    if (next.origin !== url.origin)
      headers = Object.fromEntries(
        Object.entries(headers).filter(([name]) => CROSS_ORIGIN_HEADERS.has(name.toLowerCase())),
      );
    url = next;
  }
}

/** The URL to call, or for a redirect (`base` set) the URL its Location names. */
function parseTarget(text: string, where: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new HttpCallError(`${where}: ${base === undefined ? 'not a valid URL' : 'redirected to an invalid URL'}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const what = base === undefined ? '' : `redirected to a ${url.protocol.slice(0, -1)} URL; `;
    throw new HttpCallError(`${where}: ${what}only http and https URLs are allowed`);
  }
  return url;
}

interface Request {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
  egress: Egress;
}

async function send(
  url: URL,
  request: Request,
  where: string,
  timeout: AbortSignal,
  timeoutMs: number,
): Promise<Response> {
  try {
    request.egress.checkUrl(url);
    const dispatcher = await request.egress.dispatcher();
    // loaded on the first call: a server that makes none starts without it
    const { fetch } = await import('undici');
    return await fetch(url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal: request.signal,
      dispatcher,
    });
  } catch (error) {
    const refused = error instanceof EgressRefusedError ? error : (error as { cause?: unknown } | null)?.cause;
    if (refused instanceof EgressRefusedError)
      throw new HttpCallError(`${where}: refused: ${refused.message}`, { cause: refused, refused: true });
    throw new HttpCallError(`${where}: ${reason(error, timeout, timeoutMs)}`, {
      cause: error,
      timedOut: timeout.aborted,
    });
  }
}

async function readBody(
  response: Response,
  where: string,
  maxBytes: number,
  timeout: AbortSignal,
  timeoutMs: number,
): Promise<HttpCallResult> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new HttpCallError(`${where}: the response (${declared} bytes) is larger than the limit of ${maxBytes} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    if (response.body !== null) {
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
          await reader.cancel().catch(() => {});
          throw new HttpCallError(`${where}: the response is larger than the limit of ${maxBytes} bytes`);
        }
        chunks.push(value);
      }
    }
  } catch (error) {
    if (error instanceof HttpCallError) throw error;
    throw new HttpCallError(`${where}: ${reason(error, timeout, timeoutMs)}`, {
      cause: error,
      timedOut: timeout.aborted,
    });
  }
  return {
    status: response.status,
    statusText: response.statusText,
    contentType: response.headers.get('content-type') ?? undefined,
    body: Buffer.concat(chunks),
  };
}

function reason(error: unknown, timeout: AbortSignal, timeoutMs: number): string {
  if (timeout.aborted) return `no answer within ${timeoutMs} ms (time-out)`;
  if (error instanceof Error && error.name === 'AbortError') return 'the request was cancelled';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return `could not connect (${code})`;
  return cause instanceof Error ? cause.message : String(cause);
}
