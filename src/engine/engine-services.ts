/**
 * The services of a running engine, made once it listens: the runtime behind the warm pool, the
 * builder, the runner and the deployment service, the test agent, and the app that answers /v1.
 */
import { createAdmission, type Admission, type WorkQueue } from './admission.js';
import { createBuilder, loadRuntimeModules, type RuntimeModules } from './builder.js';
import type { TestServiceDeps } from './agent/index.js';
import type { EngineLimits } from './engine-limits.js';
import { EngineConfigError } from './engine-errors.js';
import type { Logger } from './engine-log.js';
import type { EngineTls } from './engine-listen.js';
import type { StartEngineOptions } from './engine.js';
import type { HomePaths } from './home.js';
import { createApp, type App } from './http/app.js';
import { engineHostPolicy, listensBeyondLoopback } from './http/exposure.js';
import { isolatedRuntime, type IsolationReport } from './isolation.js';
import { createLocalCredentials, type LocalCredentials } from './local-credentials.js';
import { WarmPool } from './runners/process/warm-pool.js';
import type { Runner } from './runners/runner.js';
import { createRunner, RunnerConfigError, runnerKind } from './runners/select.js';
import { readSettingsFile } from '../shared/settings-file.js';
import { ENGINE_OWNER, type SecretRegistry } from './secret-registry.js';
import type {
  BuildService,
  DeploymentService,
  DeploymentServiceDeps,
  StartRuntimeProcess,
  TestService,
} from './services.js';
import type { FileStore } from './store/file-store.js';
import { listUnreadable } from './store/unreadable.js';
import type { Observers } from './observability/events.js';
import { startTracing, type Tracing } from './observability/tracing.js';
import type { AlertService, AlertSettings } from './alerts/index.js';
import { metricsSettings, startMetrics, type MetricsEndpoint } from './observability/prometheus-endpoint.js';
import type { History } from './observability/history.js';
import { join } from 'node:path';
import { Housekeeping } from './housekeeping.js';

/** What every phase of the start is given. */
export interface EngineBase {
  options: StartEngineOptions;
  paths: HomePaths;
  limits: EngineLimits;
  logger: Logger;
  clock: () => number;
  secrets: SecretRegistry;
  store: FileStore;
  /** the address clients use */
  url: string;
  tls: EngineTls | undefined;
  /** told of every request the gateway passes on (src/engine/observability/) */
  observers: Observers;
}

export interface EngineServices {
  admission: Admission;
  warmPool: WarmPool;
  isolation: IsolationReport;
  builds: BuildService & { close(): Promise<void> };
  deployments: DeploymentService | undefined;
  /** the runner's kind, when there are deployments, and the runner when it is not the process runner */
  chosen: { kind: string; runner?: Runner } | undefined;
  tests: TestService | undefined;
  /** the alert rules' evaluation and delivery (src/engine/alerts/), when there are deployments */
  alerts: AlertService | undefined;
  /** the metrics history and usage (src/engine/observability/history.ts); undefined when it could not open */
  history: History | undefined;
  /** GET /metrics, and its address of its own (src/engine/observability/prometheus-endpoint.ts) */
  metrics: MetricsEndpoint;
  /** OpenTelemetry traces (src/engine/observability/tracing.ts), when an OTLP endpoint is set */
  tracing: Tracing | undefined;
  /** removals asked for (DELETE) and those of the retention (housekeeping.ts) */
  housekeeping: Housekeeping;
}

/** The runtime (isolated, through the warm pool), the admission queues and the services built on them. */
export async function createServices(base: EngineBase): Promise<EngineServices> {
  const { options, paths, limits, logger, clock } = base;
  const { load: loadRuntime, report: isolation } = isolatedRuntime(
    options.runtime ?? loadRuntimeModules,
    options.env,
    paths.home,
  );
  const admission = createAdmission(limits.admission, clock);
  // checked before anything starts: a wide metrics address without a token stops the start
  const metricsConfig = await metricsSettings(options.env, paths.settingsFile);
  // Every start (build checks, test instances, deployments' instances) takes a warm process when it can.
  const warmPool = new WarmPool({
    size: limits.warmPool,
    engine: paths.home,
    load: async () => (await loadRuntime())?.spawnWarmRuntimeProcess,
    busy: () => busyStarting(admission),
    limitsEnforced: isolation.limits !== 'node heap',
    logger: logger.child({ component: 'warm-pool' }),
  });
  const runtime = withWarmPool(loadRuntime, warmPool);
  // one key of the engine's own for the checks and tests of servers with OAuth
  const localCredentials = createLocalCredentials(clock);
  const builds = createBuilder({
    localCredentials,
    store: base.store,
    bundlesDir: paths.bundlesDir,
    baseUrl: base.url,
    version: options.version,
    logger: logger.child({ component: 'builder' }),
    runtime,
    clock,
    queue: admission.builds,
    ...(options.smokeTimeoutMs === undefined ? {} : { smokeTimeoutMs: options.smokeTimeoutMs }),
  });
  // alert channels are checked before anything deploys: a bad one stops the start, naming its field
  const alertSettings = (await import('./alerts/index.js')).readAlertSettings(
    options.env,
    await readSettingsFile(paths.settingsFile),
  );
  // traces only when an OTLP endpoint is set (OpenTelemetry is loaded then); a wrong setting stops the start
  const tracing = await startTracing({
    env: options.env,
    settingsFile: paths.settingsFile,
    version: options.version,
    logger: logger.child({ component: 'tracing' }),
    secrets: base.secrets,
  });
  const { deployments, chosen } = await createDeployments(
    base,
    runtime,
    admission,
    isolation,
    alertSettings.channels.length > 0,
    tracing,
  );
  const tests = await createTests(base, runtime, localCredentials, admission.tests);
  const history = await openHistory(base);
  const metrics = await startMetrics({
    ...metricsConfig,
    apiKey: options.apiKey,
    observers: base.observers,
    logger: logger.child({ component: 'metrics' }),
    clock,
    hideSecret: (value) => base.secrets.add(ENGINE_OWNER, [value]),
    snapshot: () => deployments?.snapshot?.() ?? [],
    admission,
  });
  const alerts = deployments && (await startAlerts(base, deployments, alertSettings));
  const housekeeping = new Housekeeping({
    store: base.store,
    deployments,
    history,
    bundlesDir: paths.bundlesDir,
    logger: logger.child({ component: 'housekeeping' }),
    clock,
    retention: limits.retention,
    everyMs: limits.pruneEveryMs,
  });
  return {
    ...{ admission, warmPool, isolation, builds, deployments, chosen, tests, history, metrics, alerts, tracing },
    housekeeping,
  };
}

/** The metrics history and usage, read back from the store and told of every request from now on. */
async function openHistory(base: EngineBase): Promise<History | undefined> {
  const logger = base.logger.child({ component: 'history' });
  try {
    const { History } = await import('./observability/history.js');
    const history = await History.open({ dir: join(base.paths.storeDir, 'history'), clock: base.clock, logger });
    base.observers.add(history);
    return history;
  } catch (error) {
    logger.error('the metrics history cannot be kept: it could not be opened', { error: String(error) });
    return undefined;
  }
}

async function createDeployments(
  base: EngineBase,
  runtime: () => Promise<RuntimeModules | undefined>,
  admission: Admission,
  isolation: IsolationReport,
  alerting: boolean,
  tracing: Tracing | undefined,
): Promise<Pick<EngineServices, 'deployments' | 'chosen'>> {
  const { options, paths, logger, tls } = base;
  const factory = options.deployments === false ? undefined : (options.deployments ?? (await loadDeploymentFactory()));
  if (factory === undefined) return { deployments: undefined, chosen: undefined };
  // the process runner is the deployment service's default (made with its startRuntime); another is made here
  const chosen = await chosenRunner(options, paths.settingsFile, lazyStartRuntime(runtime), logger);
  const runner = chosen.runner;
  const deployments = await factory({
    store: base.store,
    home: paths.home,
    baseUrl: base.url,
    logger: logger.child({ component: 'deployments' }),
    env: options.env,
    startRuntime: lazyStartRuntime(runtime),
    ...(runner === undefined ? {} : { runner }),
    ...(tls === undefined
      ? {}
      : { https: { url: tls.url, port: tls.port, covers: (host: string) => tls.listener.covers(host) } }),
    exposed: listensBeyondLoopback(options.host, tls?.host),
    isolation,
    starts: admission.starts,
    clock: base.clock,
    secrets: base.secrets,
    observers: base.observers,
    alerting,
    tracing,
  });
  return { deployments, chosen };
}

/** The alert service, evaluating the deployments' rules and sending to the engine's channels. */
async function startAlerts(
  base: EngineBase,
  deployments: DeploymentService,
  settings: AlertSettings,
): Promise<AlertService> {
  return (await import('./alerts/index.js')).startAlerts({
    settings,
    store: base.store,
    deployments,
    observers: base.observers,
    secrets: base.secrets,
    logger: base.logger.child({ component: 'alerts' }),
    clock: base.clock,
    engineUrl: base.url,
    dir: join(base.paths.storeDir, 'alerts'),
  });
}

async function createTests(
  base: EngineBase,
  runtime: () => Promise<RuntimeModules | undefined>,
  localCredentials: LocalCredentials,
  queue: WorkQueue,
): Promise<TestService | undefined> {
  const { options } = base;
  if (options.tests === false) return undefined;
  const agent =
    options.tests ??
    (await loadTestServiceFactory())({
      env: options.env,
      settingsFile: base.paths.settingsFile,
      hideSecret: (value) => base.secrets.add(ENGINE_OWNER, [value]),
      logger: base.logger.child({ component: 'tests' }),
      startRuntime: lazyStartRuntime(runtime),
      version: options.version,
      localCredentials,
      clock: base.clock,
    });
  return queuedTests(agent, queue);
}

/** The app that answers /v1 (and hands the data plane to the deployments). */
export function createEngineApp(base: EngineBase, services: EngineServices): App {
  const { options, tls } = base;
  return createApp({
    store: base.store,
    builds: services.builds,
    deployments: services.deployments,
    tests: services.tests,
    admission: services.admission,
    warmPool: services.warmPool,
    isolation: services.isolation,
    hosts: engineHostPolicy({ host: options.host, tlsHost: tls?.host, publicUrl: options.publicUrl, env: options.env }),
    publicUrl: options.publicUrl,
    apiKey: options.apiKey,
    version: options.version,
    logger: base.logger.child({ component: 'api' }),
    limits: base.limits,
    clock: base.clock,
    history: services.history,
    metrics: services.metrics,
    alerts: services.alerts,
    housekeeping: services.housekeeping,
    unreadable: () => listUnreadable(base.paths.storeDir),
  });
}

/** The runner of the options, the environment or the settings file (engine.ts's option says the order). */
async function chosenRunner(
  options: StartEngineOptions,
  settingsFile: string,
  startRuntime: StartRuntimeProcess,
  logger: Logger,
): Promise<{ kind: string; runner?: Runner }> {
  if (typeof options.runner === 'object') return { kind: options.runner.kind, runner: options.runner };
  try {
    const kind = runnerKind({ flag: options.runner, env: options.env, file: await readSettingsFile(settingsFile) });
    if (kind === 'process') return { kind };
    return {
      kind,
      runner: await createRunner(kind, {
        env: options.env,
        startRuntime,
        logger: logger.child({ component: 'runner' }),
        settingsFile,
      }),
    };
  } catch (error) {
    if (error instanceof RunnerConfigError) throw new EngineConfigError(error.message);
    throw error;
  }
}

/** The runtime starter for deployments, loaded on first use. */
function lazyStartRuntime(load: () => Promise<RuntimeModules | undefined>): StartRuntimeProcess {
  return async (options) => {
    const runtime = await load();
    if (runtime === undefined) throw new Error('this engine does not include the server runtime');
    return runtime.startRuntimeProcess(options);
  };
}

/** The runtime with its starter going through the warm pool. */
function withWarmPool(
  load: () => Promise<RuntimeModules | undefined>,
  pool: WarmPool,
): () => Promise<RuntimeModules | undefined> {
  let pooled: Promise<RuntimeModules | undefined> | undefined;
  return () =>
    (pooled ??= load().then(
      (modules) => modules && { ...modules, startRuntimeProcess: pool.wrap(modules.startRuntimeProcess) },
    )).catch((error: unknown) => {
      pooled = undefined;
      throw error;
    });
}

/** Whether work that starts processes runs or waits: a refill of the pool waits for it. */
function busyStarting(admission: Admission): boolean {
  const starts = admission.starts.stats();
  const builds = admission.builds.stats();
  return starts.running + starts.waiting > 0 || builds.running + builds.waiting > 0;
}

/** Test runs through the test queue: the run (and its time limit) starts when it has a slot. */
function queuedTests(agent: TestService, queue: WorkQueue): TestService {
  return {
    test: (server, request) => {
      queue.admit('test runs');
      return queue.run(() => agent.test(server, request));
    },
    models: () => agent.models(),
    ...(agent.reload === undefined ? {} : { reload: (env) => agent.reload!(env) }),
    ...(agent.close === undefined ? {} : { close: () => agent.close!() }),
  };
}

type DeploymentFactory = (deps: DeploymentServiceDeps) => DeploymentService | Promise<DeploymentService>;

/** The test agent of src/engine/agent, loaded when the engine starts (its models load on first use). */
async function loadTestServiceFactory(): Promise<(deps: TestServiceDeps) => TestService> {
  return (await import('./agent/index.js')).createTestService;
}

/** The deployment service of src/engine/deployments, loaded when the engine starts. */
async function loadDeploymentFactory(): Promise<DeploymentFactory> {
  return (await import('./deployments/index.js')).createDeploymentService;
}
