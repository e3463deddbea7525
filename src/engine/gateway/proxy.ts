/**
 * Passing one MCP request to an instance of a deployment. A request of a session goes to the
 * instance that holds the session (Mcp-Session-Id); any other to the healthy instance with the
 * fewest requests in flight. A request is tried on another instance when the connection to the
 * first failed before anything was sent, or (for requests that are safe to repeat) when a pooled
 * connection turned out to be dead; never for a session, whose state lives on one instance.
 * Responses are piped through as they arrive (SSE included) while a bounded copy is kept to see
 * whether a tool call failed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Admitted, Guard } from '../../runtime/server/auth.js';
import { USER_ID_META_KEY } from '../../runtime/constants.js';
import { firstHeader, sendJson } from '../../shared/http.js';
import type { BodyBudget } from './body-budget.js';
import { responseHeaders, upstreamHeaders } from './proxy-headers.js';
import { sourceKey } from '../http/failure-limit.js';
import {
  BROKEN_CONNECTION,
  NOT_SENDABLE,
  originOf,
  reusedConnection,
  type InstanceConnections,
} from './instance-connections.js';
import type { DeploymentLimits } from '../deployments/limits.js';
import {
  findCallFailure,
  inspectRequest,
  loggableAsIs,
  redactForLog,
  withoutMetaIdentity,
  type McpRequestInfo,
} from './mcp-messages.js';
import type { Attempt, CallOutcome, PickRequest, Upstream } from './upstream.js';

export interface ProxyOptions {
  search: string;
  /** the request's id: sent to the instance, and on every answer */
  requestId: string;
  /** the engine's connections to instances (instance-connections.ts) */
  connections: InstanceConnections;
  limits: DeploymentLimits;
  clock: () => number;
  /** the bytes of request bodies the gateway may hold at once, shared by every request */
  budget: BodyBudget;
  /** the deployment checks credentials: the gateway admitted this request (gateway.ts) */
  auth?: { guard: Guard; admitted: Admitted; resource: string } | undefined;
}

/** How much of a response is kept to look for a tool error. */
const PEEK_BYTES = 1024 * 1024;
const SESSION_HEADER = 'mcp-session-id';

type Peek = { contentType?: string; text: string };
type Record = (status: number, toolError: boolean | undefined, peek?: Peek) => void;

export async function proxyMcp(
  upstream: Upstream,
  req: IncomingMessage,
  res: ServerResponse,
  options: ProxyOptions,
): Promise<void> {
  const read = await options.budget.read(req, options.limits.maxBodyBytes, sourceKey(req.socket.remoteAddress));
  if (read === 'too large') {
    refuse(res, options.requestId, 413, `the request body is over ${options.limits.maxBodyBytes} bytes`);
    return;
  }
  if (read === 'busy') {
    // the engine holds as many request bodies as it may: a moment later there is room again
    refuse(res, options.requestId, 503, 'the gateway is busy receiving other requests; retry in a moment', null, {
      'retry-after': '1',
      connection: 'close',
    });
    return;
  }
  try {
    await proxyRead(upstream, req, res, options, read);
  } finally {
    if (typeof read !== 'string') read.release();
  }
}

async function proxyRead(
  upstream: Upstream,
  req: IncomingMessage,
  res: ServerResponse,
  options: ProxyOptions,
  read: { body: Buffer } | 'gone',
): Promise<void> {
  const started = options.clock();
  const startedAt = performance.now();
  const requestId = options.requestId;
  const traced = upstream.traced;
  const session = firstHeader(req.headers[SESSION_HEADER]);
  const body = read === 'gone' ? read : read.body;
  // The client went away before its request arrived: nothing to send, nothing to count
  // (499 is what the engine's log line says).
  if (body === 'gone') {
    res.statusCode = 499;
    return;
  }
  let text = body.toString('utf8');
  const info = inspectRequest(text);
  let sent = body;
  if (options.auth !== undefined) {
    const refused =
      info.tool === undefined
        ? undefined
        : options.auth.guard.checkTool(options.auth.admitted, info.tool, options.auth.resource);
    if (refused !== undefined) {
      refuse(res, requestId, refused.status, refused.message, info.id, refused.headers);
      return;
    }
    // An identity the client names is not passed on: the instance takes it from the token alone.
    if (text.includes(USER_ID_META_KEY)) {
      text = withoutMetaIdentity(text);
      sent = Buffer.from(text, 'utf8');
    }
  }
  if (traced) {
    // A body with nothing to hide or cut (most are) is shown without copying its arguments first.
    const args =
      info.arguments === undefined
        ? ''
        : ` ${JSON.stringify(loggableAsIs(text) ? info.arguments : redactForLog(info.arguments))}`;
    upstream.log(
      'debug',
      `→ ${req.method} ${info.method ?? '(not JSON-RPC)'}${info.tool === undefined ? '' : ` ${info.tool}`}${args}`,
      {
        request_id: requestId,
      },
    );
  }
  const record: Record = (status, toolError, peek) => {
    const latencyMs = performance.now() - startedAt;
    const call: CallOutcome = { at: started, latencyMs, status, method: info.method, tool: info.tool };
    if (info.method === 'tools/call') call.toolError = toolError ?? status >= 400;
    upstream.report(call);
    if (traced) {
      const outcome = toolError === true ? 'failed' : 'ok';
      const result = peek === undefined ? '' : ` ${describeResult(peek.contentType, peek.text)}`;
      upstream.log('debug', `← ${status} ${outcome} in ${latencyMs.toFixed(1)} ms${result}`, { request_id: requestId });
    }
  };
  const request: PickRequest = { client: sourceKey(req.socket.remoteAddress) };
  if (session !== undefined) request.session = session;
  if (req.method !== undefined) request.method = req.method;
  if (session === undefined && info.method === 'initialize') request.opens = true;
  if (session !== undefined && req.method === 'POST' && info.method === 'notifications/initialized')
    request.uses = false;
  const tried = new Set<string>();
  for (;;) {
    const attempt = upstream.pick(request, tried);
    if (attempt === 'too many sessions') {
      refuse(
        res,
        requestId,
        429,
        'too many open sessions from this address; end some (DELETE) or wait for idle ones to close',
        info.id,
        {
          'retry-after': '30',
        },
      );
      record(429, true);
      return;
    }
    if (attempt === 'session gone') {
      // Streamable HTTP: a 404 to a request with a session id tells the client to initialize again.
      sendSessionGone(res, requestId, session, 'stopped', info.id);
      record(404, true);
      return;
    }
    const active = upstream.status !== 'stopped' && upstream.status !== 'failed';
    if (attempt === undefined || (!active && !attempt.sticky)) {
      attempt?.release();
      if (!active) refuse(res, requestId, 503, `deployment ${upstream.id} is ${upstream.status}`);
      else {
        const why = upstream.status === 'deploying' ? 'is still starting' : 'has no healthy instance right now';
        refuse(res, requestId, 503, `deployment ${upstream.id} ${why}; retry shortly`, info.id, { 'retry-after': '1' });
      }
      record(503, true);
      return;
    }
    tried.add(attempt.instance);
    const outcome = await forward(attempt, { upstream, req, res, body: sent, requestId, info, record, options });
    if (outcome === 'done') return;
    if (outcome === 'lost' && (await attempt.answers())) {
      // It lives, so the session may too, and the request may have reached it: not repeated.
      refuse(res, requestId, 502, `instance ${attempt.instance} closed the connection before answering`, info.id);
      record(502, true);
      return;
    }
    attempt.refused();
    if (attempt.sticky) {
      sendSessionGone(res, requestId, session, 'does not answer', info.id);
      record(404, true);
      return;
    }
    upstream.log('warn', `instance ${attempt.instance} refused a connection; trying another`, {
      instance: attempt.instance,
      request_id: requestId,
    });
  }
}

interface ForwardArgs {
  upstream: Upstream;
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  requestId: string;
  info: McpRequestInfo;
  record: Record;
  options: ProxyOptions;
}

/**
 * One try on one instance: 'retry' when nothing reached it; 'lost' when the connection of a
 * session's request broke before any answer (the caller looks whether the instance is still
 * there); 'done' otherwise.
 */
function forward(attempt: Attempt, args: ForwardArgs): Promise<'retry' | 'lost' | 'done'> {
  const { upstream, req, res, body, requestId, info, record, options } = args;
  return new Promise((resolve) => {
    /** the request was written on a connection (undici calls onRequestStart once connected) */
    let started = false;
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let clientGone = false;
    let status = 0;
    let contentType: string | undefined;
    let answering = false;
    let broke = false;
    let wrote = false;
    // A copy of the answer only when something reads it: a tool call's outcome, or the trace.
    const keep = info.method === 'tools/call' || upstream.traced;
    const chunks: Buffer[] = [];
    let kept = 0;
    const settle = (outcome: 'retry' | 'lost' | 'done', status?: number, toolError?: boolean, peek?: Peek) => {
      if (settled) return;
      settled = true;
      attempt.release();
      if (outcome === 'done' && status !== undefined) record(status, toolError, peek);
      resolve(outcome);
    };
    /** The client went away: recorded as such, and the instance's request is stopped too. */
    const clientLeft = () => {
      clientGone = true;
      settle('done', 499, undefined);
      // after settle: undici may report the abort to the handler at once
      controller?.abort(CLIENT_WENT_AWAY);
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(request) {
        controller = request;
        started = true;
        // The client left while the request waited for a connection.
        if (clientGone) request.abort(CLIENT_WENT_AWAY);
      },
      onResponseStart(_controller, statusCode, headers) {
        // 1xx: an interim answer (103 Early Hints); the final one follows.
        if (statusCode < 200 || settled) return;
        answering = true;
        status = statusCode;
        contentType = firstHeader(headers['content-type']);
        attempt.answered(status, firstHeader(headers[SESSION_HEADER]));
        const out = responseHeaders(headers);
        if (out['x-request-id'] === undefined) out['X-Request-Id'] = requestId;
        res.writeHead(status, out);
        // The headers go out with the first piece of the body, in one write; an event stream whose
        // first event did not come in the same read sends them on their own, so the client sees the
        // stream open. The read's body parts are handed over before its microtasks run.
        if (contentType?.includes('text/event-stream') === true) {
          queueMicrotask(() => {
            if (!wrote && !res.destroyed) res.flushHeaders();
          });
        }
      },
      onResponseData(request, chunk) {
        wrote = true;
        if (keep && kept + chunk.length <= PEEK_BYTES) {
          chunks.push(chunk);
          kept += chunk.length;
        }
        // Back-pressure: the instance's answer waits while the client's socket is full.
        if (!res.destroyed && !res.write(chunk)) {
          request.pause();
          res.once('drain', () => controller?.resume());
        }
      },
      onResponseEnd() {
        if (!res.destroyed) res.end();
      },
      onResponseError(_controller, error: Error & { code?: string }) {
        if (settled) return;
        if (answering) {
          // The answer broke off: the client's answer does too (res 'close' records it).
          broke = true;
          res.destroy();
          return;
        }
        // undici refused the request itself: nothing was sent, and another instance would refuse it too.
        if (!started && NOT_SENDABLE.has(error.code ?? '')) {
          refuse(res, requestId, 502, `the request could not be passed on: ${error.message}`, info.id);
          return settle('done', 502, true);
        }
        // The connection failed before anything was sent.
        if (!started) return settle('retry');
        // A pooled connection the instance had closed (it died, or it is stopping): the request
        // went nowhere useful. Repeat it elsewhere only if repeating cannot do harm.
        if (attempt.sticky || attempt.proxied === true) return settle('lost');
        if (BROKEN_CONNECTION.has(error.code ?? '') && reusedConnection(error) && upstream.safeToRepeat(info))
          return settle('retry');
        refuse(res, requestId, 502, `instance ${attempt.instance} closed the connection before answering`, info.id);
        settle('done', 502, true);
      },
    };
    res.on('close', () => {
      if (settled) return;
      if (broke) return settle('done', 502, true);
      if (!answering || !res.writableFinished) return clientLeft();
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      const failed =
        info.method === 'tools/call'
          ? status >= 400 || (mayReportFailure(text) && findCallFailure(contentType, text, info.id) === true)
          : status >= 400;
      settle('done', status, failed, contentType === undefined ? { text } : { contentType, text });
    });
    options.connections.dispatch(
      {
        origin: originOf(attempt.host, attempt.port),
        method: req.method ?? 'GET',
        path: `/mcp${options.search}`,
        headers: upstreamHeaders(req, attempt.port, requestId, options.auth !== undefined),
        body: body.length > 0 || req.method === 'POST' ? body : null,
      },
      handler,
      attempt.socketPath,
    );
  });
}

/** The reason an upstream request is aborted with when its client left (never shown to anyone). */
const CLIENT_WENT_AWAY = new Error('the client went away');

/**
 * Whether an answer can hold a failure at all: a JSON-RPC error or `isError` names its key, unless
 * the key is written with escapes. Most answers do not, and are not parsed.
 */
function mayReportFailure(text: string): boolean {
  return text.includes('"error"') || text.includes('"isError"') || text.includes('\\u');
}

function describeResult(contentType: string | undefined, text: string): string {
  const payload = (contentType ?? '').includes('text/event-stream') ? eventData(text) : text;
  if (loggableAsIs(payload)) return payload;
  try {
    const shown = JSON.stringify(redactForLog(JSON.parse(payload)));
    return shown.length > 1000 ? `${shown.slice(0, 1000)}…` : shown;
  } catch {
    return payload.length > 1000 ? `${payload.slice(0, 1000)}…` : payload;
  }
}

/** The data lines of an event stream, each trimmed, joined by spaces. */
function eventData(text: string): string {
  const parts: string[] = [];
  for (let at = 0; at < text.length;) {
    const newline = text.indexOf('\n', at);
    const end = newline === -1 ? text.length : newline;
    if (text.startsWith('data:', at)) parts.push(text.slice(at + 5, end).trim());
    at = end + 1;
  }
  return parts.join(' ');
}

/** The gateway's own answer to a request it did not pass on (an error), with the request's id as every answer has. */
function refuse(
  res: ServerResponse,
  requestId: string,
  status: number,
  message: string,
  id: McpRequestInfo['id'] = null,
  headers: { [name: string]: string } = {},
): void {
  sendRpcError(res, status, message, { ...headers, 'X-Request-Id': requestId }, id);
}

/**
 * A session whose instance is gone: 404 with the code and words of the SDK's own answer ("Session not
 * found"), so a client recognises it and initialises again, as the Streamable HTTP transport says.
 */
function sendSessionGone(
  res: ServerResponse,
  requestId: string,
  session: string | undefined,
  why: string,
  id: McpRequestInfo['id'],
): void {
  sendJson(
    res,
    404,
    {
      jsonrpc: '2.0',
      error: {
        code: -32001,
        message: `Session not found: session ${session ?? ''} is gone, the instance that held it ${why}; initialize a new session`,
      },
      id: id ?? null,
    },
    { headers: { 'X-Request-Id': requestId } },
  );
}

/**
 * An MCP client understands a JSON-RPC error better than a bare HTTP one; with the id of its
 * request (when it was read), so the client can match the answer to the call.
 */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: { [name: string]: string } = {},
  id: McpRequestInfo['id'] = null,
): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: id ?? null }, { headers });
}
