/**
 * The engine's HTTP layer: a Node `(req, res)` handler built from its services. Every /v1 answer
 * goes through one pipeline: request id → auth → rate limit → route → body (media type, size,
 * JSON, contract) → idempotency → the operation → envelope. Anything not under /v1 is the data
 * plane and goes to the deployment service first.
 *
 * No framework: the routes are few, and owning the pipeline keeps every error on the documented
 * code and status (docs/api.md) without adapting a framework's own error answers.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { z } from 'zod';
import type { Admission } from '../admission.js';
import type { IsolationReport } from '../isolation.js';
import type { WarmPoolStats } from '../runners/process/warm-pool.js';
import { DEFAULT_LIMITS, type EngineLimits } from '../engine-limits.js';
import { newId } from '../ids.js';
import { apiOriginProblem } from './cors.js';
import { ClientGoneError, hasBody, isJsonMediaType, parseJsonBody, readBody } from './body.js';
import { createHostPolicy, hostNameOf, type HostPolicy } from './hosts.js';
import { Idempotency, type IdempotencyClaim } from './idempotency.js';
import { FailureLimiter } from './failure-limit.js';
import { RateLimiter } from './rate-limit.js';
import type { ErrorCode } from '../../api/contract.js';
import { errorBody, HttpError, statusOf, type EnvelopeBody, type Reply } from './respond.js';
import { validateBody } from './zod-details.js';
import { firstHeader, sendJson } from '../../shared/http.js';
import { createRoutes, type Route, type RouteContext } from './routes.js';
import type { BuildService, DeploymentService, TestService } from '../services.js';
import type { Logger } from '../engine-log.js';
import type { Store } from '../store/store.js';
import { ServiceError } from '../service-error.js';

export interface AppOptions {
  store: Store;
  builds: BuildService;
  /** absent until deployments are available: the deploy routes then answer 501 */
  deployments?: DeploymentService | undefined;
  /** absent until the test agent is available: POST /v1/test then answers 501 */
  tests?: TestService | undefined;
  /** the engine's queues, shown by /v1/health */
  admission?: Admission | undefined;
  /** the warm runtime processes, shown by /v1/health */
  warmPool?: { stats(): WarmPoolStats } | undefined;
  /** what runtime processes run under, shown by /v1/health */
  isolation?: IsolationReport | undefined;
  /** the Host names answered (DNS-rebinding protection); default: the loopback names */
  hosts?: HostPolicy;
  /** the engine's public URL: pages of its origin may call the API */
  publicUrl?: string | undefined;
  apiKey: string;
  version: string;
  logger: Logger;
  limits?: Partial<EngineLimits>;
  /** milliseconds since the epoch */
  clock?: () => number;
}

export interface App {
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** While draining (the engine is stopping) every /v1 request is `503 unavailable`. */
  setDraining(draining: boolean): void;
}

const NO_BODY = z.strictObject({});

export function createApp(options: AppOptions): App {
  const clock = options.clock ?? Date.now;
  const limits: EngineLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const logger = options.logger;
  const keyDigest = digest(options.apiKey);
  const limiter = new RateLimiter(limits.rateCapacity, limits.ratePerSecond, clock);
  const failures = new FailureLimiter({ maxFailures: limits.authFailures }, clock);
  const idempotency = new Idempotency(options.store);
  const hosts = options.hosts ?? createHostPolicy({ bindHost: '127.0.0.1' });
  const startedAt = clock();
  let draining = false;
  const router = createRoutes({
    store: options.store,
    builds: options.builds,
    deployments: options.deployments,
    tests: options.tests,
    admission: options.admission,
    warmPool: options.warmPool,
    isolation: options.isolation,
    version: options.version,
    limits,
    clock,
    startedAt,
    isDraining: () => draining,
  });

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const requestId = newId('req');
    const started = clock();
    const method = req.method ?? 'GET';
    const path = pathOf(req.url);
    // The gateway's requests (most of the engine's traffic) need neither a logger of their own
    // nor an abort signal: both are made only for the API's.
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ request_id: requestId }));
    // The data plane sets it with the rest of its answer's headers (the gateway is given the id).
    const api = path === undefined || isApiPath(path);
    if (api) res.setHeader('X-Request-Id', requestId);
    const meta = () => ({ request_id: requestId, timestamp: new Date(clock()).toISOString() });
    let controller: AbortController | undefined;
    const send = (status: number, body: Omit<EnvelopeBody, 'meta'>, headers: Record<string, string> = {}) => {
      sendJson(res, status, { ...body, meta: meta() }, { headers });
    };

    let claim: IdempotencyClaim | undefined;
    try {
      if (path === undefined) throw new HttpError('bad_request', 'the request target is not a valid path');
      const host = header(req, 'host');
      if (!hosts.allows(host) && options.deployments?.servesDomain?.(hostNameOf(host ?? '')) !== true) {
        throw new HttpError(
          'forbidden',
          `this engine does not answer to the host name ${JSON.stringify(host)}; use its address, or add the name to MCPCTL_ALLOWED_HOSTS where the engine runs`,
        );
      }
      if (!api) {
        if (options.deployments !== undefined && (await options.deployments.handleGateway(req, res, requestId))) return;
        throw new ServiceError('not_found', `nothing is served at ${path}; the API is under /v1`);
      }
      // a page of another origin is refused even with the right key (cors.ts)
      const foreignPage = apiOriginProblem(req, options.publicUrl);
      if (foreignPage !== undefined) throw new HttpError('forbidden', foreignPage);
      const aborts = (controller = new AbortController());
      res.once('close', () => {
        if (!res.writableFinished) aborts.abort(new Error('the client went away'));
      });
      if (draining)
        throw new HttpError('unavailable', 'the engine is stopping; retry in a moment', { 'Retry-After': '1' });
      const key = authenticateLimited(req, keyDigest, failures);
      const decision = limiter.take(key);
      if (!decision.allowed) {
        throw new HttpError('rate_limited', `too many requests; retry in ${decision.retryAfter} s`, {
          'Retry-After': String(decision.retryAfter),
        });
      }
      const found = router.lookup(method, path);
      if (found.kind === 'not_found') throw new ServiceError('not_found', `no such endpoint: ${method} ${path}`);
      if (found.kind === 'method_not_allowed') {
        throw new HttpError(
          'method_not_allowed',
          `${method} is not allowed on ${path}; use ${found.allow.join(' or ')}`,
          { Allow: found.allow.join(', ') },
        );
      }
      const { route, params } = found.match;
      const query = queryOf(req.url);

      let body: unknown;
      if (method === 'POST') {
        if (hasBody(req) && !isJsonMediaType(req.headers['content-type'])) {
          throw new HttpError(
            'unsupported_media_type',
            'a request body must be JSON, sent with Content-Type: application/json',
          );
        }
        const raw = await readBody(req, limits.bodyBytes);
        const idempotencyKey = header(req, 'idempotency-key');
        if (route.idempotent === true && idempotencyKey !== undefined) {
          const outcome = await idempotency.begin(idempotencyKey, `${key}\n${method} ${path}`, raw, {
            signal: aborts.signal,
            onWait: () =>
              log().info('waiting for the earlier request with this Idempotency-Key, to replay its answer', {
                method,
                path,
              }),
          });
          if ('replay' in outcome) {
            const stored = outcome.replay.body as Omit<EnvelopeBody, 'meta'>;
            send(outcome.replay.status, stored, { 'Idempotent-Replayed': 'true' });
            return;
          }
          claim = outcome.claim;
        }
        body = parseBody(route, raw);
      } else {
        req.resume();
      }

      const context: RouteContext = { req, res, requestId, params, query, body, signal: aborts.signal, log: log() };
      const reply = await route.handle(context);
      if (reply === 'streamed') return;
      const envelope = { success: reply.status < 400, data: reply.data };
      await claim?.finish({ status: reply.status, body: envelope });
      claim = undefined;
      send(reply.status, envelope, reply.headers);
    } catch (error) {
      // A client that went away (an upload cut short, a request body too slow) is not a failure
      // of the engine: no answer can reach it, and the log says what happened.
      if (
        error instanceof ClientGoneError ||
        (controller?.signal.aborted === true && !(error instanceof ServiceError))
      ) {
        const timedOut = TIMED_OUT.has(req.socket);
        res.statusCode = timedOut ? statusOf('request_timeout') : CLIENT_GONE;
        log().info(
          timedOut ? 'the request did not arrive in time' : 'the client went away before the request was read',
          { method, path: path ?? '(invalid)' },
        );
        res.destroy();
        return;
      }
      const known = error instanceof ServiceError ? error : undefined;
      if (known === undefined) {
        log().error('unexpected error', { method, path, error });
      }
      const failure =
        known ??
        new ServiceError('internal', `an unexpected error occurred; report it with the request id ${requestId}`);
      const status = statusOf(failure.code);
      const envelope = errorBody(failure, meta());
      await claim
        ?.finish({ status, body: { success: envelope.success, data: envelope.data, error: envelope.error } })
        .catch(() => {});
      claim = undefined;
      if (res.headersSent) {
        res.destroy();
      } else {
        if (!api) res.setHeader('X-Request-Id', requestId);
        sendJson(res, status, envelope, { headers: error instanceof HttpError ? error.headers : {} });
      }
      if (failure.code === 'payload_too_large') req.resume();
    } finally {
      await claim?.finish(undefined);
      const status = res.statusCode;
      const fields = { method, path: path ?? '(invalid)', status, duration_ms: clock() - started };
      if (status >= 500 && status !== 501 && status !== 503) log().warn('request failed', fields);
      // Health checks come every few seconds from clients: kept out of the info log.
      else if (path === '/v1/health' && status < 400) log().debug('request', fields);
      // the same line as the request's own logger writes, without making one
      else if (child === undefined) logger.info('request', { request_id: requestId, ...fields });
      else child.info('request', fields);
    }
  };

  return Object.assign(handler, {
    setDraining(value: boolean) {
      draining = value;
    },
  });
}

/** The status logged for a request whose client went away before it could be answered (nginx's 499). */
const CLIENT_GONE = 499;

/** Sockets whose request did not arrive within the request time-out (answered 408 by answerClientError). */
const TIMED_OUT = new WeakSet<Duplex>();

export interface HttpServerLimits {
  /** the whole request (headers and body) must arrive within this */
  requestTimeoutMs: number;
}

/**
 * The engine's HTTP server around `handler`: bounded times to receive a request (a slow body is
 * cut after `requestTimeoutMs`, not Node's 300 s), and an envelope for what Node would answer
 * bare or not at all: requests its parser refuses, CONNECT, an `Expect` other than 100-continue.
 */
export function createEngineServer(
  handler: (req: IncomingMessage, res: ServerResponse) => unknown,
  limits: HttpServerLimits,
): Server {
  const server = createServer(engineServerOptions(limits), (req, res) => void handler(req, res));
  wireEngineServer(server);
  return server;
}

/** The time-outs of the engine's servers (HTTP, and HTTPS: src/engine/http/tls.ts). */
export function engineServerOptions(limits: HttpServerLimits): {
  requestTimeout: number;
  headersTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: Math.min(HEADERS_TIMEOUT_MS, limits.requestTimeoutMs),
    // how often the time-outs are checked (Node's default, 30 s, would let a request run 30 s over)
    connectionsCheckingInterval: Math.min(1_000, limits.requestTimeoutMs),
  };
}

/** The answers the engine's servers give outside the handler: malformed requests, CONNECT, Expect. */
export function wireEngineServer(server: Server | HttpsServer): void {
  server.on('clientError', answerClientError);
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    answerRaw(socket, 405, 'method_not_allowed', 'CONNECT is not supported: this service is not a proxy', {
      Allow: 'GET, HEAD, POST, DELETE',
    });
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const requestId = newId('req');
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Connection', 'close');
    const failure = new ServiceError(
      'expectation_failed',
      `the expectation ${JSON.stringify(req.headers.expect ?? '')} is not supported; only 100-continue is`,
    );
    sendJson(
      res,
      statusOf('expectation_failed'),
      errorBody(failure, { request_id: requestId, timestamp: new Date().toISOString() }),
    );
    req.resume();
  });
}

const HEADERS_TIMEOUT_MS = 20_000;

/**
 * For the server's `clientError` event: a request Node's HTTP parser refused (a malformed request
 * line or header, headers too large, a bad chunk) still gets the envelope, as a 400 bad_request;
 * one that did not arrive within the request time-out gets 408 request_timeout.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    TIMED_OUT.add(socket);
    answerRaw(socket, 408, 'request_timeout', 'the request did not arrive in time; send it again');
    return;
  }
  const message =
    error.code === 'HPE_HEADER_OVERFLOW' ? 'the request headers are too large' : 'the request is not valid HTTP';
  answerRaw(socket, 400, 'bad_request', message);
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed', 408: 'Request Timeout' };

/** Writes an enveloped error straight to a socket no response object owns, and closes it. */
function answerRaw(
  socket: Duplex,
  status: number,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = newId('req');
  const body = JSON.stringify({
    success: false,
    data: null,
    meta: { request_id: requestId, timestamp: new Date().toISOString() },
    error: { code, message },
  });
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}

function parseBody(route: Route, raw: Buffer): unknown {
  if (route.body === undefined) {
    if (raw.length === 0) return undefined;
    validateBody(NO_BODY, parseJsonBody(raw));
    return undefined;
  }
  const value = validateBody(route.body, parseJsonBody(raw));
  const problems = route.check?.(value as never) ?? [];
  if (problems.length > 0)
    throw new HttpError('validation_failed', 'the request is over a limit of this service', {}, problems);
  return value;
}

/** The API key of the request, or 401. Compared as SHA-256 digests so the comparison takes the same time for any input. */
function authenticate(req: IncomingMessage, expected: Buffer): string {
  const value = header(req, 'authorization');
  const match = value === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(value);
  const unauthorized = (message: string) =>
    new HttpError('unauthorized', message, { 'WWW-Authenticate': 'Bearer realm="mcpctl"' });
  if (match === null) throw unauthorized('this request needs an API key: send Authorization: Bearer <key>');
  const given = digest(match[1]!);
  if (!timingSafeEqual(given, expected)) throw unauthorized('the API key is not valid for this service');
  return given.toString('hex');
}

/**
 * `authenticate`, refused with 429 for an address that sent too many wrong keys: while it is
 * blocked even the right key is refused, so guessing learns nothing until the block ends.
 */
function authenticateLimited(req: IncomingMessage, expected: Buffer, failures: FailureLimiter): string {
  const address = req.socket.remoteAddress;
  const blocked = (seconds: number) =>
    new HttpError('rate_limited', `too many requests with a wrong API key from this address; retry in ${seconds} s`, {
      'Retry-After': String(seconds),
    });
  const waiting = failures.blockedFor(address);
  if (waiting > 0) throw blocked(waiting);
  try {
    return authenticate(req, expected);
  } catch (error) {
    // only a key that was sent and is wrong counts: a request without one is a client not yet configured
    if (error instanceof HttpError && header(req, 'authorization') !== undefined) {
      const seconds = failures.fail(address);
      if (seconds > 0) throw blocked(seconds);
    }
    throw error;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function header(req: IncomingMessage, name: string): string | undefined {
  return firstHeader(req.headers[name]);
}

/** The path as sent (no dot-segment resolution, no host parsing of `//x`), or undefined when it is not origin-form. */
function pathOf(url: string | undefined): string | undefined {
  if (url === undefined || !url.startsWith('/')) return undefined;
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

function queryOf(url: string | undefined): URLSearchParams {
  const raw = url ?? '';
  const start = raw.indexOf('?');
  if (start === -1) return new URLSearchParams();
  const end = raw.indexOf('#', start);
  return new URLSearchParams(raw.slice(start + 1, end === -1 ? undefined : end));
}

function isApiPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/');
}

export type { Reply };
