/**
 * The headers of a request the gateway passes on, and of the answer it passes back: hop-by-hop
 * headers stay on their hop, what the gateway sets itself (Host, X-Forwarded-*, X-Request-Id) is
 * not taken from the client, and a client-named identity is dropped where the gateway checks
 * credentials.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { USER_ID_HEADER } from '../../runtime/constants.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The client's headers not passed on: hop-by-hop ones; what the gateway sets itself; Expect,
 * whose body the gateway has already read (undici does not send it either); and Origin, which the
 * gateway has checked (src/engine/http/cors.ts).
 */
const NOT_PASSED_ON = new Set([
  ...HOP_BY_HOP,
  'host',
  'content-length',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-for',
  'x-request-id',
  'expect',
  'origin',
]);

/**
 * The headers sent to the instance, as a flat [name, value, …] list made from the client's raw
 * headers, in their order and as often as they were sent. undici writes the Content-Length of the body.
 */
export function upstreamHeaders(
  req: IncomingMessage,
  port: number,
  requestId: string,
  withoutIdentity: boolean,
): string[] {
  const raw = req.rawHeaders;
  // The runtime checks Host against its own address (DNS-rebinding protection).
  const headers = ['host', `127.0.0.1:${port}`];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (NOT_PASSED_ON.has(name) || (withoutIdentity && name === USER_ID_HEADER)) continue;
    headers.push(name, raw[i + 1]!);
  }
  headers.push(
    'x-forwarded-host',
    req.headers.host ?? '',
    'x-forwarded-proto',
    'http',
    'x-forwarded-for',
    req.socket.remoteAddress ?? '',
    'x-request-id',
    requestId,
  );
  return headers;
}

export function responseHeaders(headers: IncomingHttpHeaders): { [name: string]: string | string[] } {
  const out: { [name: string]: string | string[] } = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  // A deployment answers on the engine's own origin, beside the dashboard and /v1: a page it served
  // would run as that origin and could use the dashboard's session. `sandbox` gives such a page an
  // origin of its own (no cookies of the engine's, no reading its answers), added to any policy the
  // instance set (browsers enforce every one); nosniff keeps a JSON or text answer from being run as a page.
  const own = out['content-security-policy'];
  out['content-security-policy'] = [...(own === undefined ? [] : [own].flat()), 'sandbox'];
  out['x-content-type-options'] = 'nosniff';
  return out;
}
