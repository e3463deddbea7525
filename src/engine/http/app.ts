/**
 * The engine's HTTP layer: a Node `(req, res)` handler built from its services. Every request goes
 * through one pipeline of steps (pipeline.ts): request id → path → host → /metrics → the dashboard
 * (/ui) → data plane → origin → draining → auth (API key or dashboard session) → rate limit → route
 * → body (media type, size) → idempotency → body (JSON, contract) → the operation → envelope.
 * Anything else not under /v1 is the data plane and goes to the deployment service.
 *
 * No framework: the routes are few, and owning the pipeline keeps every error on the documented
 * code and status (docs/api.md) without adapting a framework's own error answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Admission } from '../admission.js';
import type { IsolationReport } from '../isolation.js';
import type { WarmPoolStats } from '../runners/process/warm-pool.js';
import { DEFAULT_LIMITS, type EngineLimits } from '../engine-limits.js';
import { digest } from './api-key-check.js';
import { answerFailure, Exchange } from './exchange.js';
import { createHostPolicy, type HostPolicy } from './hosts.js';
import { Idempotency } from './idempotency.js';
import { FailureLimiter } from './failure-limit.js';
import { runSteps, type PipelineParts } from './pipeline.js';
import { RateLimiter } from './rate-limit.js';
import type { Reply } from './respond.js';
import { createRoutes, type RouteDeps } from './routes.js';
import type { BuildService, DeploymentService, TestService } from '../services.js';
import type { Logger } from '../engine-log.js';
import type { Store } from '../store/store.js';
import type { HistoryReader } from '../observability/history.js';
import type { MetricsEndpoint } from '../observability/prometheus-endpoint.js';
import { defaultUiDir } from './ui-assets.js';
import { DASHBOARD_CODES_PATH, dashboardCodesRoute, UiSessions } from './ui-session.js';

export {
  answerClientError,
  createEngineServer,
  engineServerOptions,
  wireEngineServer,
  type HttpServerLimits,
} from './engine-server.js';

export interface AppOptions {
  store: Store;
  builds: BuildService;
  /** absent until deployments are available: the deploy routes then answer 501 */
  deployments?: DeploymentService | undefined;
  /** absent until the test agent is available: POST /v1/test then answers 501 */
  tests?: TestService | undefined;
  /** the engine's queues, shown by /v1/health */
  admission?: Admission | undefined;
  /** the warm runtime processes, shown by /v1/health */
  warmPool?: { stats(): WarmPoolStats } | undefined;
  /** what runtime processes run under, shown by /v1/health */
  isolation?: IsolationReport | undefined;
  /** the Host names answered (DNS-rebinding protection); default: the loopback names */
  hosts?: HostPolicy;
  /** the engine's public URL: pages of its origin may call the API */
  publicUrl?: string | undefined;
  apiKey: string;
  version: string;
  logger: Logger;
  limits?: Partial<EngineLimits>;
  /** milliseconds since the epoch */
  clock?: () => number;
  /** the engine's alerts, for GET /v1/alerts */
  alerts?: RouteDeps['alerts'];
  /** the metrics history and usage: `?since=` of the metrics, and /usage */
  history?: HistoryReader | undefined;
  /** DELETE of deployments and servers; absent: those answer 501 */
  housekeeping?: RouteDeps['housekeeping'];
  /** the store's files moved aside because they could not be read, shown by /v1/health */
  unreadable?: RouteDeps['unreadable'];
  /** GET /metrics (Prometheus), for the API key or the metrics token */
  metrics?: Pick<MetricsEndpoint, 'serve'> | undefined;
  /** the dashboard's files served under /ui; default: the package's dist/ui/ */
  uiDir?: string | undefined;
}

export interface App {
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** While draining (the engine is stopping) every /v1 request is `503 unavailable`. */
  setDraining(draining: boolean): void;
}

export function createApp(options: AppOptions): App {
  const clock = options.clock ?? Date.now;
  const logger = options.logger;
  let draining = false;
  const parts = pipelineParts(options, clock, () => draining);

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const exchange = new Exchange(req, res, logger, clock);
    try {
      await runSteps(exchange, parts);
    } catch (error) {
      await answerFailure(exchange, error);
    } finally {
      await exchange.claim?.finish(undefined);
      exchange.logAnswered();
    }
  };

  return Object.assign(handler, {
    setDraining(value: boolean) {
      draining = value;
    },
  });
}

function pipelineParts(options: AppOptions, clock: () => number, isDraining: () => boolean): PipelineParts {
  const limits: EngineLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const router = createRoutes({
    store: options.store,
    builds: options.builds,
    deployments: options.deployments,
    tests: options.tests,
    admission: options.admission,
    warmPool: options.warmPool,
    isolation: options.isolation,
    version: options.version,
    limits,
    clock,
    startedAt: clock(),
    isDraining,
    history: options.history,
    alerts: options.alerts,
    housekeeping: options.housekeeping,
    unreadable: options.unreadable,
  });
  const sessions = new UiSessions({}, clock);
  router.add('POST', DASHBOARD_CODES_PATH, dashboardCodesRoute(sessions, options.publicUrl));
  const keyDigest = digest(options.apiKey);
  const failures = new FailureLimiter({ maxFailures: limits.authFailures }, clock);
  return {
    deployments: options.deployments,
    publicUrl: options.publicUrl,
    hosts: options.hosts ?? createHostPolicy({ bindHost: '127.0.0.1' }),
    keyDigest,
    metrics: options.metrics,
    failures,
    ui: {
      sessions,
      keyDigest,
      failures,
      publicUrl: options.publicUrl,
      bodyBytes: UI_LOGIN_BYTES,
      dir: options.uiDir ?? defaultUiDir(),
    },
    limiter: new RateLimiter(limits.rateCapacity, limits.ratePerSecond, clock),
    router,
    idempotency: new Idempotency(options.store),
    limits,
    isDraining,
  };
}

/** A login is a code or a key: a few hundred bytes at most. */
const UI_LOGIN_BYTES = 16 * 1024;

export type { Reply };
