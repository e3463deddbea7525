/**
 * Which browser pages may call the engine across origins. Deployments (the gateway): pages of the
 * engine's own origin, and the exact origins of `MCPCTL_ALLOWED_ORIGINS` (scheme, host and port);
 * any other page is refused, so a page on `http://localhost:<some port>` cannot drive a
 * deployment. The API (/v1): pages of the engine's own origin only; the CLI and other programs send
 * no `Origin`.
 */
import type { IncomingMessage } from 'node:http';
import { requestOrigin } from '../../runtime/server/auth.js';
import { allowHeaders, MCP_REQUEST_HEADERS } from '../../shared/cors-headers.js';
import { ALLOWED_ORIGINS_ENV, allowedOrigin, normalizeOrigin } from '../../shared/origins.js';

/** What a deployment allows a cross-origin request to send and read. */
const CORS_HEADERS = {
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Expose-Headers': 'mcp-protocol-version, mcp-session-id, www-authenticate',
  'Access-Control-Max-Age': '600',
  Vary: 'Origin',
};

export type CrossOrigin =
  /** no `Origin`: not a page, or a request browsers do not mark */
  | { kind: 'none' }
  /** a page the engine lets in: the headers that say so */
  | { kind: 'allowed'; headers: Record<string, string> }
  | { kind: 'refused'; message: string };

/** The origins a request to the engine is same-origin with: the one it reached, and the public URL's. */
function ownOrigins(req: IncomingMessage, publicUrl: string | undefined): string[] {
  const own = [normalizeOrigin(requestOrigin(req))];
  if (publicUrl !== undefined) own.push(normalizeOrigin(publicUrl));
  return own.filter((origin): origin is string => origin !== undefined);
}

/** The decision for a request to a deployment through the gateway. */
export function deploymentCrossOrigin(
  req: IncomingMessage,
  allowed: readonly string[],
  publicUrl: string | undefined,
): CrossOrigin {
  const sent = req.headers.origin;
  if (sent === undefined || sent === '') return { kind: 'none' };
  const origin = allowedOrigin(sent, [...allowed, ...ownOrigins(req, publicUrl)]);
  if (origin === undefined) {
    return {
      kind: 'refused',
      message: `pages on ${sent} may not call this deployment; list the origin (such as http://localhost:6274) in ${ALLOWED_ORIGINS_ENV} where the engine runs`,
    };
  }
  return {
    kind: 'allowed',
    headers: {
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Headers': allowHeaders(
        `authorization, content-type, accept, ${MCP_REQUEST_HEADERS}`,
        req.headers['access-control-request-headers'],
      ),
      ...CORS_HEADERS,
    },
  };
}

/**
 * Why a request to the API is refused for its `Origin`, or undefined: any page but the engine's
 * own is refused, whatever key it sends (a page that learned a key must not use it from a browser).
 */
export function apiOriginProblem(req: IncomingMessage, publicUrl: string | undefined): string | undefined {
  const sent = req.headers.origin;
  if (sent === undefined || sent === '') return undefined;
  if (allowedOrigin(sent, ownOrigins(req, publicUrl)) !== undefined) return undefined;
  return `the API does not answer pages of other origins (this request came from ${sent}); call it from the CLI or a program, which send no Origin`;
}
