/**
 * What the standard headers of a request of the 2026-07-28 protocol revision tell the gateway:
 * `Mcp-Method` names the JSON-RPC method and `Mcp-Name` the tool, prompt, resource or task it acts
 * on, so the gateway can route and count the request without parsing its body. Pure.
 *
 * The gateway checks only what it relies on: that the headers it reads are well formed (a method
 * name, a name that decodes). Whether they agree with the body, and whether a request carries
 * them at all, is the instance's to check (the MCP SDK answers 400 with HeaderMismatch, -32020,
 * as the revision says): the gateway would have to parse the body to know, and a notification
 * needs neither header. A request without `Mcp-Method` goes the way of a 2025 one (its body is read).
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The first revision whose requests carry `Mcp-Method` and `Mcp-Name` (and no session). */
export const FIRST_STATELESS_REVISION = '2026-07-28';

/** JSON-RPC's code for headers that disagree with the body or cannot be read (SEP-2243). */
export const HEADER_MISMATCH_CODE = -32020;

/** The longest `Mcp-Method` or decoded `Mcp-Name` the gateway takes (both end up in metrics and logs). */
export const MAX_HEADER_NAME = 512;

export type StandardHeaders =
  /** not a request of the 2026-07-28 revision, or one without `Mcp-Method`: its body is read */
  | { kind: 'body' }
  /** the method, and (when the request has one) the decoded name it acts on */
  | { kind: 'headers'; method: string; name?: string }
  /** a header the gateway relies on is not well formed: answered 400 */
  | { kind: 'malformed'; message: string };

const DATE_REVISION = /^\d{4}-\d{2}-\d{2}$/;
/** a method name: printable ASCII without spaces (what a JSON-RPC method of MCP is made of) */
const METHOD_NAME = /^[\x21-\x7e]+$/;
const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const BASE64_CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// eslint-disable-next-line no-control-regex -- control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Whether `version` (an MCP-Protocol-Version header) names the 2026-07-28 revision or a later one. */
export function isStatelessRevision(version: string | undefined): boolean {
  return version !== undefined && DATE_REVISION.test(version) && version >= FIRST_STATELESS_REVISION;
}

/** What the standard headers of a POST say; `{ kind: 'body' }` for anything else. */
export function readStandardHeaders(httpMethod: string | undefined, headers: IncomingHttpHeaders): StandardHeaders {
  if (httpMethod !== 'POST') return { kind: 'body' };
  const version = headers['mcp-protocol-version'];
  if (typeof version !== 'string' || !isStatelessRevision(version.trim())) return { kind: 'body' };
  const method = headers['mcp-method'];
  if (typeof method !== 'string') return { kind: 'body' };
  const trimmed = method.trim();
  if (trimmed.length > MAX_HEADER_NAME || !METHOD_NAME.test(trimmed))
    return { kind: 'malformed', message: 'the Mcp-Method header is not a method name' };
  const name = headers['mcp-name'];
  if (typeof name !== 'string') return { kind: 'headers', method: trimmed };
  const decoded = decodeName(name.trim());
  if (decoded === undefined)
    return { kind: 'malformed', message: 'the Mcp-Name header carries an invalid Base64 value' };
  if (decoded.length > MAX_HEADER_NAME || CONTROL.test(decoded))
    return {
      kind: 'malformed',
      message: `the Mcp-Name header is over ${MAX_HEADER_NAME} characters or has control characters`,
    };
  return { kind: 'headers', method: trimmed, name: decoded };
}

/** A header value as sent: plain, or `=?base64?…?=` for a value a header cannot carry as it is. */
export function decodeName(value: string): string | undefined {
  if (!(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX) && value.length >= 11)) return value;
  const base64 = value.slice(BASE64_PREFIX.length, value.length - BASE64_SUFFIX.length);
  if (!BASE64_CANONICAL.test(base64)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(base64, 'base64'));
  } catch {
    return undefined;
  }
}
