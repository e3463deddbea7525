/**
 * The HTTP front of a runtime: everything a request passes before it reaches MCP. Host and
 * Origin checks (DNS rebinding), CORS, `/health`, the credential (auth.ts) and the protected
 * resource metadata, the body (size limit, JSON), a tool's own scopes (each a check in
 * front-checks.ts), and draining (503 once a stop has begun, and a count of requests in flight
 * to wait for).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { sendJson } from '../../shared/http.js';
import type { Guard } from './auth.js';
import { HEALTH_PATH, USER_ID_HEADER } from '../constants.js';
import { FRONT_CHECKS, type FrontRequest, type FrontSettings } from './front-checks.js';
import type { RuntimeLogger } from './logger.js';
import type { FinishedRequest } from './metrics.js';
import type { RequestRecord, Tracer } from './tracing.js';

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

/** Serves one MCP request whose body (for a POST) is already read and parsed; `record` is its log line's. */
export type McpServe = (
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  record: RequestRecord,
  draining: boolean,
) => Promise<void>;

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
  /** told of every request but health checks, once its response is closed */
  observe?: ((request: FinishedRequest) => void) | undefined;
}

export interface HttpFront {
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly inFlight: number;
  readonly draining: boolean;
  /** refuses new work (503) and resolves true once in-flight requests are done, false at the time-out */
  drain(timeoutMs: number): Promise<boolean>;
}

export function createHttpFront(options: HttpFrontOptions): HttpFront {
  const { logger, tracer, guard } = options;
  const inFlight = createInFlightCounter();
  let draining = false;
  const settings: FrontSettings = { ...options, isDraining: () => draining };

  const handle = async (req: IncomingMessage, res: ServerResponse, record: RequestRecord): Promise<void> => {
    const request: FrontRequest = { req, res, record, path: (req.url ?? '/').split('?')[0] ?? '/' };
    for (const check of FRONT_CHECKS) if (await check(settings, request)) return;
    await options.serve(req, res, request.body, record, draining);
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const startedAt = process.hrtime.bigint();
    const record = recordOf(req, guard);
    tracer.startSpan(req, record);
    inFlight.start();
    res.once('close', () => {
      inFlight.done();
      const healthCheck = isHealthCheck(req);
      if (!healthCheck && options.observe !== undefined) options.observe(finishedOf(req, res, record, startedAt));
      // A health check that passed is not news: an orchestrator asks every few seconds, and the
      // line would cost this process and whatever reads its log more than the check itself.
      if (res.statusCode < 400 && !logger.debug && healthCheck) return;
      tracer.logRequest(req, res, record, startedAt);
    });
    handle(req, res, record).catch((error: unknown) => answerInternalError(res, logger, error));
  };

  return {
    handler,
    get inFlight() {
      return inFlight.count;
    },
    get draining() {
      return draining;
    },
    drain(timeoutMs) {
      draining = true;
      return inFlight.idle(timeoutMs);
    },
  };
}

/** What the metrics see of a request once its response is closed. */
function finishedOf(
  req: IncomingMessage,
  res: ServerResponse,
  record: RequestRecord,
  startedAt: bigint,
): FinishedRequest {
  return {
    rpc: record.rpc,
    tool: record.rpc === 'tools/call' ? record.target : undefined,
    toolError: record.isError === true,
    status: res.statusCode,
    // a session's event stream (GET) ends when its client goes: that is how it ends, not a failure
    clientGone: !res.writableFinished && req.method === 'POST',
    seconds: Number(process.hrtime.bigint() - startedAt) / 1e9,
  };
}

/** The record of a request: without a guard, the user id it names in the X-MCP-User-Id header. */
function recordOf(req: IncomingMessage, guard: Guard | undefined): RequestRecord {
  const record: RequestRecord = { authenticated: guard !== undefined };
  const headerUser = guard === undefined ? req.headers[USER_ID_HEADER] : undefined;
  if (typeof headerUser === 'string' && headerUser !== '') record.userId = headerUser;
  return record;
}

function answerInternalError(res: ServerResponse, logger: RuntimeLogger, error: unknown): void {
  logger.log({
    level: 'error',
    event: 'internal_error',
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, 500, {
    jsonrpc: '2.0',
    error: { code: ProtocolErrorCode.InternalError, message: 'Internal error' },
    id: null,
  });
}

/** Requests being served, and a wait for none to be. */
function createInFlightCounter() {
  let count = 0;
  const idleWaiters = new Set<() => void>();
  return {
    get count() {
      return count;
    },
    start(): void {
      count += 1;
    },
    done(): void {
      count -= 1;
      if (count === 0) for (const wake of idleWaiters) wake();
    },
    /** resolves true once no request is in flight, false at the time-out */
    idle(timeoutMs: number): Promise<boolean> {
      if (count === 0) return Promise.resolve(true);
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

function isHealthCheck(req: IncomingMessage): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && (req.url ?? '/').split('?')[0] === HEALTH_PATH;
}
