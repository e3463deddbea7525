/**
 * The gateway's own answers to MCP requests it does not pass on: JSON-RPC errors with the request's
 * id when it was read, and the "Session not found" a client takes as the sign to initialize again.
 * Every one carries the request's X-Request-Id, as every answer of the gateway does.
 */
import type { ServerResponse } from 'node:http';
import { sendJson } from '../../shared/http.js';
import type { McpRequestInfo } from './mcp-messages.js';

/**
 * An MCP client understands a JSON-RPC error better than a bare HTTP one; with the id of its
 * request (when it was read), so the client can match the answer to the call.
 */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: { [name: string]: string } = {},
  id: McpRequestInfo['id'] = null,
  code = -32000,
): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: id ?? null }, { headers });
}

/** The gateway's own answer to a request it did not pass on (an error), with the request's id as every answer has. */
export function refuse(
  res: ServerResponse,
  requestId: string,
  status: number,
  message: string,
  id: McpRequestInfo['id'] = null,
  headers: { [name: string]: string } = {},
  code?: number,
): void {
  sendRpcError(res, status, message, { ...headers, 'X-Request-Id': requestId }, id, code);
}

/**
 * A session whose instance is gone: 404 with the code and words of the SDK's own answer ("Session not
 * found"), so a client recognises it and initialises again, as the Streamable HTTP transport says.
 */
export function sendSessionGone(
  res: ServerResponse,
  requestId: string,
  session: string | undefined,
  why: string,
  id: McpRequestInfo['id'],
): void {
  sendJson(
    res,
    404,
    {
      jsonrpc: '2.0',
      error: {
        code: -32001,
        message: `Session not found: session ${session ?? ''} is gone, the instance that held it ${why}; initialize a new session`,
      },
      id: id ?? null,
    },
    { headers: { 'X-Request-Id': requestId } },
  );
}
