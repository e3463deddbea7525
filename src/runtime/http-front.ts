/**
 * The HTTP front of a runtime: everything a request passes before it reaches MCP. Host and
 * Origin checks (DNS rebinding), CORS, `/health`, the bearer token, the body (size limit, JSON),
 * and draining (503 once a stop has begun, and a count of requests in flight to wait for).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolErrorCode, validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import { readBody, sendJson } from '../shared/http.js';
import { HEALTH_PATH, MCP_PATH, USER_ID_HEADER } from './constants.js';
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

export interface HttpFrontOptions {
  allowedHosts: string[] | undefined;
  allowedOrigins: string[] | undefined;
  token: string | undefined;
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
  const tokenDigest = options.token === undefined ? undefined : sha256(options.token);
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
    if (allowedOrigins !== undefined) {
      const origin = validateOriginHeader(req.headers.origin, allowedOrigins);
      if (!origin.ok) return rejectRequest(res, record, 403, `Forbidden: ${origin.message}`);
      if (origin.origin !== undefined) setCorsHeaders(res, origin.origin);
    } else if (typeof req.headers.origin === 'string') setCorsHeaders(res, req.headers.origin);
    if (req.method === 'OPTIONS') {
      res.writeHead(204).end();
      return;
    }
    if (path === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      sendJson(res, draining ? 503 : 200, options.health(draining));
      return;
    }
    if (path !== MCP_PATH) return sendJson(res, 404, { error: `not found: ${path}; the MCP endpoint is ${MCP_PATH}, health is ${HEALTH_PATH}` });
    if (tokenDigest !== undefined) {
      const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
      if (given === undefined || !timingSafeEqual(sha256(given), tokenDigest)) {
        res.setHeader('www-authenticate', 'Bearer realm="mcp"');
        return rejectRequest(
          res,
          record,
          401,
          given === undefined ? 'Unauthorized: send Authorization: Bearer <token>' : 'Unauthorized: the bearer token is not valid',
        );
      }
    }
    let body: unknown;
    if (req.method === 'POST') {
      const raw = await readBody(req, maxBodyBytes);
      if (raw === 'gone') return;
      if (raw === 'too large') return rejectRequest(res, record, 413, `Payload Too Large: the limit is ${maxBodyBytes} bytes`);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        record.error = 'parse error';
        return sendJson(res, 400, { jsonrpc: '2.0', error: { code: ProtocolErrorCode.ParseError, message: 'Parse error: the body is not JSON' }, id: null });
      }
      describeMessage(body, record, logger.debug);
    }
    await tracer.requests.run(record, () => options.serve(req, res, body, draining));
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const startedAt = process.hrtime.bigint();
    const record: RequestRecord = {};
    const headerUser = req.headers[USER_ID_HEADER];
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
      logger.log({ level: 'error', event: 'internal_error', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      if (!res.headersSent) sendJson(res, 500, { jsonrpc: '2.0', error: { code: ProtocolErrorCode.InternalError, message: 'Internal error' }, id: null });
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
export function rejectDraining(res: ServerResponse, record: RequestRecord | undefined, message = 'Service Unavailable: the server is shutting down'): void {
  res.setHeader('connection', 'close');
  if (record !== undefined) record.error = message;
  sendJson(res, 503, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
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
  res.setHeader('access-control-allow-headers', 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, x-mcp-user-id');
  res.setHeader('access-control-expose-headers', 'mcp-protocol-version, mcp-session-id, www-authenticate');
}
