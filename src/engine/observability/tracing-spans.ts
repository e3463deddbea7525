/**
 * What a span of an MCP request says, in the OpenTelemetry MCP semantic conventions: its name
 * (`{mcp.method.name} {target}`) and attributes, the same for the gateway's span and the
 * instance's; and an instance's `span` log line (src/runtime/server/trace-spans.ts) read back,
 * checked field by field, since anything running in an instance can write to its stdout. Pure.
 */
import type { AttributeValue } from '@opentelemetry/api';
import { errorTypeOf } from './events.js';

/** What is known of one request when its span ends. */
export interface SpanFacts {
  deploymentId: string;
  server: string;
  environment: string;
  /** the HTTP method */
  httpMethod: string;
  /** the JSON-RPC method; 'batch'; undefined when not JSON-RPC */
  method?: string | undefined;
  /** the tool (tools/call), prompt (prompts/get) or resource URI (resources/read) */
  target?: string | undefined;
  rpcId?: string | number | null | undefined;
  session?: string | undefined;
  status: number;
  /** tools/call: the call failed */
  toolError?: boolean | undefined;
  /** the gateway's request id */
  requestId?: string | undefined;
  /** the instance that served it (instance spans) */
  instance?: string | undefined;
}

/** The longest text an attribute keeps. */
const MAX_TEXT = 256;

/** `{mcp.method.name} {target}`, or the method alone, or the HTTP method when the request is not JSON-RPC. */
export function spanName(facts: Pick<SpanFacts, 'httpMethod' | 'method' | 'target'>): string {
  if (facts.method === undefined) return facts.httpMethod;
  return facts.target === undefined ? facts.method : `${facts.method} ${facts.target}`;
}

/** The span's attributes; `error` when `error.type` is set (the span's status is then ERROR). */
export function spanAttributes(facts: SpanFacts): { attributes: Record<string, AttributeValue>; error: boolean } {
  const attributes: Record<string, AttributeValue> = {
    'mcpctl.deployment.id': facts.deploymentId,
    'mcpctl.server.name': facts.server,
    'mcpctl.environment': facts.environment,
    'http.request.method': facts.httpMethod,
    'http.response.status_code': facts.status,
  };
  const { method, target } = facts;
  if (method !== undefined) attributes['mcp.method.name'] = method;
  if (target !== undefined) {
    if (method === 'tools/call') {
      attributes['gen_ai.tool.name'] = target;
      attributes['gen_ai.operation.name'] = 'execute_tool';
    } else if (method === 'prompts/get') attributes['gen_ai.prompt.name'] = target;
    else if (method === 'resources/read') attributes['mcp.resource.uri'] = target;
  }
  if (facts.rpcId !== undefined && facts.rpcId !== null) attributes['jsonrpc.request.id'] = String(facts.rpcId);
  if (facts.session !== undefined) attributes['mcp.session.id'] = facts.session;
  if (facts.requestId !== undefined) attributes['mcpctl.request.id'] = facts.requestId;
  if (facts.instance !== undefined) attributes['mcpctl.instance.id'] = facts.instance;
  const errorType = errorTypeOf(facts);
  if (errorType !== undefined) attributes['error.type'] = errorType;
  return { attributes, error: errorType !== undefined };
}

/** An instance's span as its line says it, checked. */
export interface InstanceSpan {
  traceId: string;
  spanId: string;
  parentId: string;
  /** ms since the epoch */
  start: number;
  end: number;
  facts: SpanFacts;
}

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
/** A span longer than a day is not one the runtime wrote. */
const MAX_SPAN_MS = 24 * 60 * 60 * 1000;

/** The span an instance's `span` line describes; undefined when a field is missing or not what the runtime writes. */
export function instanceSpanOf(
  line: Record<string, unknown>,
  source: Pick<SpanFacts, 'deploymentId' | 'server' | 'environment' | 'instance'>,
): InstanceSpan | undefined {
  const { trace_id: traceId, span_id: spanId, parent_span_id: parentId, start, end, status } = line;
  if (typeof traceId !== 'string' || !TRACE_ID.test(traceId)) return undefined;
  if (typeof spanId !== 'string' || !SPAN_ID.test(spanId)) return undefined;
  if (typeof parentId !== 'string' || !SPAN_ID.test(parentId)) return undefined;
  if (typeof start !== 'number' || typeof end !== 'number' || !Number.isFinite(start) || !Number.isFinite(end))
    return undefined;
  if (end < start || end - start > MAX_SPAN_MS) return undefined;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) return undefined;
  const method = textOf(line.rpc);
  const facts: SpanFacts = { ...source, httpMethod: textOf(line.http_method) ?? 'POST', method, status };
  const target = textOf(line.target);
  if (target !== undefined) facts.target = target;
  const rpcId = typeof line.rpc_id === 'number' && Number.isFinite(line.rpc_id) ? line.rpc_id : textOf(line.rpc_id);
  if (rpcId !== undefined) facts.rpcId = rpcId;
  const session = textOf(line.session);
  if (session !== undefined) facts.session = session;
  if (method === 'tools/call') facts.toolError = line.is_error === true;
  return { traceId, spanId, parentId, start, end, facts };
}

function textOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return value.length > MAX_TEXT ? value.slice(0, MAX_TEXT) : value;
}

/**
 * The target of a request the gateway's inspection leaves out: a prompt's name or a resource's
 * URI, and a `traceparent` the client sent in `params._meta` instead of a header. Read only when
 * tracing, and only from a body that can hold one.
 */
export function bodyTraceFacts(
  method: string | undefined,
  text: string,
): { target?: string; traceparent?: string } | undefined {
  const wantsTarget = method === 'prompts/get' || method === 'resources/read';
  if (!wantsTarget && !text.includes('"traceparent"')) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  const params = isObject(message) && isObject(message.params) ? message.params : undefined;
  if (params === undefined) return undefined;
  const facts: { target?: string; traceparent?: string } = {};
  const target = textOf(method === 'prompts/get' ? params.name : method === 'resources/read' ? params.uri : undefined);
  if (target !== undefined) facts.target = target;
  const meta = isObject(params._meta) ? params._meta : undefined;
  if (typeof meta?.traceparent === 'string') facts.traceparent = meta.traceparent;
  return facts;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
