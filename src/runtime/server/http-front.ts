/**
 * The HTTP front of a runtime: everything a request passes before it reaches MCP. Host and
 * Origin checks (DNS rebinding), CORS, `/health`, the credential (auth.ts) and the protected
 * resource metadata, the body (size limit, JSON), a tool's own scopes, and draining (503 once a
 * stop has begun, and a count of requests in flight to wait for).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolErrorCode, validateHostHeader } from '@modelcontextprotocol/server';
import { readBody, sendJson } from '../../shared/http.js';
import { ALLOWED_ORIGINS_ENV, allowedOrigin } from '../../shared/origins.js';
import { endpointOfMetadataPath, requestOrigin, type Admitted, type Guard, type Refused } from './auth.js';
import { HEALTH_PATH, MCP_PATH, USER_ID_HEADER } from '../constants.js';
import type { RuntimeLogger } from './logger.js';
import { describeMessage, type RequestRecord, type Tracer } from './tracing.js';

export interface HealthBody {
  status: 'ok' | 'draining';
  name: string;
  version: string;
  uptime_seconds: number;
  tools: number;
  resources: number;
  prompts: number;
  /** open sessions, for a server that keeps them */
  sessions?: number;
}

/** Serves one MCP request whose body (for a POST) is already read and parsed. */
export type McpServe = (req: IncomingMessage, res: ServerResponse, body: unknown, draining: boolean) => Promise<void>;

/**
 * The time-outs of a runtime's HTTP server (serve-bundle, dev): a request's headers must arrive
 * within 10 s and the whole request within 30 s, checked every second, so a client that sends a
 * byte now and then (slowloris) cannot hold sockets; idle keep-alive connections close after 65 s
 * (longer than the gateway keeps its own idle connections, so it never reuses one being closed).
 * An answer that streams (an SSE stream) is not limited: only receiving the request is.
 */
export const RUNTIME_SERVER_OPTIONS = {
  requestTimeout: 30_000,
  headersTimeout: 10_000,
  keepAliveTimeout: 65_000,
  connectionsCheckingInterval: 1_000,
} as const;

export interface HttpFrontOptions {
  allowedHosts: string[] | undefined;
  /** the exact origins (`http://localhost:6274`) whose pages may call across origins; undefined: any */
  allowedOrigins: string[] | undefined;
  /** who may call: absent when anyone may */
  guard: Guard | undefined;
  maxBodyBytes: number;
  logger: RuntimeLogger;
  tracer: Tracer;
  health(draining: boolean): HealthBody;
  serve: McpServe;
}

export interface HttpFront {
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly inFlight: number;
  readonly draining: boolean;
  /** refuses new work (503) and resolves true once in-flight requests are done, false at the time-out */
  drain(timeoutMs: number): Promise<boolean>;
}

export function createHttpFront(options: HttpFrontOptions): HttpFront {
  const { allowedHosts, allowedOrigins, maxBodyBytes, logger, tracer } = options;
  const guard = options.guard;
  let inFlight = 0;
  let draining = false;
  const idleWaiters = new Set<() => void>();
  const done = (): void => {
    inFlight -= 1;
    if (inFlight === 0) for (const wake of idleWaiters) wake();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, record: RequestRecord): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (allowedHosts !== undefined) {
      const host = validateHostHeader(req.headers.host, allowedHosts);
      if (!host.ok) return rejectRequest(res, record, 403, `Forbidden: ${host.message}`);
    }
    const sentOrigin = req.headers.origin;
    if (typeof sentOrigin === 'string' && sentOrigin !== '') {
      // a page of another origin (scheme, host and port) calls only when its origin is listed
      const origin = allowedOrigins === undefined ? sentOrigin : allowedOrigin(sentOrigin, allowedOrigins);
      if (origin === undefined) {
        return rejectRequest(
          res,
          record,
          403,
          `Forbidden: pages on ${sentOrigin} may not call this server; list the origin in ${ALLOWED_ORIGINS_ENV}`,
        );
      }
      setCorsHeaders(res, origin);
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (path === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      sendJson(res, draining ? 503 : 200, options.health(draining));
      return;
    }
    const metadataOf = endpointOfMetadataPath(path ?? '/');
    if (
      metadataOf !== undefined &&
      (metadataOf === '' || metadataOf === MCP_PATH) &&
      (req.method === 'GET' || req.method === 'HEAD')
    ) {
      const document = guard?.metadata(`${requestOrigin(req)}${MCP_PATH}`);
      if (document === undefined)
        return sendJson(res, 404, { error: 'this server does not use OAuth: it has no protected resource metadata' });
      return sendJson(res, 200, document, { headOnly: req.method === 'HEAD' });
    }
    if (path !== MCP_PATH)
      return sendJson(res, 404, {
        error: `not found: ${path}; the MCP endpoint is ${MCP_PATH}, health is ${HEALTH_PATH}`,
      });
    let admitted: { guard: Guard; decision: Admitted; resource: string } | undefined;
    if (guard !== undefined) {
      const resource = `${requestOrigin(req)}${MCP_PATH}`;
      const decision = await guard.check({ authorization: req.headers.authorization, resource });
      if (!decision.ok) return refuse(res, record, decision);
      admitted = { guard, decision, resource };
      // the identity is the token's, never one the client names
      if (decision.userId !== undefined) record.userId = decision.userId;
    }
    let body: unknown;
    if (req.method === 'POST') {
      const raw = await readBody(req, maxBodyBytes);
      if (raw === 'gone') return;
      if (raw === 'too large')
        return rejectRequest(res, record, 413, `Payload Too Large: the limit is ${maxBodyBytes} bytes`);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        record.error = 'parse error';
        return sendJson(res, 400, {
          jsonrpc: '2.0',
          error: { code: ProtocolErrorCode.ParseError, message: 'Parse error: the body is not JSON' },
          id: null,
        });
      }
      describeMessage(body, record, logger.debug);
      for (const tool of admitted === undefined ? [] : toolsOf(body)) {
        const refused = admitted!.guard.checkTool(admitted!.decision, tool, admitted!.resource);
        if (refused !== undefined) return refuse(res, record, refused);
      }
    }
    await tracer.requests.run(record, () => options.serve(req, res, body, draining));
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const startedAt = process.hrtime.bigint();
    const record: RequestRecord = {};
    record.authenticated = guard !== undefined;
    const headerUser = guard === undefined ? req.headers[USER_ID_HEADER] : undefined;
    if (typeof headerUser === 'string' && headerUser !== '') record.userId = headerUser;
    inFlight += 1;
    res.once('close', () => {
      done();
      // A health check that passed is not news: an orchestrator asks every few seconds, and the
      // line would cost this process and whatever reads its log more than the check itself.
      if (res.statusCode < 400 && !logger.debug && isHealthCheck(req)) return;
      tracer.logRequest(req, res, record, startedAt);
    });
    handle(req, res, record).catch((error: unknown) => {
      logger.log({
        level: 'error',
        event: 'internal_error',
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      if (!res.headersSent)
        sendJson(res, 500, {
          jsonrpc: '2.0',
          error: { code: ProtocolErrorCode.InternalError, message: 'Internal error' },
          id: null,
        });
      else res.destroy();
    });
  };

  return {
    handler,
    get inFlight() {
      return inFlight;
    },
    get draining() {
      return draining;
    },
    drain(timeoutMs) {
      draining = true;
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const finish = (drained: boolean): void => {
          clearTimeout(timer);
          idleWaiters.delete(wake);
          resolve(drained);
        };
        const wake = (): void => finish(true);
        const timer = setTimeout(() => finish(false), timeoutMs);
        idleWaiters.add(wake);
      });
    },
  };
}

/** The answer to a request the runtime refuses while it stops. */
export function rejectDraining(
  res: ServerResponse,
  record: RequestRecord | undefined,
  message = 'Service Unavailable: the server is shutting down',
): void {
  res.setHeader('connection', 'close');
  if (record !== undefined) record.error = message;
  sendJson(res, 503, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
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

function isHealthCheck(req: IncomingMessage): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && (req.url ?? '/').split('?')[0] === HEALTH_PATH;
}

function rejectRequest(res: ServerResponse, record: RequestRecord, status: number, message: string): void {
  record.error = message;
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

function setCorsHeaders(res: ServerResponse, origin: string): void {
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('vary', 'Origin');
  res.setHeader('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
  res.setHeader(
    'access-control-allow-headers',
    'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, x-mcp-user-id',
  );
  res.setHeader('access-control-expose-headers', 'mcp-protocol-version, mcp-session-id, www-authenticate');
}
