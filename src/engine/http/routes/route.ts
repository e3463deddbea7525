/**
 * What a /v1 operation is (its body schema, its checks, whether `Idempotency-Key` is honoured, its
 * handler) and what the operations are built from. The pipeline around them is app.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Admission } from '../../admission.js';
import type { IsolationReport } from '../../isolation.js';
import type { WarmPoolStats } from '../../runners/process/warm-pool.js';
import type { EngineLimits } from '../../engine-limits.js';
import type { Reply } from '../respond.js';
import type { Router } from '../router.js';
import type { BuildService, DeploymentService, TestService } from '../../services.js';
import type { Logger } from '../../engine-log.js';
import type { Store } from '../../store/store.js';
import type { AlertList } from '../../../api/alerts.js';
import type { HistoryReader } from '../../observability/history.js';
import type { Housekeeping } from '../../housekeeping.js';
import type { UnreadableFile } from '../../store/unreadable.js';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** the body, validated against the route's schema */
  body: unknown;
  /** aborts when the client goes away */
  signal: AbortSignal;
  log: Logger;
}

export interface Route {
  /** the request body's schema; a route without one takes no body (or an empty object) */
  body?: z.ZodType;
  /** further checks of the validated body (limits the schema cannot say) */
  check?: (body: never) => Array<{ path: string; message: string }>;
  /** `Idempotency-Key` is honoured */
  idempotent?: boolean;
  /** a Reply, or 'streamed' when the route wrote the response itself */
  handle(ctx: RouteContext): Promise<Reply | 'streamed'>;
}

export interface RouteDeps {
  store: Store;
  builds: BuildService;
  deployments: DeploymentService | undefined;
  tests: TestService | undefined;
  version: string;
  limits: EngineLimits;
  clock: () => number;
  startedAt: number;
  isDraining: () => boolean;
  /** the queues of work that needs a process, for /v1/health */
  admission?: Admission | undefined;
  /** the warm runtime processes, for /v1/health */
  warmPool?: { stats(): WarmPoolStats } | undefined;
  /** what runtime processes run under, for /v1/health */
  isolation?: IsolationReport | undefined;
  /** the engine's alerts, for /v1/alerts (src/engine/alerts/) */
  alerts?: { list(deploymentId?: string): AlertList } | undefined;
  /** the metrics history and usage (src/engine/observability/history.ts) */
  history?: HistoryReader | undefined;
  /** removals of deployments and servers (src/engine/housekeeping.ts) */
  housekeeping?: Pick<Housekeeping, 'removeDeployment' | 'removeServer'> | undefined;
  /** the store's files that could not be read and were moved aside, for /v1/health */
  unreadable?: (() => Promise<UnreadableFile[]>) | undefined;
}

/** Adds one resource's operations to the router. */
export type Registrar = (router: Router<Route>, deps: RouteDeps) => void;
