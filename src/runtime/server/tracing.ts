/**
 * Request tracing: one log line per HTTP request (method, path, status, the JSON-RPC method and
 * its target, the user, the outcome), filled in while the request is served. A request without
 * an HTTP request around it (a stdio connection) logs the MCP request itself.
 *
 * A handler finds the record of its request by the web `Request` it was served from (the one the
 * fetch bridge built and noted): that costs nothing. Only a server that serves many HTTP requests
 * (a session's) finds it through an AsyncLocalStorage, and so does a stdio request for its own
 * record: once one has run, Node tracks every promise of the process, so the stateless path (one
 * server per request) never runs it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { USER_ID_META_KEY } from '../constants.js';
import type { RuntimeLogger, Secrets } from './logger.js';
import { spanEntry, spanStartOf, type SpanStart } from './trace-spans.js';

/** What the log line of one HTTP request says; filled in as the request is served. */
export interface RequestRecord {
  rpc?: string;
  target?: string;
  userId?: string;
  /** the server checks credentials: `userId` is the validated identity, never one the client named */
  authenticated?: boolean;
  isError?: boolean;
  error?: string;
  params?: unknown;
  result?: unknown;
  /** the request's span, when the engine asked for spans and the request came with a sampled traceparent */
  span?: SpanStart;
  /** the JSON-RPC id, noted for the span */
  rpcId?: string | number;
}

export interface Tracer {
  /** the record of the HTTP request a session's server is serving (sessions.ts runs in it) */
  readonly requests: AsyncLocalStorage<RequestRecord>;
  /** notes the record of the web `Request` a stateless request is served from */
  noteRequest(request: Request, record: RequestRecord): void;
  /** the record of the HTTP request a handler serves, if any */
  recordOf(ctx: ServerContext): RequestRecord | undefined;
  /** runs one MCP operation and records its outcome; protocol errors are rethrown as they are */
  traced: <T>(
    ctx: ServerContext,
    rpc: string,
    target: string | undefined,
    work: () => Promise<T>,
    errorOf?: (value: T) => string | undefined,
  ) => Promise<T>;
  /** writes the log line of an HTTP request once its response is closed (and its span line, if it has one) */
  logRequest(req: IncomingMessage, res: ServerResponse, record: RequestRecord, startedAt: bigint): void;
  /** with spans (trace-spans.ts): a request that continues a sampled trace gets one */
  startSpan(req: IncomingMessage, record: RequestRecord): void;
}

export function createTracer(logger: RuntimeLogger, secrets: Secrets, spans = false): Tracer {
  const requests = new AsyncLocalStorage<RequestRecord>();
  const byRequest = new WeakMap<Request, RequestRecord>();
  const recordOf = (ctx: ServerContext): RequestRecord | undefined => {
    const request = ctx.http?.req;
    return (request === undefined ? undefined : byRequest.get(request)) ?? requests.getStore();
  };
  return {
    requests,
    noteRequest(request, record) {
      byRequest.set(request, record);
    },
    recordOf,
    startSpan(req, record) {
      if (!spans) return;
      const span = spanStartOf(req.headers.traceparent);
      if (span !== undefined) record.span = span;
    },
    async traced(ctx, rpc, target, work, errorOf) {
      const outer = recordOf(ctx);
      const own = outer === undefined;
      const record = outer ?? {};
      const startedAt = process.hrtime.bigint();
      try {
        const value = await (own ? requests.run(record, work) : work());
        const error = errorOf?.(value);
        if (error !== undefined) {
          record.isError = true;
          record.error = error;
        }
        if (logger.debug) record.result = value;
        return value;
      } catch (error) {
        // The client reads this message too (a JSON-RPC error): it must not carry a secret.
        if (error instanceof Error) error.message = secrets.redactText(error.message);
        record.isError = true;
        record.error = error instanceof Error ? error.message : String(error);
        throw error;
      } finally {
        if (own) {
          logger.log({
            level: levelOf(record),
            event: 'request',
            rpc,
            ...(target === undefined ? {} : { target }),
            duration_ms: elapsedMs(startedAt),
            ...outcomeOf(record, logger.debug),
          });
        }
      }
    },
    logRequest(req, res, record, startedAt) {
      logger.log({
        level: levelOf(record),
        event: 'request',
        method: req.method,
        path: (req.url ?? '/').split('?')[0],
        status: res.statusCode,
        duration_ms: elapsedMs(startedAt),
        ...(record.rpc === undefined ? {} : { rpc: record.rpc }),
        ...(record.target === undefined ? {} : { target: record.target }),
        ...outcomeOf(record, logger.debug),
        ...(logger.debug && record.params !== undefined ? { params: record.params } : {}),
      });
      if (record.span !== undefined) logger.log(spanEntry(record.span, req, res, record));
    },
  };
}

/** A request whose tool call failed (an error result or a thrown error) is worth a reader's attention: warn. */
function levelOf(record: RequestRecord): 'info' | 'warn' {
  return record.isError === true ? 'warn' : 'info';
}

function elapsedMs(startedAt: bigint): number {
  return Number((process.hrtime.bigint() - startedAt) / 1000n) / 1000;
}

function outcomeOf(record: RequestRecord, debug: boolean): Record<string, unknown> {
  return {
    ...(record.userId === undefined ? {} : { user_id: record.userId }),
    ...(record.isError === true ? { is_error: true } : {}),
    ...(record.error === undefined ? {} : { error: record.error }),
    ...(debug && record.result !== undefined ? { result: record.result } : {}),
  };
}

/** Notes the JSON-RPC method and its target (tool, uri, prompt) for the log line. */
export function describeMessage(body: unknown, record: RequestRecord, debug: boolean): void {
  if (Array.isArray(body)) {
    record.rpc = 'batch';
    return;
  }
  if (body === null || typeof body !== 'object') return;
  const message = body as {
    method?: unknown;
    params?: { name?: unknown; uri?: unknown; _meta?: Record<string, unknown> };
  };
  if (typeof message.method === 'string') record.rpc = message.method;
  else if ('result' in message || 'error' in message) record.rpc = 'response';
  const id = (message as { id?: unknown }).id;
  if (record.span !== undefined && (typeof id === 'string' || typeof id === 'number')) record.rpcId = id;
  const target = message.params?.name ?? message.params?.uri;
  if (typeof target === 'string') record.target = target;
  const metaUser = message.params?._meta?.[USER_ID_META_KEY];
  // a server with auth knows its caller from the credential alone
  if (record.authenticated !== true && typeof metaUser === 'string' && metaUser !== '') record.userId = metaUser;
  if (debug && message.params !== undefined) record.params = message.params;
}

/** The text of an error result, shortened for a log line; undefined for a success. */
export function errorTextOf(result: CallToolResult): string | undefined {
  if (result.isError !== true) return undefined;
  const first = result.content[0];
  const text = first?.type === 'text' ? first.text : 'error result';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
