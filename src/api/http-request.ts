/**
 * One HTTP exchange of the `/v1` client on Node's own `node:http`, with the three time-outs the
 * client promises: to connect, to the answer's headers, and of silence while reading a body.
 *
 * Why not undici: a CLI command makes a handful of requests, and what it pays to load the client
 * counts more than anything the client does. undici's parts the client used cost about 65 to 125 ms
 * of CPU before the first request (its modules, its WebAssembly HTTP parser, and the builtins they
 * load: crypto, tls, http2, perf_hooks …); `node:http` costs about 10 (docs/performance.md,
 * "The CLI's HTTP client"). HTTPS goes through the same `request` with an `https.Agent`, so
 * `node:https` (and TLS) load only for an https URL.
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** What failed, as `code` on the error: the time-outs below, or Node's own (ECONNREFUSED, ECONNRESET, …). */
export type TimeoutCode = 'CONNECT_TIMEOUT' | 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT';

export class HttpTimeout extends Error {
  override readonly name = 'HttpTimeout';
  constructor(
    readonly code: TimeoutCode,
    message: string,
  ) {
    super(message);
  }
}

/** The kept-alive connections of one client: a few per origin, closed by the service's keep-alive hint, never holding the process open. */
export async function createAgent(protocol: string): Promise<Agent> {
  const options = { keepAlive: true, maxSockets: 8 };
  if (protocol !== 'https:') return new Agent(options);
  const https = await import('node:https');
  return new https.Agent(options);
}

export interface ExchangeOptions {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** an `http.Agent`, or an `https.Agent` for an https URL */
  agent: Agent;
  signal?: AbortSignal | undefined;
  /** to open the connection (TCP and TLS); a kept-alive one is not timed */
  connectTimeoutMs: number;
  /** from now to the answer's headers */
  headersTimeoutMs: number;
}

/** Sends one request; resolves with the answer once its headers are in (read its body with `readBody` or as a stream). */
export function exchange(url: string, options: ExchangeOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method,
      headers:
        options.body === undefined
          ? options.headers
          : { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
      agent: options.agent,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const headersTimer = setTimeout(
      () => req.destroy(new HttpTimeout('HEADERS_TIMEOUT', `no answer within ${options.headersTimeoutMs} ms`)),
      options.headersTimeoutMs,
    );
    let connectTimer: NodeJS.Timeout | undefined;
    const clear = () => {
      clearTimeout(headersTimer);
      clearTimeout(connectTimer);
    };
    req.once('socket', (socket: Socket & { encrypted?: boolean }) => {
      if (!socket.connecting) return; // a kept-alive connection
      connectTimer = setTimeout(
        () => req.destroy(new HttpTimeout('CONNECT_TIMEOUT', 'could not connect in time')),
        options.connectTimeoutMs,
      );
      socket.once(socket.encrypted === true ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    req.once('response', (res) => {
      clear();
      resolve(res);
    });
    req.once('error', (error) => {
      clear();
      reject(error);
    });
    req.end(options.body);
  });
}

/**
 * Calls `stalled` when `res` stays silent for `idleMs` while its body is read; returns the function
 * that ends the watch. The answer is destroyed with a `BODY_TIMEOUT` error, which a reader sees.
 */
export function watchSilence(res: IncomingMessage, idleMs: number): () => void {
  const timer = setTimeout(() => res.destroy(new HttpTimeout('BODY_TIMEOUT', 'the answer stalled')), idleMs);
  const refresh = () => timer.refresh();
  res.on('data', refresh);
  return () => {
    clearTimeout(timer);
    res.off('data', refresh);
  };
}

/** An answer that ended before its body was complete. */
function dropped(): Error {
  return Object.assign(new Error('the connection was dropped before the answer was complete'), { code: 'ECONNRESET' });
}

/** The whole body as UTF-8 text; fails when the connection drops or stays silent for `idleMs`. */
export function readBody(res: IncomingMessage, idleMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const unwatch = watchSilence(res, idleMs);
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => {
      unwatch();
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    res.once('error', (error) => {
      unwatch();
      reject(error);
    });
    res.once('close', () => {
      unwatch();
      if (!res.complete) reject(dropped());
    });
  });
}

/** Reads the body of a stream that is left (an error answer in place of a stream); never fails. */
export function readBodyQuietly(res: IncomingMessage, idleMs: number): Promise<string> {
  return readBody(res, idleMs).catch(() => '');
}

/** Whether a body that ends before it is complete says so: the stream readers check this after their loop. */
export function assertComplete(res: IncomingMessage): void {
  if (!res.complete) throw dropped();
}
