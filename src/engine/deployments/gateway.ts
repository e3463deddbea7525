/**
 * The data plane: `/d/<name>/mcp` and `/d/<name>/health` on the engine's port, and `/mcp` and
 * `/health` for a request whose Host is a deployment's domain. MCP requests go to the healthy
 * instance with the fewest requests in flight; a request is tried on another instance when the
 * connection to the first failed before anything was sent, or (for requests that are safe to
 * repeat) when a pooled connection turned out to be dead. Responses are piped through as
 * they arrive (SSE included) while a bounded copy is kept to see whether a tool call failed.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { GATEWAY_PREFIX } from '../types.js';
import type { ManagedInstance } from './instance.js';
import type { DeploymentLimits } from './limits.js';
import type { LiveDeployment } from './live-deployment.js';
import { findCallFailure, inspectRequest, redactForLog, type McpRequestInfo } from './mcp-messages.js';

export interface GatewayRoutes {
  byName(name: string): LiveDeployment | undefined;
  byDomain(host: string): LiveDeployment | undefined;
  /** a deployment that exists but does not run (stopped, failed), for a clear answer */
  inactive(name: string): Promise<{ deployment_id: string; status: string } | undefined>;
}

export interface GatewayOptions {
  limits: DeploymentLimits;
  clock: () => number;
  newRequestId: () => string;
}

export type Gateway = ((req: IncomingMessage, res: ServerResponse) => Promise<boolean>) & { close(): void };

/** Below serve-bundle's keep-alive time-out (5 s). */
const UPSTREAM_IDLE_MS = 4_000;

/** How much of a response is kept to look for a tool error. */
const PEEK_BYTES = 1024 * 1024;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export function createGateway(routes: GatewayRoutes, options: GatewayOptions): Gateway {
  // An idle connection is dropped before the instance drops it (its keep-alive time-out is 5 s):
  // reusing one the instance is closing at that moment fails the request sent on it.
  const agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: UPSTREAM_IDLE_MS });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    let target: { live: LiveDeployment | undefined; name: string; rest: string };
    if (url.pathname.startsWith(`${GATEWAY_PREFIX}/`)) {
      const [name = '', ...rest] = url.pathname.slice(GATEWAY_PREFIX.length + 1).split('/');
      target = { live: routes.byName(name), name, rest: `/${rest.join('/')}` };
    } else {
      if (url.pathname !== '/mcp' && url.pathname !== '/health') return false;
      const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
      const live = host === '' ? undefined : routes.byDomain(host);
      // Not one of ours: the engine's own routes answer it.
      if (live === undefined) return false;
      target = { live, name: live.id, rest: url.pathname };
    }
    const { live, name, rest } = target;
    if (rest !== '/mcp' && rest !== '/health') {
      sendJson(res, 404, { error: `no such endpoint; use ${GATEWAY_PREFIX}/${name}/mcp or ${GATEWAY_PREFIX}/${name}/health` });
      return true;
    }
    if (live === undefined || live.status === 'stopped' || live.status === 'failed') {
      const known = live === undefined ? await routes.inactive(name) : { deployment_id: live.id, status: live.status };
      if (known === undefined) {
        const body = { error: `no deployment named ${name}` };
        if (rest === '/health') sendJson(res, 404, body);
        else sendRpcError(res, 404, body.error);
        return true;
      }
      if (rest === '/health') {
        sendJson(res, 503, { status: known.status, deployment_id: known.deployment_id, instances: { total: 0, healthy: 0 }, last_check: null });
      } else {
        sendRpcError(res, 503, `deployment ${known.deployment_id} is ${known.status}`);
      }
      return true;
    }
    if (rest === '/health') {
      const report = live.healthReport();
      sendJson(res, report.healthy ? 200 : 503, report.body, req.method === 'HEAD');
      return true;
    }
    await proxyMcp(live, req, res, url.search, agent, options);
    return true;
  };
  return Object.assign(handle, { close: () => agent.destroy() });
}

async function proxyMcp(
  live: LiveDeployment,
  req: IncomingMessage,
  res: ServerResponse,
  search: string,
  agent: Agent,
  options: GatewayOptions,
): Promise<void> {
  const started = options.clock();
  const startedAt = performance.now();
  // The engine's HTTP layer has already given this request an id; keep it end to end.
  const given = res.getHeader('x-request-id');
  const requestId = typeof given === 'string' ? given : (firstHeader(req.headers['x-request-id']) ?? options.newRequestId());
  const debug = live.environment === 'development';
  live.lastActivity = started;
  const body = await readBody(req, options.limits.maxBodyBytes);
  if (body === 'too large') {
    sendRpcError(res, 413, `the request body is over ${options.limits.maxBodyBytes} bytes`);
    return;
  }
  // The client went away before its request arrived: nothing to send, nothing to count
  // (499 is what the engine's log line says).
  if (body === 'gone') {
    res.statusCode = 499;
    return;
  }
  const info = inspectRequest(body.toString('utf8'));
  if (debug) {
    const args = info.arguments === undefined ? '' : ` ${JSON.stringify(redactForLog(info.arguments))}`;
    live.log('debug', `→ ${req.method} ${info.method ?? '(not JSON-RPC)'}${info.tool === undefined ? '' : ` ${info.tool}`}${args}`, { request_id: requestId });
  }
  const record = (status: number, toolError: boolean | undefined, peek?: { contentType?: string; text: string }) => {
    const latencyMs = performance.now() - startedAt;
    live.addSample({
      t: started,
      latencyMs,
      status,
      ...(info.method === undefined ? {} : { method: info.method }),
      ...(info.tool === undefined ? {} : { tool: info.tool }),
      ...(info.method === 'tools/call' ? { toolError: toolError ?? status >= 400 } : {}),
    });
    if (debug) {
      const outcome = toolError === true ? 'failed' : 'ok';
      const result = peek === undefined ? '' : ` ${describeResult(peek.contentType, peek.text)}`;
      live.log('debug', `← ${status} ${outcome} in ${latencyMs.toFixed(1)} ms${result}`, { request_id: requestId });
    }
  };
  const tried = new Set<ManagedInstance>();
  for (;;) {
    const instance = live.pick(tried);
    if (instance === undefined) {
      const why = live.status === 'deploying' ? 'is still starting' : 'has no healthy instance right now';
      sendRpcError(res, 503, `deployment ${live.id} ${why}; retry shortly`, { 'retry-after': '1' }, info.id);
      record(503, true);
      return;
    }
    tried.add(instance);
    const outcome = await forward(instance, { live, req, res, body, search, agent, requestId, info, record });
    if (outcome === 'done') return;
    instance.suspect();
    live.log('warn', `instance ${instance.id} refused a connection; trying another`, { instance: instance.id, request_id: requestId });
  }
}

interface ForwardArgs {
  live: LiveDeployment;
  req: IncomingMessage;
  res: ServerResponse;
  body: Buffer;
  search: string;
  agent: Agent;
  requestId: string;
  info: McpRequestInfo;
  record: (status: number, toolError: boolean | undefined, peek?: { contentType?: string; text: string }) => void;
}

/** One attempt on one instance: 'retry' when nothing reached it, 'done' otherwise. */
function forward(instance: ManagedInstance, args: ForwardArgs): Promise<'retry' | 'done'> {
  const { live, req, res, body, search, agent, requestId, info, record } = args;
  return new Promise((resolve) => {
    let connected = false;
    let settled = false;
    const settle = (outcome: 'retry' | 'done', status?: number, toolError?: boolean, peek?: { contentType?: string; text: string }) => {
      if (settled) return;
      settled = true;
      live.end(instance);
      if (outcome === 'done' && status !== undefined) record(status, toolError, peek);
      resolve(outcome);
    };
    live.begin(instance);
    const upstream = httpRequest({
      host: '127.0.0.1',
      port: instance.port,
      method: req.method,
      path: `/mcp${search}`,
      headers: upstreamHeaders(req, instance.port ?? 0, body.length, requestId),
      agent,
    });
    upstream.on('socket', (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once('connect', () => (connected = true));
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      if (!connected && !res.headersSent) return settle('retry');
      // A pooled connection the instance had closed (it died, or it is stopping): the request
      // went nowhere useful. Repeat it elsewhere only if repeating cannot do harm.
      if (!res.headersSent && upstream.reusedSocket && RESET_CODES.has(error.code ?? '') && safeToRepeat(info, live)) return settle('retry');
      if (!res.headersSent) sendRpcError(res, 502, `instance ${instance.id} closed the connection before answering`, {}, info.id);
      else res.destroy();
      settle('done', 502, true);
    });
    upstream.on('response', (answer) => {
      const status = answer.statusCode ?? 502;
      const contentType = firstHeader(answer.headers['content-type']);
      const headers = responseHeaders(answer.headers);
      headers['x-request-id'] ??= requestId;
      res.writeHead(status, headers);
      res.flushHeaders();
      const chunks: Buffer[] = [];
      let kept = 0;
      let broke = false;
      answer.on('data', (chunk: Buffer) => {
        if (kept + chunk.length <= PEEK_BYTES) {
          chunks.push(chunk);
          kept += chunk.length;
        }
      });
      answer.on('close', () => {
        if (answer.complete) return;
        broke = true;
        res.destroy();
      });
      answer.pipe(res);
      res.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (broke) return settle('done', 502, true);
        if (!res.writableFinished) {
          // The client went away: stop the upstream request too.
          upstream.destroy();
          return settle('done', 499, undefined);
        }
        const failed = info.method === 'tools/call' ? (status >= 400 || findCallFailure(contentType, text, info.id) === true) : status >= 400;
        settle('done', status, failed, contentType === undefined ? { text } : { contentType, text });
      });
    });
    res.on('close', () => {
      if (!res.headersSent && !settled) {
        upstream.destroy();
        settle('done', 499, undefined);
      }
    });
    upstream.end(body);
  });
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Whether sending a request twice is harmless: any method but tools/call (initialize, lists,
 * reads, pings, notifications), or a call of a tool its definition marks read-only or idempotent.
 */
export function safeToRepeat(info: McpRequestInfo, live: LiveDeployment): boolean {
  if (info.method === undefined || info.method === 'batch') return false;
  if (info.method !== 'tools/call') return true;
  const tool = live.ctx.server.definition.tools?.find((t) => t.name === info.tool);
  return tool?.annotations?.readOnlyHint === true || tool?.annotations?.idempotentHint === true;
}

function upstreamHeaders(req: IncomingMessage, port: number, length: number, requestId: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name === 'host' || name === 'content-length') continue;
    headers[name] = value;
  }
  // The runtime checks Host against its own address (DNS-rebinding protection).
  headers.host = `127.0.0.1:${port}`;
  headers['x-forwarded-host'] = req.headers.host ?? '';
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
  headers['x-request-id'] = requestId;
  if (length > 0 || req.method === 'POST') headers['content-length'] = String(length);
  return headers;
}

function responseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

/** The whole body; 'too large' past the limit; 'gone' when the client went away first. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too large' | 'gone'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve('gone'));
    req.on('close', () => {
      if (!req.complete) resolve('gone');
    });
  });
}

function describeResult(contentType: string | undefined, text: string): string {
  const payload = (contentType ?? '').includes('text/event-stream') ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join(' ') : text;
  try {
    const shown = JSON.stringify(redactForLog(JSON.parse(payload)));
    return shown.length > 1000 ? `${shown.slice(0, 1000)}…` : shown;
  } catch {
    return payload.length > 1000 ? `${payload.slice(0, 1000)}…` : payload;
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headOnly = false, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
  res.end(headOnly ? undefined : text);
}

/**
 * An MCP client understands a JSON-RPC error better than a bare HTTP one; with the id of its
 * request (when it was read), so the client can match the answer to the call.
 */
function sendRpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, id: McpRequestInfo['id'] = null): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: id ?? null }, false, headers);
}
