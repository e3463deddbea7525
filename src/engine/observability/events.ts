/**
 * What the engine's observers see: each request the gateway passed to a deployment (RequestEvent)
 * and, when they ask, the deployments as they are (DeploymentSnapshot). The Prometheus exposition,
 * the metrics history, usage and alerts each register an observer; the gateway calls them all
 * once per request, after the answer, and an observer that throws is not the request's problem.
 */

/** One request a deployment's gateway handled. */
export interface RequestEvent {
  deploymentId: string;
  /** the server's name */
  server: string;
  environment: string;
  /** when the request arrived, ms since the epoch */
  at: number;
  latencyMs: number;
  /** the HTTP status sent to the client (499: it went away first) */
  status: number;
  /** the JSON-RPC method of a single request; 'batch'; undefined when not JSON-RPC */
  method?: string;
  /** tools/call: the tool's name */
  tool?: string;
  /** tools/call: the call failed (an error status, a JSON-RPC error or `isError`) */
  toolError?: boolean;
  /** the bytes of the request's body */
  bytesIn?: number;
  /** the MCP session the request belongs to, when it names one */
  session?: string;
  /** the MCP client: the `clientInfo` of the session's `initialize` (or of this one), when it gave one */
  client?: { name: string; version?: string };
  /** the caller as the deployment's auth validated it at the gateway; never an identity the client asserts */
  user?: string;
}

/** One deployment the engine holds in memory, as it is now. */
export interface DeploymentSnapshot {
  deploymentId: string;
  server: string;
  environment: string;
  status: string;
  desired: number;
  instances: Array<{ id: string; state: string; restarts: number }>;
}

export interface RequestObserver {
  request(event: RequestEvent): void;
}

/** The observers of one engine; the gateway reports to it. */
export class Observers implements RequestObserver {
  private readonly list: RequestObserver[] = [];
  private readonly failed = new WeakSet<RequestObserver>();
  /** called with each observer's error, at most once per observer (a broken one must not flood the log) */
  constructor(private readonly onError: (error: unknown) => void = () => {}) {}

  add(observer: RequestObserver): () => void {
    this.list.push(observer);
    return () => {
      const at = this.list.indexOf(observer);
      if (at !== -1) this.list.splice(at, 1);
    };
  }

  get size(): number {
    return this.list.length;
  }

  request(event: RequestEvent): void {
    for (const observer of this.list) {
      try {
        observer.request(event);
      } catch (error) {
        if (this.failed.has(observer)) continue;
        this.failed.add(observer);
        this.onError(error);
      }
    }
  }
}

export { errorTypeOf, type ErrorType } from '../../shared/mcp-metrics.js';
