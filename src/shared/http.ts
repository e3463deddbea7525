/**
 * Reading a request body and answering with JSON, for every HTTP server of mcpctl (the engine's
 * API and its gateway), and one POST read whole for the plain MCP exchanges (a build's probe, a
 * warm process's warm-up). Imports only node: modules.
 */
import { request, type Agent, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';

/** The first value of a header Node may give as a list. */
export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The whole body; 'too large' as soon as it passes `limit` bytes (or its declared length does),
 * the rest then read and dropped; 'gone' when the client went away before it arrived whole.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too large' | 'gone'> {
  return new Promise((resolve) => {
    const tooLarge = () => {
      req.removeAllListeners('data');
      req.resume();
      resolve('too large');
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return tooLarge();
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks, size)));
    req.on('error', () => resolve('gone'));
    req.on('close', () => {
      if (!req.complete) resolve('gone');
    });
  });
}

export interface SendJsonOptions {
  headers?: Record<string, string>;
  /** the headers only (an answer to HEAD) */
  headOnly?: boolean;
}

/** Answers `status` with `body` as JSON, never cached. */
export function sendJson(res: ServerResponse, status: number, body: unknown, options: SendJsonOptions = {}): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('Cache-Control', 'no-store');
  res.end(options.headOnly === true ? undefined : text);
}

/** An answer, its body read whole as UTF-8. */
export interface TextAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One POST of `body`, its answer read whole; rejects on a connection error or when `signal` aborts. */
export function postText(
  url: string,
  options: { headers: Record<string, string>; body: string; agent?: Agent | false; signal?: AbortSignal },
): Promise<TextAnswer> {
  const { body, agent, signal } = options;
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = request(
      url,
      {
        method: 'POST',
        headers,
        ...(agent === undefined ? {} : { agent }),
        ...(signal === undefined ? {} : { signal }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
