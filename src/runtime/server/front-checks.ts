/**
 * The checks a request passes in the HTTP front, in order. Each one either answers the request
 * (and the front stops there) or lets it through, so each reads and can be tested on its own:
 * Host, Origin and CORS, the preflight, `/health`, the protected resource metadata, the path, the
 * credential, the body, and a tool's own scopes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolErrorCode, validateHostHeader } from '@modelcontextprotocol/server';
import { readBody, sendJson } from '../../shared/http.js';
import { allowHeaders, MCP_REQUEST_HEADERS } from '../../shared/cors-headers.js';
import { ALLOWED_ORIGINS_ENV, allowedOrigin } from '../../shared/origins.js';
import { endpointOfMetadataPath, requestOrigin, type Admitted, type Guard, type Refused } from './auth.js';
import { HEALTH_PATH, MCP_PATH } from '../constants.js';
import type { RuntimeLogger } from './logger.js';
import { describeMessage, type RequestRecord } from './tracing.js';

/** What the checks read: the front's settings. */
export interface FrontSettings {
  allowedHosts: string[] | undefined;
  allowedOrigins: string[] | undefined;
  guard: Guard | undefined;
  maxBodyBytes: number;
  logger: RuntimeLogger;
  health(draining: boolean): unknown;
  isDraining(): boolean;
}

/** One request on its way through the checks; the credential and the body are filled in as they pass. */
export interface FrontRequest {
  req: IncomingMessage;
  res: ServerResponse;
  record: RequestRecord;
  path: string;
  admitted?: { guard: Guard; decision: Admitted; resource: string };
  body?: unknown;
}

/** A check answers the request (true: the front stops) or lets it through (false). */
export type FrontCheck = (settings: FrontSettings, request: FrontRequest) => boolean | Promise<boolean>;

export const checkHost: FrontCheck = ({ allowedHosts }, { req, res, record }) => {
  if (allowedHosts === undefined) return false;
  const host = validateHostHeader(req.headers.host, allowedHosts);
  if (host.ok) return false;
  rejectRequest(res, record, 403, `Forbidden: ${host.message}`);
  return true;
};

/**
 * A page of another origin (scheme, host and port) calls only when its origin is listed. A page of
 * the server's own origin may, once the Host check has admitted that host (a rebinding page's
 * origin names the attacker's host, which that check refuses).
 */
export const checkOrigin: FrontCheck = ({ allowedOrigins, allowedHosts }, { req, res, record }) => {
  const sentOrigin = req.headers.origin;
  if (typeof sentOrigin !== 'string' || sentOrigin === '') return false;
  const own = allowedHosts === undefined ? [] : [requestOrigin(req)];
  const origin = allowedOrigins === undefined ? sentOrigin : allowedOrigin(sentOrigin, [...allowedOrigins, ...own]);
  if (origin === undefined) {
    const message = `Forbidden: pages on ${sentOrigin} may not call this server; list the origin in ${ALLOWED_ORIGINS_ENV}`;
    rejectRequest(res, record, 403, message);
    return true;
  }
  setCorsHeaders(res, origin, req.headers['access-control-request-headers']);
  return false;
};

export const answerPreflight: FrontCheck = (_settings, { req, res }) => {
  if (req.method !== 'OPTIONS') return false;
  res.writeHead(204).end();
  return true;
};

export const answerHealth: FrontCheck = (settings, { req, res, path }) => {
  if (path !== HEALTH_PATH || !isRead(req)) return false;
  const draining = settings.isDraining();
  sendJson(res, draining ? 503 : 200, settings.health(draining));
  return true;
};

export const answerMetadata: FrontCheck = ({ guard }, { req, res, path }) => {
  const metadataOf = endpointOfMetadataPath(path);
  if (metadataOf === undefined || (metadataOf !== '' && metadataOf !== MCP_PATH) || !isRead(req)) return false;
  const document = guard?.metadata(`${requestOrigin(req)}${MCP_PATH}`);
  if (document === undefined)
    sendJson(res, 404, { error: 'this server does not use OAuth: it has no protected resource metadata' });
  else sendJson(res, 200, document, { headOnly: req.method === 'HEAD' });
  return true;
};

export const answerNotFound: FrontCheck = (_settings, { res, path }) => {
  if (path === MCP_PATH) return false;
  sendJson(res, 404, { error: `not found: ${path}; the MCP endpoint is ${MCP_PATH}, health is ${HEALTH_PATH}` });
  return true;
};

export const checkCredential: FrontCheck = async ({ guard }, request) => {
  if (guard === undefined) return false;
  const { req, res, record } = request;
  const resource = `${requestOrigin(req)}${MCP_PATH}`;
  const decision = await guard.check({ authorization: req.headers.authorization, resource });
  if (!decision.ok) {
    refuse(res, record, decision);
    return true;
  }
  request.admitted = { guard, decision, resource };
  // the identity is the token's, never one the client names
  if (decision.userId !== undefined) record.userId = decision.userId;
  return false;
};

export const readJsonBody: FrontCheck = async ({ maxBodyBytes, logger }, request) => {
  const { req, res, record } = request;
  if (req.method !== 'POST') return false;
  const raw = await readBody(req, maxBodyBytes);
  if (raw === 'gone') return true;
  if (raw === 'too large') {
    rejectRequest(res, record, 413, `Payload Too Large: the limit is ${maxBodyBytes} bytes`);
    return true;
  }
  try {
    request.body = JSON.parse(raw.toString('utf8'));
  } catch {
    record.error = 'parse error';
    sendJson(res, 400, {
      jsonrpc: '2.0',
      error: { code: ProtocolErrorCode.ParseError, message: 'Parse error: the body is not JSON' },
      id: null,
    });
    return true;
  }
  describeMessage(request.body, record, logger.debug);
  return false;
};

export const checkToolScopes: FrontCheck = (_settings, { res, record, admitted, body }) => {
  if (admitted === undefined) return false;
  for (const tool of toolsOf(body)) {
    const refused = admitted.guard.checkTool(admitted.decision, tool, admitted.resource);
    if (refused === undefined) continue;
    refuse(res, record, refused);
    return true;
  }
  return false;
};

/** The checks in the order a request meets them. */
export const FRONT_CHECKS: readonly FrontCheck[] = [
  checkHost,
  checkOrigin,
  answerPreflight,
  answerHealth,
  answerMetadata,
  answerNotFound,
  checkCredential,
  readJsonBody,
  checkToolScopes,
];

function isRead(req: IncomingMessage): boolean {
  return req.method === 'GET' || req.method === 'HEAD';
}

/** A refusal of the credential: its status, its `WWW-Authenticate`, a JSON-RPC error body. */
function refuse(res: ServerResponse, record: RequestRecord, refused: Refused): void {
  for (const [name, value] of Object.entries(refused.headers)) res.setHeader(name, value);
  rejectRequest(res, record, refused.status, refused.message);
}

/** The tools the `tools/call` messages of a body name (a batch may hold several). */
function toolsOf(body: unknown): string[] {
  const tools: string[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (message === null || typeof message !== 'object') continue;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } | null };
    if (method === 'tools/call' && typeof params?.name === 'string') tools.push(params.name);
  }
  return tools;
}

function rejectRequest(res: ServerResponse, record: RequestRecord, status: number, message: string): void {
  record.error = message;
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/** `x-mcp-user-id`: a page of a listed origin may name its user to a server reached directly */
const CORS_HEADERS = `authorization, content-type, accept, ${MCP_REQUEST_HEADERS}, x-mcp-user-id`;

function setCorsHeaders(res: ServerResponse, origin: string, requested?: string | string[]): void {
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('vary', 'Origin');
  res.setHeader('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
  res.setHeader('access-control-allow-headers', allowHeaders(CORS_HEADERS, requested));
  res.setHeader('access-control-expose-headers', 'mcp-protocol-version, mcp-session-id, www-authenticate');
}
