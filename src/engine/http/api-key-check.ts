/**
 * The API key of a request: compared as SHA-256 digests so the comparison takes the same time for
 * any input, and refused for a while to an address that sent too many wrong keys.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { firstHeader } from '../../shared/http.js';
import type { FailureLimiter } from './failure-limit.js';
import { HttpError } from './respond.js';

export function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The digest of the request's API key (hex), or 401. */
function authenticate(req: IncomingMessage, expected: Buffer): string {
  const value = firstHeader(req.headers.authorization);
  const match = value === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(value);
  const unauthorized = (message: string) =>
    new HttpError('unauthorized', message, { 'WWW-Authenticate': 'Bearer realm="mcpctl"' });
  if (match === null) throw unauthorized('this request needs an API key: send Authorization: Bearer <key>');
  const given = digest(match[1]!);
  if (!timingSafeEqual(given, expected)) throw unauthorized('the API key is not valid for this service');
  return given.toString('hex');
}

/** 429 for an address that sent too many wrong keys, for `seconds` more. */
export function blocked(seconds: number): HttpError {
  return new HttpError(
    'rate_limited',
    `too many requests with a wrong API key from this address; retry in ${seconds} s`,
    {
      'Retry-After': String(seconds),
    },
  );
}

/**
 * `authenticate`, refused with 429 for an address that sent too many wrong keys: while it is
 * blocked even the right key is refused, so guessing learns nothing until the block ends.
 */
export function authenticateLimited(req: IncomingMessage, expected: Buffer, failures: FailureLimiter): string {
  const address = req.socket.remoteAddress;
  const waiting = failures.blockedFor(address);
  if (waiting > 0) throw blocked(waiting);
  try {
    return authenticate(req, expected);
  } catch (error) {
    // only a key that was sent and is wrong counts: a request without one is a client not yet configured
    if (error instanceof HttpError && firstHeader(req.headers.authorization) !== undefined) {
      const seconds = failures.fail(address);
      if (seconds > 0) throw blocked(seconds);
    }
    throw error;
  }
}
