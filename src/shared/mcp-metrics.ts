/**
 * The MCP operation metric as the engine's exposition and a runtime's own (on a cluster) both
 * write it: OpenTelemetry's `mcp.server.operation.duration` in Prometheus naming, its buckets, its
 * labels, and the request's `error.type` (one vocabulary for the metrics, traces, history and
 * alert rules). Pure: no IO.
 */

/** The histogram's name. */
export const OPERATION_DURATION = 'mcp_server_operation_duration_seconds';
export const OPERATION_DURATION_HELP =
  'Duration of MCP requests as the server answered them (OpenTelemetry mcp.server.operation.duration)';

/** Seconds: from 5 ms (a cached answer) to 30 s (a slow tool). */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The method label of a request that was not JSON-RPC. */
export const NO_METHOD = '(none)';
/** Distinct tool names a deployment's series keep; the same limit as the usage tally's. */
export const MAX_TOOLS = 100;
/** Distinct JSON-RPC method names a deployment's series keep (MCP has about twenty). */
export const MAX_METHODS = 40;
/** What a name past the limit is counted as. */
export const OTHER_NAMES = '(other names)';

export type ErrorType = 'tool_error' | 'client_gone' | 'http_4xx' | 'http_5xx';

/**
 * The request's `error.type` (OpenTelemetry's attribute; `error_type` in Prometheus), or undefined
 * when it succeeded: `tool_error` for a tools/call whose result is an error, `client_gone` when
 * the client left before the answer, `http_4xx`/`http_5xx` for an error status from the gateway
 * or the instance.
 */
export function errorTypeOf(event: { status: number; toolError?: boolean | undefined }): ErrorType | undefined {
  if (event.status === 499) return 'client_gone';
  if (event.status >= 500 || event.status === 0) return 'http_5xx';
  if (event.status >= 400) return 'http_4xx';
  if (event.toolError === true) return 'tool_error';
  return undefined;
}
