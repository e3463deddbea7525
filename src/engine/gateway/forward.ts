/**
 * One try of an MCP request on one instance: the request is dispatched on the engine's connection
 * to it, the answer piped to the client as it arrives (SSE included, with back-pressure) while a
 * bounded copy is kept to see whether a tool call failed. How the try ended decides what proxy.ts
 * does next: try another instance, look whether this one is still there, or nothing more.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { firstHeader } from '../../shared/http.js';
import { responseHeaders, upstreamHeaders } from './proxy-headers.js';
import { BROKEN_CONNECTION, NOT_SENDABLE, originOf, reusedConnection } from './instance-connections.js';
import { findCallFailure, type McpRequestInfo } from './mcp-messages.js';
import type { ProxyOptions } from './proxy.js';
import { refuse } from './rpc-errors.js';
import type { Attempt, Upstream } from './upstream.js';
import { withTraceContext, type RequestSpan } from '../observability/tracing.js';

/** How much of a response is kept to look for a tool error. */
const PEEK_BYTES = 1024 * 1024;
export const SESSION_HEADER = 'mcp-session-id';

/** The start of an answer, kept to describe it in the trace and to look for a tool error. */
export type Peek = { contentType?: string; text: string };
/** Counts one call's outcome (and traces it) once its answer is complete. */
export type RecordCall = (status: number, toolError: boolean | undefined, peek?: Peek) => void;

/**
 * 'retry' when nothing reached the instance; 'lost' when the connection of a session's request broke
 * before any answer (the caller looks whether the instance is still there); 'done' otherwise.
 */
export type TryOutcome = 'retry' | 'lost' | 'done';

export interface ForwardArgs {
  upstream: Upstream;
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  requestId: string;
  info: McpRequestInfo;
  record: RecordCall;
  options: ProxyOptions;
  /** the gateway's span: its context replaces the client's on the hop to the instance */
  span?: RequestSpan | undefined;
}

/** One try's state, from its dispatch to the end of the client's answer. */
interface Try extends ForwardArgs {
  attempt: Attempt;
  resolve: (outcome: TryOutcome) => void;
  /** the request was written on a connection (undici calls onRequestStart once connected) */
  started: boolean;
  settled: boolean;
  controller: Dispatcher.DispatchController | undefined;
  clientGone: boolean;
  status: number;
  contentType: string | undefined;
  answering: boolean;
  broke: boolean;
  wrote: boolean;
  /** a copy of the answer only when something reads it: a tool call's outcome, or the trace */
  keep: boolean;
  chunks: Buffer[];
  kept: number;
}

/** The reason an upstream request is aborted with when its client left (never shown to anyone). */
const CLIENT_WENT_AWAY = new Error('the client went away');

/** One try on one instance. */
export function forward(attempt: Attempt, args: ForwardArgs): Promise<TryOutcome> {
  return new Promise((resolve) => {
    const one: Try = {
      ...args,
      attempt,
      resolve,
      started: false,
      settled: false,
      controller: undefined,
      clientGone: false,
      status: 0,
      contentType: undefined,
      answering: false,
      broke: false,
      wrote: false,
      keep: args.info.method === 'tools/call' || args.upstream.traced,
      chunks: [],
      kept: 0,
    };
    const { req, res, body, requestId, options } = args;
    res.on('close', () => clientClosed(one));
    options.connections.dispatch(
      {
        origin: originOf(attempt.host, attempt.port),
        method: req.method ?? 'GET',
        path: `/mcp${options.search}`,
        headers: withTraceContext(upstreamHeaders(req, attempt.port, requestId, options.auth !== undefined), args.span),
        body: body.length > 0 || req.method === 'POST' ? body : null,
      },
      dispatchHandler(one),
      attempt.socketPath,
    );
  });
}

function settle(one: Try, outcome: TryOutcome, status?: number, toolError?: boolean, peek?: Peek): void {
  if (one.settled) return;
  one.settled = true;
  one.attempt.release();
  if (outcome === 'done' && status !== undefined) one.record(status, toolError, peek);
  one.resolve(outcome);
}

/** The client went away: recorded as such, and the instance's request is stopped too. */
function clientLeft(one: Try): void {
  one.clientGone = true;
  settle(one, 'done', 499, undefined);
  // after settle: undici may report the abort to the handler at once
  one.controller?.abort(CLIENT_WENT_AWAY);
}

function dispatchHandler(one: Try): Dispatcher.DispatchHandler {
  return {
    onRequestStart(request) {
      one.controller = request;
      one.started = true;
      // The client left while the request waited for a connection.
      if (one.clientGone) request.abort(CLIENT_WENT_AWAY);
    },
    onResponseStart: (_controller, statusCode, headers) => answerStarted(one, statusCode, headers),
    onResponseData: (request, chunk) => answerData(one, request, chunk),
    onResponseEnd() {
      if (!one.res.destroyed) one.res.end();
    },
    onResponseError: (_controller, error: Error & { code?: string }) => answerFailed(one, error),
  };
}

function answerStarted(one: Try, statusCode: number, headers: IncomingHttpHeaders): void {
  // 1xx: an interim answer (103 Early Hints); the final one follows.
  if (statusCode < 200 || one.settled) return;
  const { res } = one;
  one.answering = true;
  one.status = statusCode;
  one.contentType = firstHeader(headers['content-type']);
  one.attempt.answered(statusCode, firstHeader(headers[SESSION_HEADER]));
  const out = responseHeaders(headers);
  if (out['x-request-id'] === undefined) out['X-Request-Id'] = one.requestId;
  res.writeHead(statusCode, out);
  // The headers go out with the first piece of the body, in one write; an event stream whose
  // first event did not come in the same read sends them on their own, so the client sees the
  // stream open. The read's body parts are handed over before its microtasks run.
  if (one.contentType?.includes('text/event-stream') === true) {
    queueMicrotask(() => {
      if (!one.wrote && !res.destroyed) res.flushHeaders();
    });
  }
}

function answerData(one: Try, request: Dispatcher.DispatchController, chunk: Buffer): void {
  one.wrote = true;
  if (one.keep && one.kept + chunk.length <= PEEK_BYTES) {
    one.chunks.push(chunk);
    one.kept += chunk.length;
  }
  // Back-pressure: the instance's answer waits while the client's socket is full.
  if (!one.res.destroyed && !one.res.write(chunk)) {
    request.pause();
    one.res.once('drain', () => one.controller?.resume());
  }
}

function answerFailed(one: Try, error: Error & { code?: string }): void {
  const { attempt, res, requestId, info } = one;
  if (one.settled) return;
  if (one.answering) {
    // The answer broke off: the client's answer does too (res 'close' records it).
    one.broke = true;
    res.destroy();
    return;
  }
  // undici refused the request itself: nothing was sent, and another instance would refuse it too.
  if (!one.started && NOT_SENDABLE.has(error.code ?? '')) {
    refuse(res, requestId, 502, `the request could not be passed on: ${error.message}`, info.id);
    return settle(one, 'done', 502, true);
  }
  // The connection failed before anything was sent.
  if (!one.started) return settle(one, 'retry');
  // A pooled connection the instance had closed (it died, or it is stopping): the request
  // went nowhere useful. Repeat it elsewhere only if repeating cannot do harm.
  if (attempt.sticky || attempt.proxied === true) return settle(one, 'lost');
  if (BROKEN_CONNECTION.has(error.code ?? '') && reusedConnection(error) && one.upstream.safeToRepeat(info))
    return settle(one, 'retry');
  refuse(res, requestId, 502, `instance ${attempt.instance} closed the connection before answering`, info.id);
  settle(one, 'done', 502, true);
}

/** The client's answer closed: complete, broken off, or the client left before it was. */
function clientClosed(one: Try): void {
  if (one.settled) return;
  if (one.broke) return settle(one, 'done', 502, true);
  if (!one.answering || !one.res.writableFinished) return clientLeft(one);
  const { chunks, status, contentType, info } = one;
  const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
  const failed =
    info.method === 'tools/call'
      ? status >= 400 || (mayReportFailure(text) && findCallFailure(contentType, text, info.id) === true)
      : status >= 400;
  settle(one, 'done', status, failed, contentType === undefined ? { text } : { contentType, text });
}

/**
 * Whether an answer can hold a failure at all: a JSON-RPC error or `isError` names its key, unless
 * the key is written with escapes. Most answers do not, and are not parsed.
 */
function mayReportFailure(text: string): boolean {
  return text.includes('"error"') || text.includes('"isError"') || text.includes('\\u');
}
