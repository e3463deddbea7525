/**
 * Requests of the 2026-07-28 revision in plain JSON-RPC over fetch, for tests that check the wire:
 * the version, client and capabilities travel in `_meta`; the method and the tool, prompt or task
 * in the `Mcp-Method` / `Mcp-Name` headers.
 */

export const MODERN = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface ModernClient {
  /** named in `clientInfo` */
  client?: string;
  capabilities?: Record<string, unknown>;
  /** the X-MCP-User-Id header (a server without auth takes it as the caller) */
  user?: string;
  id?: number | string;
  /** more headers, or other values of the standard ones */
  headers?: Record<string, string>;
}

/** The capabilities of a client that declares the tasks extension (unless `tasks` is false) and maybe elicitation. */
export function taskClientCapabilities(options: { tasks?: boolean; elicitation?: boolean }): Record<string, unknown> {
  return {
    ...(options.tasks === false ? {} : { extensions: { [TASKS_EXTENSION]: {} } }),
    ...(options.elicitation === true ? { elicitation: {} } : {}),
  };
}

/** The fetch options of one request; `Mcp-Name` is the params' `name`, `uri` or `taskId`. */
export function modernRequest(method: string, params: Record<string, unknown>, who: ModernClient = {}): RequestInit {
  const name = [params.name, params.uri, params.taskId].find((value) => typeof value === 'string');
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
      ...(who.user === undefined ? {} : { 'x-mcp-user-id': who.user }),
      ...who.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: who.id ?? 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: who.client ?? 'test-client', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': who.capabilities ?? {},
        },
      },
    }),
  };
}

export interface ModernReply<Result = Record<string, unknown>> {
  status: number;
  result?: Result;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** Sends one request; the reply is a JSON body or the last message of an event stream. */
export async function modernRpc<Result = Record<string, unknown>>(
  mcpUrl: string,
  method: string,
  params: Record<string, unknown>,
  who: ModernClient = {},
): Promise<ModernReply<Result>> {
  const response = await fetch(mcpUrl, modernRequest(method, params, who));
  const text = await response.text();
  const json = text.startsWith('{')
    ? text
    : (
        text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .pop() ?? ''
      ).slice(5);
  try {
    return { status: response.status, ...(JSON.parse(json) as Omit<ModernReply<Result>, 'status'>) };
  } catch {
    throw new Error(`${method}: ${response.status} ${text.slice(0, 300)}`);
  }
}
