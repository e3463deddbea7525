/**
 * The `Mcp-Param-*` headers of a 2026-07-28 `tools/call`: a client sends the arguments a tool
 * annotates with `x-mcp-header` as headers too, so what sits between it and the server (a proxy,
 * a gateway, a firewall) can route or filter on them without reading the body. The server holds
 * them to the body: a header that is missing, malformed or says something else is refused (400,
 * HeaderMismatch), or a proxy could be shown one value while the tool runs with another. A value
 * may travel Base64-encoded as `=?base64?...?=` (for what a header cannot carry); anything else is
 * taken as it is. Older clients send no such headers and are not asked for them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import type { HeaderParam } from '../../definition/header-params.js';
import { sendJson } from '../../shared/http.js';
import type { CompiledTool } from './tools.js';
import type { RequestRecord } from './tracing.js';

/** The JSON-RPC error of a header that disagrees with the body (the 2026-07-28 revision's HeaderMismatch). */
export const HEADER_MISMATCH = -32020;
const HEADER_PREFIX = 'mcp-param-';
const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** Why the headers of a call disagree with its arguments, or undefined when they agree. */
export function paramHeaderProblem(
  params: readonly HeaderParam[],
  args: unknown,
  headerOf: (name: string) => string | undefined,
): { header: string; message: string } | undefined {
  for (const param of params) {
    const value = valueAt(args, param.path);
    const expected = asHeaderText(value);
    // an argument the call leaves out (or sets to null) has no header to agree with
    if (expected === undefined) continue;
    const header = `Mcp-Param-${param.header}`;
    const sent = headerOf(`${HEADER_PREFIX}${param.header.toLowerCase()}`);
    const where = param.path.join('.');
    if (sent === undefined)
      return { header, message: `the arguments set ${where} but the ${header} header is missing` };
    const decoded = decodeHeaderValue(sent);
    if (decoded === undefined)
      return { header, message: `the ${header} header is not valid Base64 of UTF-8 text inside =?base64?...?=` };
    const same =
      param.type === 'integer' && typeof value === 'number' && DECIMAL.test(decoded)
        ? Number(decoded) === value
        : decoded === expected;
    if (!same)
      return {
        header,
        message: `the ${header} header says ${JSON.stringify(decoded)} but ${where} is ${JSON.stringify(value)}`,
      };
  }
  return undefined;
}

/**
 * Refuses a 2026-07-28 `tools/call` whose `Mcp-Param-*` headers disagree with its arguments;
 * true when it answered the request.
 */
export function rejectParamHeaderMismatch(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  tools: ReadonlyMap<string, CompiledTool>,
  record: RequestRecord | undefined,
): boolean {
  const call = modernToolCall(body);
  if (call === undefined) return false;
  const tool = tools.get(call.name);
  if (tool === undefined || tool.headerParams.length === 0) return false;
  const problem = paramHeaderProblem(tool.headerParams, call.arguments, (name) => {
    const value = req.headers[name];
    return typeof value === 'string' ? value.trim() : undefined;
  });
  if (problem === undefined) return false;
  const message = `Bad Request: the request headers and body disagree: ${problem.message}`;
  if (record !== undefined) record.error = message;
  sendJson(res, 400, {
    jsonrpc: '2.0',
    id: call.id,
    error: { code: HEADER_MISMATCH, message, data: { mismatch: { header: problem.header, body: problem.message } } },
  });
  return true;
}

/** A single `tools/call` that claims a revision in its `_meta` (only 2026-07-28 clients do), or undefined. */
function modernToolCall(body: unknown): { id: unknown; name: string; arguments: unknown } | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, params, id } = body as { method?: unknown; params?: unknown; id?: unknown };
  if (method !== 'tools/call' || params === null || typeof params !== 'object') return undefined;
  const { name, arguments: args, _meta: meta } = params as { name?: unknown; arguments?: unknown; _meta?: unknown };
  if (typeof name !== 'string' || meta === null || typeof meta !== 'object') return undefined;
  if (typeof (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] !== 'string') return undefined;
  return { id: id ?? null, name, arguments: args };
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** An argument as its header carries it: strings as they are, numbers in decimal, booleans as true/false. */
function asHeaderText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A header's value: the text inside `=?base64?...?=` (canonical Base64 of UTF-8), else the value itself. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith(BASE64_PREFIX) || !value.endsWith(BASE64_SUFFIX) || value.length < 11) return value;
  const encoded = value.slice(BASE64_PREFIX.length, value.length - BASE64_SUFFIX.length);
  if (!CANONICAL_BASE64.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}
