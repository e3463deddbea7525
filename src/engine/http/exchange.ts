/**
 * One request to the engine and its answer, as the pipeline's steps (pipeline.ts) see it: what was
 * asked, what the steps found out so far, and the two ways it ends, an error envelope and a log line.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../../shared/http.js';
import { newId } from '../ids.js';
import type { Logger } from '../engine-log.js';
import { ServiceError, storageServiceError } from '../service-error.js';
import { ClientGoneError } from './body.js';
import { requestTimedOut } from './engine-server.js';
import type { IdempotencyClaim } from './idempotency.js';
import { errorBody, HttpError, statusOf, type EnvelopeBody } from './respond.js';
import type { Route } from './routes.js';

/** The status logged for a request whose client went away before it could be answered (nginx's 499). */
const CLIENT_GONE = 499;

export class Exchange {
  readonly requestId = newId('req');
  readonly started: number;
  readonly method: string;
  /** undefined when the request target is not a path (origin-form) */
  readonly path: string | undefined;
  /** under /v1, or not a path at all: answered by the API rather than the data plane */
  readonly api: boolean;
  /** aborts when the client goes away; made only for the API's requests */
  controller: AbortController | undefined;
  /** the digest of the request's API key, once authenticated */
  key = '';
  route: Route | undefined;
  params: Record<string, string> = {};
  /** the request body as received, for a POST */
  raw: Buffer | undefined;
  /** the body, validated against the route's schema */
  body: unknown;
  /** the idempotency record this request answers for, until its answer is stored */
  claim: IdempotencyClaim | undefined;
  /** The gateway's requests (most of the engine's traffic) need no logger of their own: made on first use. */
  private child: Logger | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    private readonly logger: Logger,
    private readonly clock: () => number,
  ) {
    this.started = clock();
    this.method = req.method ?? 'GET';
    this.path = pathOf(req.url);
    this.api = this.path === undefined || isApiPath(this.path);
    // The data plane sets it with the rest of its answer's headers (the gateway is given the id).
    if (this.api) res.setHeader('X-Request-Id', this.requestId);
  }

  log(): Logger {
    return (this.child ??= this.logger.child({ request_id: this.requestId }));
  }

  meta(): { request_id: string; timestamp: string } {
    return { request_id: this.requestId, timestamp: new Date(this.clock()).toISOString() };
  }

  send(status: number, body: Omit<EnvelopeBody, 'meta'>, headers: Record<string, string> = {}): void {
    sendJson(this.res, status, { ...body, meta: this.meta() }, { headers });
  }

  /** The request's line in the log, once it is answered. */
  logAnswered(): void {
    const status = this.res.statusCode;
    const fields = {
      method: this.method,
      path: this.path ?? '(invalid)',
      status,
      duration_ms: this.clock() - this.started,
    };
    if (status >= 500 && status !== 501 && status !== 503) this.log().warn('request failed', fields);
    // Health checks come every few seconds from clients: kept out of the info log.
    else if ((this.path === '/v1/health' || this.path === '/metrics') && status < 400)
      this.log().debug('request', fields);
    // the same line as the request's own logger writes, without making one
    else if (this.child === undefined) this.logger.info('request', { request_id: this.requestId, ...fields });
    else this.child.info('request', fields);
  }
}

/** Answers a step's error with its envelope, or drops a request whose client went away. */
export async function answerFailure(x: Exchange, error: unknown): Promise<void> {
  if (clientWentAway(x, error)) {
    dropRequest(x);
    return;
  }
  // a write the disk refused is the engine's problem, said as such (a full disk, a read-only one)
  const storage = error instanceof ServiceError ? undefined : storageServiceError(error);
  if (storage !== undefined) x.log().error('a write failed', { method: x.method, path: x.path, error });
  const known = error instanceof ServiceError ? error : storage;
  if (known === undefined) x.log().error('unexpected error', { method: x.method, path: x.path, error });
  const failure =
    known ?? new ServiceError('internal', `an unexpected error occurred; report it with the request id ${x.requestId}`);
  const status = statusOf(failure.code);
  const envelope = errorBody(failure, x.meta());
  await x.claim
    ?.finish({ status, body: { success: envelope.success, data: envelope.data, error: envelope.error } })
    .catch(() => {});
  x.claim = undefined;
  if (x.res.headersSent) {
    x.res.destroy();
  } else {
    if (!x.api) x.res.setHeader('X-Request-Id', x.requestId);
    sendJson(x.res, status, envelope, { headers: error instanceof HttpError ? error.headers : {} });
  }
  if (failure.code === 'payload_too_large') x.req.resume();
}

/**
 * A client that went away (an upload cut short, a request body too slow) is not a failure of the
 * engine: no answer can reach it, and the log says what happened.
 */
function clientWentAway(x: Exchange, error: unknown): boolean {
  return (
    error instanceof ClientGoneError || (x.controller?.signal.aborted === true && !(error instanceof ServiceError))
  );
}

function dropRequest(x: Exchange): void {
  const timedOut = requestTimedOut(x.req.socket);
  x.res.statusCode = timedOut ? statusOf('request_timeout') : CLIENT_GONE;
  x.log().info(timedOut ? 'the request did not arrive in time' : 'the client went away before the request was read', {
    method: x.method,
    path: x.path ?? '(invalid)',
  });
  x.res.destroy();
}

/** The path as sent (no dot-segment resolution, no host parsing of `//x`), or undefined when it is not origin-form. */
function pathOf(url: string | undefined): string | undefined {
  if (url === undefined || !url.startsWith('/')) return undefined;
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

function isApiPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/');
}
