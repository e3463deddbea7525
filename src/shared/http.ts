/**
 * Reading a request body and answering with JSON, for every HTTP server of mcpctl (the engine's
 * API and its gateway). Imports only node: modules.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

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
