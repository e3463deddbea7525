/**
 * The shapes of a runtime: the definition it serves, the options it starts with, and the
 * object it is once started (a handler for HTTP, a server factory for stdio, drain and close).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/server';
import type { BuildRequest } from '../../api/contract.js';
import type { Env } from '../../definition/interpolate.js';
import type { HealthBody } from './http-front.js';
import type { RuntimeLogger } from './logger.js';
import type { FinishedRequest } from './metrics.js';
import type { TaskLiveness } from './task-store.js';

/** What the runtime serves: a build request without its files (those are in `dir`). */
export type RuntimeDefinition = Omit<BuildRequest, 'files'>;

export interface RuntimeOptions {
  /** folder holding the definition's files (a bundle's `files/`, or the definition's folder) */
  dir: string;
  /** environment for `${VAR}` references (a deployment's env_vars); exec handlers get PATH from it */
  env?: Env;
  logger?: RuntimeLogger;
  /**
   * More values to hide from logs and from the error texts tool calls return, besides what the
   * definition's `${VAR}` references resolve to (which are always hidden): a deployment's
   * environment as a whole.
   */
  secrets?: Iterable<string>;
  /** bearer token required on /mcp, overriding the definition's `auth` */
  token?: string;
  /**
   * Host names accepted in the Host header (DNS rebinding protection). Default: localhost,
   * 127.0.0.1 and [::1]. `false` turns the check off (a server bound to a public interface
   * behind a proxy that sets Host).
   */
  allowedHosts?: string[] | false;
  /** exact origins (`http://localhost:6274`) whose pages may call; default: MCPCTL_ALLOWED_ORIGINS of `env`, else none; `false`: any */
  allowedOrigins?: string[] | false;
  /** the user id when a request names none (for `mcpctl dev --user-id`) */
  defaultUserId?: string;
  maxBodyBytes?: number;
  /** the lists may change while a connection lives (a reloading `mcpctl dev`): declare list_changed to sessions and stdio */
  listChanged?: boolean;
  /** a session unused this long is closed (default 10 minutes) */
  sessionIdleMs?: number;
  /** the runtime this one replaces (a reload): its sessions and connections move to this one */
  adopt?: Runtime;
  /**
   * `http` handlers and `url` resources may reach private and loopback addresses without the
   * definition's `egress` (`mcpctl dev`, on the developer's machine). Default false: every other
   * way a runtime starts (serve-bundle in every runner) applies the definition's policy.
   */
  allowPrivateEgress?: boolean;
  /**
   * Signs the request state of input-required results (2026-07-28 clients), at least 32 bytes:
   * the same for every instance of a deployment. Default: a random key of this process.
   */
  requestStateKey?: string | Uint8Array;
  /**
   * The folder of task state the instances of a deployment share; default: `MCPCTL_TASKS_DIR` of
   * `env`, else memory (this runtime alone)
   */
  tasksDir?: string;
  /**
   * How often the instance running a task shows it is alive in the task folder, and after how long
   * a silence the others answer the task as failed (default: TASK_LIVENESS); tests shorten both
   */
  taskLiveness?: TaskLiveness;
  /** told of every request served but health checks, once its response is closed (a cluster's metrics) */
  observeRequest?: (request: FinishedRequest) => void;
}

export interface Runtime {
  readonly name: string;
  readonly version: string;
  readonly counts: { tools: number; resources: number; prompts: number };
  /** keeps a session per client (the definition's `sessions: true`) */
  readonly sessions: boolean;
  /** serves /mcp and /health; answers 404 for anything else */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** a fresh SDK server for one long-lived connection (stdio uses it directly) */
  createServer(options?: CreateServerOptions): Server;
  health(): HealthBody;
  /** requests being served now (an open session stream is one) */
  readonly inFlight: number;
  /**
   * Refuses new MCP requests and new sessions (503), keeps serving open sessions, and resolves
   * true once in-flight requests are done and every session has ended, false at the time-out.
   */
  drain(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface CreateServerOptions {
  /** the runtime to serve each request from (a newer one after a reload); default: this one */
  follow?: () => Runtime;
}
