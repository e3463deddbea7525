/**
 * Reading a request body: the media type, the size limit and JSON parsing, each failing with the
 * error code docs/api.md gives it.
 */
import type { IncomingMessage } from 'node:http';
import { readBody as readWholeBody } from '../../shared/http.js';
import { HttpError } from './respond.js';

/** True when the request announces a body (a length above zero, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length.trim() !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

/** `application/json`, with or without parameters such as `charset=utf-8`. */
export function isJsonMediaType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = value.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** The client closed the connection before its request body arrived whole (an upload cut short). */
export class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
}

/** Reads the whole body, failing with 413 as soon as it passes `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const body = await readWholeBody(req, limit);
  if (body === 'too large') throw tooLarge(limit);
  if (body === 'gone') throw new ClientGoneError('the client closed the connection before the request body arrived');
  return body;
}

function tooLarge(limit: number): HttpError {
  const mib = limit / (1024 * 1024);
  const size = Number.isInteger(mib) ? `${mib} MiB` : `${limit} bytes`;
  return new HttpError('payload_too_large', `the request body is over the limit of ${size}`, { Connection: 'close' });
}

/** Deepest nesting of arrays and objects accepted: deeper documents would exhaust the stack of recursive code later. */
export const MAX_JSON_DEPTH = 64;

/** Parses a JSON body; an empty or malformed one is `400 invalid_json`, one nested too deep `422 validation_failed`. */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw new HttpError('invalid_json', 'the request needs a JSON body');
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : 'not JSON';
    throw new HttpError('invalid_json', `the request body is not valid JSON: ${reason}`);
  }
  if (exceedsDepth(text, MAX_JSON_DEPTH)) {
    throw new HttpError('validation_failed', `the request body is nested more than ${MAX_JSON_DEPTH} levels deep`, {}, [
      { path: '', message: `nested more than ${MAX_JSON_DEPTH} levels deep` },
    ]);
  }
  return value;
}

/** True when valid JSON `text` nests arrays and objects deeper than `limit`; strings are skipped. */
export function exceedsDepth(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}
