/**
 * Passing one MCP request to an instance of a deployment. A request of a session goes to the
 * instance that holds the session (Mcp-Session-Id); any other to the healthy instance with the
 * fewest requests in flight. A request is tried on another instance when the connection to the
 * first failed before anything was sent, or (for requests that are safe to repeat) when a pooled
 * connection turned out to be dead; never for a session, whose state lives on one instance. Each
 * try is forward.ts's; every call is counted for the deployment's figures, and traced when asked.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Admitted, Guard } from '../../runtime/server/auth.js';
import { USER_ID_META_KEY } from '../../runtime/constants.js';
import { firstHeader } from '../../shared/http.js';
import type { BodyBudget } from './body-budget.js';
import { sourceKey } from '../http/failure-limit.js';
import type { InstanceConnections } from './instance-connections.js';
import type { DeploymentLimits } from '../deployments/limits.js';
import {
  headerRequestInfo,
  inspectRequest,
  loggableAsIs,
  redactForLog,
  withoutMetaIdentity,
  type McpRequestInfo,
} from './mcp-messages.js';
import { forward, SESSION_HEADER, type RecordCall, type TryOutcome } from './forward.js';
import { refuse, sendSessionGone } from './rpc-errors.js';
import { HEADER_MISMATCH_CODE, readStandardHeaders } from './mcp-headers.js';
import type { Attempt, CallOutcome, PickRequest, Upstream } from './upstream.js';
import type { RequestSpan } from '../observability/tracing.js';
import { connectionClient, type ClientInfo } from './connection-clients.js';

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

/** One MCP request as the gateway passes it on. */
interface ProxyCall {
  upstream: Upstream;
  req: IncomingMessage;
  res: ServerResponse;
  options: ProxyOptions;
  requestId: string;
  session: string | undefined;
  info: McpRequestInfo;
  /** the body the instance is sent */
  sent: Buffer;
  record: RecordCall;
  /** the gateway's span, when the engine exports traces */
  span: RequestSpan | undefined;
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
  const { requestId } = options;
  // The client went away before its request arrived: nothing to send, nothing to count
  // (499 is what the engine's log line says).
  if (read === 'gone') {
    res.statusCode = 499;
    return;
  }
  const reading = requestInfo(req, res, read.body, options);
  if (reading === undefined) return;
  const { info, fromHeaders } = reading;
  const admitted = admitCall(res, options, read.body, info);
  if (admitted === undefined) return;
  if (upstream.traced) traceRequest(upstream, req, info, admitted.text, requestId);
  const span = upstream.startSpan?.(req, info, admitted.text, requestId);
  const call: ProxyCall = {
    upstream,
    req,
    res,
    options,
    requestId,
    session: firstHeader(req.headers[SESSION_HEADER]),
    info,
    sent: admitted.sent,
    record: callRecorder(upstream, info, requestId, started, startedAt, {
      bytesIn: admitted.sent.length,
      session: firstHeader(req.headers[SESSION_HEADER]),
      user: options.auth?.admitted.userId,
      client: requestClient(req, upstream.id, info, fromHeaders),
      span,
      stream: req.method === 'GET',
    }),
    span,
  };
  await passToInstances(call, pickRequest(req, info, call.session));
}

/**
 * What the gateway knows of a request: from the `Mcp-Method` / `Mcp-Name` headers of a request of
 * the 2026-07-28 revision, else from its body. The body decides for the gateway's own check of a
 * tool call (a guard refuses tools by name: it checks the call the instance will run, not the
 * name a header claims) and for a batch. Undefined when a header is not well formed (answered 400).
 */
function requestInfo(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  options: ProxyOptions,
): { info: McpRequestInfo; fromHeaders: boolean } | undefined {
  const standard = readStandardHeaders(req.method, req.headers);
  if (standard.kind === 'malformed') {
    refuse(res, options.requestId, 400, `Bad Request: ${standard.message}`, null, {}, HEADER_MISMATCH_CODE);
    return undefined;
  }
  if (standard.kind === 'body' || (standard.method === 'tools/call' && options.auth !== undefined) || startsArray(body))
    return { info: inspectRequest(body.toString('utf8')), fromHeaders: false };
  return { info: headerRequestInfo(standard.method, standard.name, body), fromHeaders: true };
}

/**
 * The client a request counts for: the one it names, else the last one named on its connection. A
 * request read from its headers names its client in the body: the connection's known one is taken
 * instead of parsing it (usage figures only; one client per connection is what clients do).
 */
function requestClient(req: IncomingMessage, deploymentId: string, info: McpRequestInfo, fromHeaders: boolean) {
  if (fromHeaders) {
    const known = connectionClient(req.socket, deploymentId, undefined);
    if (known !== undefined) return known;
  }
  return connectionClient(req.socket, deploymentId, info.client);
}

function startsArray(body: Buffer): boolean {
  for (const byte of body) {
    if (byte === 0x5b) return true; // [
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return false;
  }
  return false;
}

/**
 * The body to send when the deployment's guard lets the tool be called; undefined when it refused
 * (answered). An identity the client names is not passed on: the instance takes it from the token alone.
 */
function admitCall(
  res: ServerResponse,
  { auth, requestId }: ProxyOptions,
  body: Buffer,
  info: McpRequestInfo,
): { text: string; sent: Buffer } | undefined {
  const text = body.toString('utf8');
  if (auth === undefined) return { text, sent: body };
  const refused = info.tool === undefined ? undefined : auth.guard.checkTool(auth.admitted, info.tool, auth.resource);
  if (refused !== undefined) {
    refuse(res, requestId, refused.status, refused.message, info.id, refused.headers);
    return undefined;
  }
  if (!text.includes(USER_ID_META_KEY)) return { text, sent: body };
  const without = withoutMetaIdentity(text);
  return { text: without, sent: Buffer.from(without, 'utf8') };
}

function traceRequest(upstream: Upstream, req: IncomingMessage, info: McpRequestInfo, text: string, requestId: string) {
  // A body with nothing to hide or cut (most are) is shown without copying its arguments first.
  const args =
    info.arguments === undefined
      ? ''
      : ` ${JSON.stringify(loggableAsIs(text) ? info.arguments : redactForLog(info.arguments))}`;
  const tool = info.tool === undefined ? '' : ` ${info.tool}`;
  upstream.log('debug', `→ ${req.method} ${info.method ?? '(not JSON-RPC)'}${tool}${args}`, {
    request_id: requestId,
  });
}

function callRecorder(
  upstream: Upstream,
  info: McpRequestInfo,
  requestId: string,
  started: number,
  startedAt: number,
  about: {
    bytesIn: number;
    session: string | undefined;
    user: string | undefined;
    client: ClientInfo | undefined;
    span: RequestSpan | undefined;
    /** a GET: the client's event stream, which the client ends when it is done (not an error) */
    stream: boolean;
  },
): RecordCall {
  // as the request was traced: a trace turned on meanwhile starts with the next request
  const traced = upstream.traced;
  return (answered, toolError, peek) => {
    const status = about.stream && answered === 499 ? 200 : answered;
    const latencyMs = performance.now() - startedAt;
    const call: CallOutcome = { at: started, latencyMs, status, method: info.method, tool: info.tool };
    if (info.method === 'tools/call') call.toolError = toolError ?? status >= 400;
    call.bytesIn = about.bytesIn;
    if (about.session !== undefined) call.session = about.session;
    // who called: the client an `initialize` names (later ones: of its connection, or its session's), the user
    if (about.client !== undefined) call.client = about.client;
    if (about.user !== undefined) call.user = about.user;
    upstream.report(call);
    about.span?.end(status, call.toolError);
    if (traced) {
      const outcome = toolError === true ? 'failed' : 'ok';
      const result = peek === undefined ? '' : ` ${describeResult(peek.contentType, peek.text)}`;
      upstream.log('debug', `← ${status} ${outcome} in ${latencyMs.toFixed(1)} ms${result}`, { request_id: requestId });
    }
  };
}

/** What the upstream needs to pick an instance for the request. */
function pickRequest(req: IncomingMessage, info: McpRequestInfo, session: string | undefined): PickRequest {
  const request: PickRequest = { client: sourceKey(req.socket.remoteAddress) };
  if (session !== undefined) request.session = session;
  if (req.method !== undefined) request.method = req.method;
  if (session === undefined && info.method === 'initialize') request.opens = true;
  if (request.opens === true && info.client !== undefined) request.clientInfo = info.client;
  if (session !== undefined && req.method === 'POST' && info.method === 'notifications/initialized')
    request.uses = false;
  return request;
}

/** Tries instances one after another until one answers or the request is answered otherwise. */
async function passToInstances(call: ProxyCall, request: PickRequest): Promise<void> {
  const { upstream, req, res, sent, requestId, info, record, options, span } = call;
  // an idle deployment starts an instance first; a 2025 session of an instance that stopped ends (404) without one
  if (upstream.idle === true && upstream.wake !== undefined) {
    if (call.session !== undefined && upstream.sessionGone?.(call.session) === true) {
      sendSessionGone(res, requestId, call.session, 'stopped when the deployment went idle', info.id);
      record(404, true);
      return;
    }
    if (!(await wokenFor(call, upstream.wake()))) return;
  }
  const tried = new Set<string>();
  for (;;) {
    const attempt = pickOrRefuse(call, request, tried);
    if (attempt === undefined) return;
    tried.add(attempt.instance);
    const outcome = await forward(attempt, { upstream, req, res, body: sent, requestId, info, record, options, span });
    if (await answeredAfterTry(call, attempt, outcome)) return;
    upstream.log('warn', `instance ${attempt.instance} refused a connection; trying another`, {
      instance: attempt.instance,
      request_id: requestId,
    });
  }
}

/** Waits for an idle deployment's instances; false when none came up and the request was answered (503). */
async function wokenFor(call: ProxyCall, waking: Promise<void>): Promise<boolean> {
  try {
    await waking;
    return true;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    refuse(
      call.res,
      call.requestId,
      503,
      `deployment ${call.upstream.id} was idle and could not start: ${why}`,
      call.info.id,
      {
        'retry-after': '5',
      },
    );
    call.record(503, true);
    return false;
  }
}

/** The instance to try next; undefined when there is none and the request was answered. */
function pickOrRefuse(call: ProxyCall, request: PickRequest, tried: ReadonlySet<string>): Attempt | undefined {
  const { upstream, res, requestId, info, record } = call;
  const attempt = upstream.pick(request, tried);
  if (attempt === 'too many sessions') {
    refuse(
      res,
      requestId,
      429,
      'too many open sessions from this address; end some (DELETE) or wait for idle ones to close',
      info.id,
      { 'retry-after': '30' },
    );
    record(429, true);
    return undefined;
  }
  if (attempt === 'session gone') {
    // Streamable HTTP: a 404 to a request with a session id tells the client to initialize again.
    sendSessionGone(res, requestId, call.session, 'stopped', info.id);
    record(404, true);
    return undefined;
  }
  const active = upstream.status !== 'stopped' && upstream.status !== 'failed';
  if (attempt !== undefined && (active || attempt.sticky)) return attempt;
  attempt?.release();
  if (!active) refuse(res, requestId, 503, `deployment ${upstream.id} is ${upstream.status}`);
  else {
    const why = upstream.status === 'deploying' ? 'is still starting' : 'has no healthy instance right now';
    refuse(res, requestId, 503, `deployment ${upstream.id} ${why}; retry shortly`, info.id, { 'retry-after': '1' });
  }
  record(503, true);
  return undefined;
}

/** Whether the request is answered after a try; false when it may go to another instance. */
async function answeredAfterTry(call: ProxyCall, attempt: Attempt, outcome: TryOutcome): Promise<boolean> {
  const { res, requestId, info, record } = call;
  if (outcome === 'done') return true;
  if (outcome === 'lost' && (await attempt.answers())) {
    // It lives, so the session may too, and the request may have reached it: not repeated.
    refuse(res, requestId, 502, `instance ${attempt.instance} closed the connection before answering`, info.id);
    record(502, true);
    return true;
  }
  attempt.refused();
  if (!attempt.sticky) return false;
  sendSessionGone(res, requestId, call.session, 'does not answer', info.id);
  record(404, true);
  return true;
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
