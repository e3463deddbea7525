/**
 * The engine's HTTP server around its handler: bounded times to receive a request (a slow body is
 * cut after `requestTimeoutMs`, not Node's 300 s), and an envelope for what Node would answer bare
 * or not at all: requests its parser refuses, CONNECT, an `Expect` other than 100-continue.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { ErrorCode } from '../../api/contract.js';
import { sendJson } from '../../shared/http.js';
import { newId } from '../ids.js';
import { ServiceError } from '../service-error.js';
import { errorBody, statusOf } from './respond.js';

export interface HttpServerLimits {
  /** the whole request (headers and body) must arrive within this */
  requestTimeoutMs: number;
}

/** Sockets whose request did not arrive within the request time-out (answered 408 by answerClientError). */
const TIMED_OUT = new WeakSet<Duplex>();

/** Whether the request on this socket was cut by the request time-out. */
export function requestTimedOut(socket: Duplex): boolean {
  return TIMED_OUT.has(socket);
}

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
  server.on('checkExpectation', answerExpectation);
}

const HEADERS_TIMEOUT_MS = 20_000;

function answerExpectation(req: IncomingMessage, res: ServerResponse): void {
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
}

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
