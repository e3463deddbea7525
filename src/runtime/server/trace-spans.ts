/**
 * An instance's spans, when its engine traces requests: the engine then sets MCPCTL_TRACE_SPANS=1
 * in the instance's environment, and for each request that arrives with a sampled W3C
 * `traceparent` the runtime writes one `span` log line once the answer is closed (a child of that
 * context: trace id, its own span id, the parent's, start and end, and what the request was). The
 * engine takes these lines out of the deployment's log and exports them. No OpenTelemetry package
 * here: a line on stdout reaches the engine from any sandbox or container, where an OTLP receiver
 * on the engine's loopback may not be reachable, and the runtime's start-up stays as it was.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LogEntry } from './logger.js';

/** Set to `1` by the engine in an instance's environment when it exports traces. */
export const TRACE_SPANS_ENV = 'MCPCTL_TRACE_SPANS';

/** version, trace id, parent span id, flags (and, past version 00, whatever a later version adds) */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZEROS = /^0+$/;

/** The span of one request being served. */
export interface SpanStart {
  traceId: string;
  parentId: string;
  spanId: string;
  /** ms since the epoch, with the fraction */
  start: number;
}

/** Whether the engine asked this runtime for spans. */
export function spansWanted(env: Record<string, string | undefined> | undefined): boolean {
  return env?.[TRACE_SPANS_ENV] === '1';
}

/** A child span of a sampled `traceparent`; undefined without one, or for one that is not valid or not sampled. */
export function spanStartOf(header: string | string[] | undefined): SpanStart | undefined {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (match === null) return undefined;
  const [, version, traceId, parentId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (ZEROS.test(traceId) || ZEROS.test(parentId) || (parseInt(flags, 16) & 1) === 0) return undefined;
  return { traceId, parentId, spanId: newSpanId(), start: nowMs() };
}

/** The `span` line of a request whose answer is closed. */
export function spanEntry(
  span: SpanStart,
  req: IncomingMessage,
  res: ServerResponse,
  facts: {
    rpc?: string | undefined;
    target?: string | undefined;
    rpcId?: string | number | undefined;
    isError?: boolean | undefined;
  },
): LogEntry {
  const session = req.headers['mcp-session-id'] ?? res.getHeader('mcp-session-id');
  return {
    level: 'info',
    event: 'span',
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentId,
    start: span.start,
    end: nowMs(),
    http_method: req.method ?? 'GET',
    status: res.statusCode,
    ...(facts.rpc === undefined ? {} : { rpc: facts.rpc }),
    ...(facts.target === undefined ? {} : { target: facts.target }),
    ...(facts.rpcId === undefined ? {} : { rpc_id: facts.rpcId }),
    ...(typeof session === 'string' ? { session } : {}),
    ...(facts.isError === true ? { is_error: true } : {}),
  };
}

function newSpanId(): string {
  const id = randomBytes(8).toString('hex');
  return ZEROS.test(id) ? newSpanId() : id;
}

/** The wall clock with a sub-millisecond fraction, as OpenTelemetry's SDK reads it. */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
