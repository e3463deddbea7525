/**
 * What the gateway needs to know about an MCP exchange, read from the small JSON request body
 * and from a copy of the response (plain JSON or an SSE stream). Pure.
 */
import { USER_ID_META_KEY } from '../../runtime/constants.js';
import { isSecretName, mayNameSecret } from '../../shared/secret-name.js';

export interface McpRequestInfo {
  /** JSON-RPC method of a single request; 'batch' for an array; undefined when not JSON-RPC */
  method?: string;
  /** request id; undefined for a notification */
  id?: string | number | null;
  /** tools/call: the tool's name and arguments */
  tool?: string;
  arguments?: unknown;
  /** the client's `clientInfo` (name, version) of an initialize or of the request's `_meta`, cut short */
  client?: { name: string; version?: string };
}

/** The longest client name or version kept from an `initialize`. */
export const MAX_CLIENT_TEXT = 100;

export function inspectRequest(body: string): McpRequestInfo {
  if (body.trim() === '') return {};
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return {};
  }
  if (Array.isArray(message)) return { method: 'batch' };
  if (!isObject(message) || typeof message.method !== 'string') return {};
  const info: McpRequestInfo = { method: message.method };
  if (typeof message.id === 'string' || typeof message.id === 'number' || message.id === null) info.id = message.id;
  if (message.method === 'tools/call' && isObject(message.params)) {
    if (typeof message.params.name === 'string') info.tool = message.params.name;
    info.arguments = message.params.arguments;
  }
  if (isObject(message.params)) {
    // initialize names the client; the 2026-07-28 revision names it on every request, in `_meta`
    const meta = message.params._meta;
    const named = message.method === 'initialize' ? message.params.clientInfo : undefined;
    const client = clientInfoOf(named ?? (isObject(meta) ? meta[CLIENT_INFO_META_KEY] : undefined));
    if (client !== undefined) info.client = client;
  }
  return info;
}

/**
 * A request of the 2026-07-28 revision as its `Mcp-Method` and `Mcp-Name` headers name it
 * (mcp-headers.ts): the method and tool come from them; the body is parsed only when something
 * asks for what only it has (the id of an error the gateway answers itself, the arguments of a
 * traced call, the client a connection has not named yet), once.
 */
export function headerRequestInfo(method: string, name: string | undefined, body: Buffer): McpRequestInfo {
  let parsed: McpRequestInfo | undefined;
  const fromBody = () => (parsed ??= inspectRequest(body.toString('utf8')));
  const info: McpRequestInfo = { method };
  if (method === 'tools/call' && name !== undefined) info.tool = name;
  return Object.defineProperties(info, {
    id: { get: () => fromBody().id, enumerable: true },
    arguments: { get: () => fromBody().arguments, enumerable: true },
    client: { get: () => fromBody().client, enumerable: true },
  });
}

/** Where a request of the 2026-07-28 protocol revision names its client. */
const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';

/** `clientInfo` as the gateway keeps it: printable text only, cut short; undefined without a name. */
function clientInfoOf(value: unknown): { name: string; version?: string } | undefined {
  if (!isObject(value)) return undefined;
  const name = clientText(value.name);
  if (name === undefined) return undefined;
  const version = clientText(value.version);
  return version === undefined ? { name } : { name, version };
}

function clientText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .trim()
    .slice(0, MAX_CLIENT_TEXT);
  return text === '' ? undefined : text;
}

/**
 * Whether the answer to request `id` reports a failure: a JSON-RPC error, or a tool result
 * with `isError: true`. Undefined when the answer is not found in `body` (cut short, not JSON).
 */
export function findCallFailure(
  contentType: string | undefined,
  body: string,
  id: McpRequestInfo['id'],
): boolean | undefined {
  const messages = (contentType ?? '').includes('text/event-stream') ? parseSseMessages(body) : parseJsonMessages(body);
  for (const message of messages) {
    if (!isObject(message) || !('result' in message || 'error' in message)) continue;
    if (id !== undefined && message.id !== id) continue;
    if ('error' in message && message.error !== undefined && message.error !== null) return true;
    return isObject(message.result) && message.result.isError === true;
  }
  return undefined;
}

function parseJsonMessages(body: string): unknown[] {
  try {
    const parsed: unknown = JSON.parse(body);
    return Array.isArray(parsed) ? parsed : [parsed];
  } catch {
    return [];
  }
}

/** The JSON payloads of the `data:` fields of complete SSE events. */
export function parseSseMessages(body: string): unknown[] {
  const messages: unknown[] = [];
  for (const event of body.replace(/\r\n?/g, '\n').split('\n\n')) {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '') continue;
    try {
      messages.push(JSON.parse(data));
    } catch {
      // a partial event at the end of a cut-short copy
    }
  }
  return messages;
}

const MAX_LOGGED_STRING = 500;
const MAX_LOGGED_ITEMS = 50;

/** A copy for debug logs: values under secret-looking keys hidden, long strings cut. */
export function redactForLog(value: unknown, depth = 0): unknown {
  if (typeof value === 'string')
    return value.length > MAX_LOGGED_STRING ? `${value.slice(0, MAX_LOGGED_STRING)}…` : value;
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, MAX_LOGGED_ITEMS).map((item) => redactForLog(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    copy[key] = isSecretName(key) ? '[redacted]' : redactForLog(item, depth + 1);
  return copy;
}

/**
 * Whether a compact JSON text would come out of `redactForLog` (then JSON.stringify) unchanged, checked
 * on the text alone: short enough that no string in it is cut, too few commas for an array to be cut, no escape that
 * could spell a key, and nothing that could name a secret anywhere in it. False does not mean it
 * would change, only that it has to be parsed to know.
 */
export function loggableAsIs(text: string): boolean {
  if (text.length > MAX_LOGGED_STRING || text.includes('\\') || text.includes('\n') || mayNameSecret(text))
    return false;
  let commas = 0;
  // an array of more than MAX_LOGGED_ITEMS items has at least that many commas
  for (let at = text.indexOf(','); at !== -1; at = text.indexOf(',', at + 1))
    if (++commas >= MAX_LOGGED_ITEMS) return false;
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The body without the identity of `_meta["mcpctl/user_id"]` in its params (of each message of a
 * batch); a body that is not JSON goes on as it is, for the instance to refuse.
 */
export function withoutMetaIdentity(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const meta = (message as { params?: { _meta?: { [key: string]: unknown } } } | null)?.params?._meta;
    if (meta !== null && typeof meta === 'object') delete meta[USER_ID_META_KEY];
  }
  return JSON.stringify(parsed);
}
