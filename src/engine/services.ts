/**
 * The services the engine's HTTP layer calls: builds, deployments, tests. `createApp({ store,
 * builds, deployments, tests, ... })` depends on these interfaces only, so each service can be
 * built, replaced and tested on its own.
 */
import type { DeploymentSnapshot, Observers } from './observability/events.js';
import type { Tracing } from './observability/tracing.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IsolationReport } from './isolation.js';
import type { WorkQueue } from './admission.js';
import type { Runner } from './runners/runner.js';
import type { SecretRegistry } from './secret-registry.js';
import type { Logger } from './engine-log.js';
import type { ServerRecord } from './records.js';
import type { Store } from './store/store.js';
import type { RuntimeProcess, StartRuntimeOptions, startRuntimeProcess } from '../runtime/host/process.js';
import type {
  BuildRequest,
  Deployment,
  DeployRequest,
  LogLine,
  Metrics,
  ModelList,
  ModelStatus,
  TestRequest,
  TestResult,
} from '../api/contract.js';

export interface BuildService {
  /** validates, writes the bundle, smoke-starts it; resolves with the stored record or throws ServiceError('build_failed') */
  build(request: BuildRequest): Promise<ServerRecord>;
  /** waits for the checks under way, and until their processes are gone (a build answers before its check process has stopped) */
  close?(): Promise<void>;
}

/** What a read of a deployment's log asks for. */
export interface LogReadOptions {
  since?: string;
  limit?: number;
  filter?: ((line: LogLine) => boolean) | undefined;
}

export interface DeploymentService {
  /** starts a deployment and answers at once (deploying); waitForChange follows it to deployed or failed */
  deploy(server: ServerRecord, request: DeployRequest): Promise<Deployment>;
  /** the live view of a deployment (instances, stage) */
  status(deploymentId: string): Promise<Deployment | undefined>;
  /**
   * long-poll: resolves with the deployment when it next changes, or as it is after `timeoutMs`;
   * with `unchanged`, when the deployment no longer looks unchanged to it (a change it cannot
   * tell from what the caller has does not end the wait)
   */
  waitForChange(
    deploymentId: string,
    timeoutMs: number,
    signal?: AbortSignal,
    unchanged?: (deployment: Deployment) => boolean,
  ): Promise<Deployment | undefined>;
  stop(deploymentId: string): Promise<Deployment>;
  /** forgets a stopped or failed deployment (record and logs) and answers it as it was; `conflict` while it runs */
  remove?(deploymentId: string): Promise<Deployment>;
  /** like deploy: answers at once with the new deployment (deploying) */
  rollback(deploymentId: string): Promise<Deployment>;
  /** the newest `limit` lines at or after `since` that pass `filter` */
  logs(deploymentId: string, options: LogReadOptions): Promise<LogLine[]>;
  /** follows new log lines until the deployment stops or fails (or is not running here), or the signal aborts */
  followLogs(deploymentId: string, onLine: (line: LogLine) => void, signal: AbortSignal): Promise<void>;
  metrics(deploymentId: string, windowSeconds: number): Promise<Metrics>;
  /** the deployments in memory as they are now (the observers' view) */
  snapshot?(): DeploymentSnapshot[];
  /**
   * the data plane: requests under the gateway prefix or for a custom domain; false when not ours.
   * `requestId` (the engine's id of the request) goes on every answer and to the instance.
   */
  handleGateway(req: IncomingMessage, res: ServerResponse, requestId?: string): Promise<boolean>;
  /** whether `host` (lower case, no port) is the domain of one of its deployments: a Host the engine answers */
  servesDomain?(host: string): boolean;
  /** on engine start, before any request is answered: settle what the last stop interrupted */
  recover?(): Promise<void>;
  /** on engine start: bring back every deployment that was deployed */
  restore(): Promise<void>;
  /** on engine stop: stop instances, keep records */
  close(): Promise<void>;
}

export interface TestService {
  test(server: ServerRecord, request: TestRequest): Promise<TestResult>;
  /** the models, whether each can run with the engine's environment, and the settings' wrong entries */
  models(): ModelStatus[] | Promise<ModelList>;
  /** reads the model settings again and takes the keys handed over (POST /v1/engine/reload) */
  reload?(env?: Record<string, string>): Promise<ModelList>;
  /** waits until the instances of finished runs are gone (a run answers before its instance has stopped) */
  close?(): Promise<void>;
}

/** The runtime's process starter (src/runtime/host/process.ts), as deployments and builds use it. */
export type RuntimeProcessOptions = StartRuntimeOptions;

export type RuntimeProcessHandle = RuntimeProcess;

export type StartRuntimeProcess = typeof startRuntimeProcess;

/**
 * What the engine passes to `createDeploymentService(deps)` of `src/engine/deployments/index.ts`.
 * The engine calls `restore()` once it listens and `close()` when it stops.
 */
export interface DeploymentServiceDeps {
  store: Store;
  /** MCPCTL_HOME: the engine's state folder */
  home: string;
  /** the engine's own address, such as http://127.0.0.1:47321 (no trailing slash); deployment URLs start with it */
  baseUrl: string;
  logger: Logger;
  /** the engine's environment (MCPCTL_DEV_IDLE_MINUTES and the like) */
  env: Record<string, string | undefined>;
  /** the runtime's process starter: the process runner runs instances with it */
  startRuntime: StartRuntimeProcess;
  /** what runs instances; default: the process runner with `startRuntime` */
  runner?: Runner;
  /** the engine's HTTPS listener, when it has certificates (src/engine/http/tls.ts) */
  https?: HttpsEndpoint;
  /** the engine listens on an address beyond loopback: every deployment must say who may call it (exposure.ts) */
  exposed?: boolean;
  /** what the process runner's instances run under (isolation.ts): weaker than asked is a notice */
  isolation?: IsolationReport;
  /** the engine's start queue (src/engine/admission.ts); default: one sized to the machine */
  starts?: WorkQueue;
  /** milliseconds since the epoch; tests pass their own */
  clock: () => number;
  /** the engine's one set of values hidden from every log line and answer; default: a set of the service's own */
  secrets?: SecretRegistry;
  /** told of every request the gateway passes to a deployment (metrics, history, usage, alerts) */
  observers?: Observers;
  /** the engine's traces, when it exports them: the gateway's spans, and the spans its instances report */
  tracing?: Tracing | undefined;
  /** the engine sends alerts to a channel: production deploys no longer say they are not watched */
  alerting?: boolean;
}

/** The engine's HTTPS listener, as deployments see it: its address and which names its certificates cover. */
export interface HttpsEndpoint {
  /** such as https://127.0.0.1:7443 */
  url: string;
  port: number;
  /** whether a client asking for this host name gets a certificate valid for it */
  covers(host: string): boolean;
}
