/**
 * Request headers a cross-origin page may send to an MCP endpoint. A 2026-07-28 client sends an
 * argument marked `x-mcp-header` as `Mcp-Param-<Name>`: names no fixed list can hold, so those a
 * preflight asks for are allowed by their form. Pure.
 */

/** The MCP headers of both protocol revisions a page sends besides `authorization` and `content-type`. */
export const MCP_REQUEST_HEADERS = 'mcp-protocol-version, mcp-session-id, last-event-id, mcp-method, mcp-name';

/** The `Mcp-Param-*` names of a preflight's `Access-Control-Request-Headers`, lower-cased. */
export function paramHeadersAsked(requested: string | string[] | undefined): string[] {
  const names = (Array.isArray(requested) ? requested.join(',') : (requested ?? '')).split(',');
  return names.map((name) => name.trim().toLowerCase()).filter((name) => /^mcp-param-[a-z0-9-]{1,100}$/.test(name));
}

/** `Access-Control-Allow-Headers`: the fixed list and the `Mcp-Param-*` headers asked for. */
export function allowHeaders(fixed: string, requested: string | string[] | undefined): string {
  return [fixed, ...paramHeadersAsked(requested)].join(', ');
}
