/**
 * Outbound HTTP for `http` handlers and `url` resources: a time-out, a response size limit, and
 * error messages that never show a URL's query string (where API keys tend to live).
 */

export interface HttpCallOptions {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
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
  constructor(message: string, options: { cause?: unknown; timedOut?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.timedOut = options.timedOut === true;
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
  const where = `${options.method} ${describeUrl(options.url)}`;
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new HttpCallError(`${where}: not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpCallError(`${where}: only http and https URLs are allowed`);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method,
      ...(options.headers === undefined ? {} : { headers: options.headers }),
      ...(options.body === undefined ? {} : { body: options.body }),
      signal,
    });
  } catch (error) {
    throw new HttpCallError(`${where}: ${reason(error, timeout, options.timeoutMs)}`, { cause: error, timedOut: timeout.aborted });
  }
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new HttpCallError(`${where}: the response (${declared} bytes) is larger than the limit of ${options.maxBytes} bytes`);
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
        if (size > options.maxBytes) {
          await reader.cancel().catch(() => {});
          throw new HttpCallError(`${where}: the response is larger than the limit of ${options.maxBytes} bytes`);
        }
        chunks.push(value);
      }
    }
  } catch (error) {
    if (error instanceof HttpCallError) throw error;
    throw new HttpCallError(`${where}: ${reason(error, timeout, options.timeoutMs)}`, { cause: error, timedOut: timeout.aborted });
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
