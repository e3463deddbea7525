/**
 * A runtime's own Prometheus exposition, for a cluster, where no engine stands in front of it:
 * with `--metrics-port` (which `mcpctl export kubernetes` sets) the process answers `GET /metrics`
 * on that port, and only there, with the MCP operation histogram of the requests it served: the
 * names and labels of the engine's exposition (docs/observability.md) but `deployment` (on a
 * cluster the pod and its labels say which). Only counts, durations and tool names: nothing a
 * request carried. prom-client (a registry of its own) is loaded only when the option is given.
 * Label values are bounded as the engine's are: past MAX_METHODS methods or MAX_TOOLS tools, the
 * rest are counted under OTHER_NAMES.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Histogram } from 'prom-client';
import {
  DURATION_BUCKETS,
  errorTypeOf,
  MAX_METHODS,
  MAX_TOOLS,
  NO_METHOD,
  OPERATION_DURATION,
  OPERATION_DURATION_HELP,
  OTHER_NAMES,
} from '../../shared/mcp-metrics.js';

/** One request the runtime finished serving. */
export interface FinishedRequest {
  /** the JSON-RPC method ('batch'; undefined when not JSON-RPC) */
  rpc: string | undefined;
  /** tools/call: the tool */
  tool: string | undefined;
  /** tools/call: its result is an error */
  toolError: boolean;
  status: number;
  /** the client went away before the answer was sent */
  clientGone: boolean;
  seconds: number;
}

export interface RuntimeMetrics {
  readonly port: number;
  observe(request: FinishedRequest): void;
  close(): Promise<void>;
}

export interface RuntimeMetricsOptions {
  port: number;
  host: string;
  server: string;
  environment: string;
}

type Labels = 'server' | 'environment' | 'mcp_method_name' | 'gen_ai_tool_name' | 'error_type';

/** Starts listening; rejects when the port cannot be had. */
export async function startRuntimeMetrics(options: RuntimeMetricsOptions): Promise<RuntimeMetrics> {
  const prom = await import('prom-client');
  const registry = new prom.Registry();
  const histogram: Histogram<Labels> = new prom.Histogram({
    name: OPERATION_DURATION,
    help: OPERATION_DURATION_HELP,
    labelNames: ['server', 'environment', 'mcp_method_name', 'gen_ai_tool_name', 'error_type'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const names = boundedNames();
  const http = createServer((req, res) => void answer(req, res, registry));
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : options.port,
    observe(request) {
      const method = names.method(request.rpc ?? NO_METHOD);
      const tool = request.rpc === 'tools/call' && request.tool !== undefined ? names.tool(request.tool) : '';
      const status = request.clientGone ? 499 : request.status;
      histogram.observe(
        {
          server: options.server,
          environment: options.environment,
          mcp_method_name: method,
          gen_ai_tool_name: tool,
          error_type: errorTypeOf({ status, toolError: request.toolError }) ?? '',
        },
        request.seconds,
      );
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  registry: { metrics(): Promise<string>; contentType: string },
): Promise<void> {
  req.resume();
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return void res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
  const text = await registry.metrics();
  res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** Method and tool names as labels: the first ones as they are, later ones as OTHER_NAMES. */
function boundedNames() {
  const methods = new Set<string>();
  const tools = new Set<string>();
  const bounded = (seen: Set<string>, limit: number) => (name: string) => {
    if (seen.has(name)) return name;
    if (seen.size >= limit) return OTHER_NAMES;
    seen.add(name);
    return name;
  };
  return { method: bounded(methods, MAX_METHODS), tool: bounded(tools, MAX_TOOLS) };
}
