/**
 * One running engine: the store, the builder, the deployment service, the app and the HTTP server
 * on one port. The background daemon and `mcpctl serve` both run this; tests run it in-process.
 * It starts in phases: the home, the store, the listeners, the services, the app, the restore.
 */
import { Observers } from './observability/events.js';
import type { Server } from 'node:http';
import { closeAdmission, type Admission } from './admission.js';
import { apiKeyProblem } from './api-key.js';
import type { RuntimeModules } from './builder.js';
import { homePaths } from './home.js';
import type { App } from './http/app.js';
import { urlHost } from './http/exposure.js';
export { urlHost };
import { DEFAULT_LIMITS, type EngineLimits } from './engine-limits.js';
import { redactingEngineLogger } from './engine-log.js';
import { answerStarting, closeServer, listenAll, loadTls, type Handler, type Listeners } from './engine-listen.js';
export { ListenError } from './engine-listen.js';
import { createEngineApp, createServices, type EngineBase, type EngineServices } from './engine-services.js';
import { ENGINE_OWNER, engineSecretValues, SecretRegistry } from './secret-registry.js';
import { BUNDLE_TEMP_PREFIX } from '../runtime/host/bundle.js';
import { ensureDir, removeStaleTempDirs, removeStaleTemps } from './store/atomic.js';
import { FileStore } from './store/file-store.js';
import type { WarmPool } from './runners/process/warm-pool.js';
import type { Runner } from './runners/runner.js';
import type { TlsListener } from './http/tls.js';
import { EngineConfigError } from './engine-errors.js';
import { secureHome } from './file-modes.js';
import type { TlsOptions } from './http/tls-settings.js';
import type { DeploymentService, DeploymentServiceDeps, TestService } from './services.js';
import type { Logger } from './engine-log.js';

export interface StartEngineOptions {
  home: string;
  /** address to bind; 127.0.0.1 unless told otherwise */
  host: string;
  /** 0 for any free port */
  port: number;
  /** when `port` is taken, take any free one instead of failing (the background engine) */
  anyPortIfTaken?: boolean;
  apiKey: string;
  version: string;
  logger: Logger;
  env: Record<string, string | undefined>;
  /** the address clients use, when it is not the bound one (behind a proxy, or bound to 0.0.0.0) */
  publicUrl?: string;
  limits?: Partial<EngineLimits>;
  clock?: () => number;
  /** the runtime; default: loaded from src/runtime */
  runtime?: () => Promise<RuntimeModules | undefined>;
  /** the deployment service factory; default: src/engine/deployments when present; `false` for none */
  deployments?: ((deps: DeploymentServiceDeps) => DeploymentService | Promise<DeploymentService>) | false;
  /** the test agent; default: src/engine/agent; `false` for none (POST /v1/test then answers 501) */
  tests?: TestService | false;
  /** smoke check time-out of builds */
  smokeTimeoutMs?: number;
  /**
   * What runs deployments' instances: a kind (`mcpctl serve --runner`), or a runner tests pass.
   * Without it: MCPCTL_RUNNER, then `runner` in the home's engine-settings.json, then `process`.
   */
  runner?: string | Runner;
  /**
   * HTTPS beside HTTP (src/engine/http/tls.ts): `mcpctl serve --tls-*`, else MCPCTL_TLS_*, else
   * `"tls"` of engine-settings.json, plus the home's certs/ folder; none of them: HTTP only.
   */
  tls?: TlsOptions;
}

export interface RunningEngine {
  /** the address clients use, such as http://127.0.0.1:47321 */
  url: string;
  host: string;
  port: number;
  server: Server;
  store: FileStore;
  app: App;
  deployments: DeploymentService | undefined;
  /** what runs the deployments' instances: `process` or `docker` */
  runner: string;
  /** which environments the runner hands to Docker Swarm, and how; undefined when none */
  swarm?: string;
  /** the queues of work that needs a process */
  admission: Admission;
  /** the runtime processes that wait for a bundle */
  warmPool: WarmPool;
  /** the HTTPS listener, when the engine has certificates */
  tls?: { url: string; host: string; port: number; listener: TlsListener };
  /** settles when restoring the deployments that were running has finished */
  restored: Promise<void>;
  /** drains and stops: deployments' instances stop (their records stay), the store closes */
  close(graceMs?: number): Promise<void>;
}

export { EngineConfigError };

export async function startEngine(options: StartEngineOptions): Promise<RunningEngine> {
  const keyProblem = apiKeyProblem(options.apiKey);
  if (keyProblem !== undefined) throw new EngineConfigError(`the API key cannot be used: ${keyProblem}`);
  const clock = options.clock ?? Date.now;
  // one set of values hidden from every line the engine logs: its keys, then every deployment's values
  const secrets = new SecretRegistry();
  secrets.add(ENGINE_OWNER, engineSecretValues(options.apiKey, options.env));
  const logger = redactingEngineLogger(options.logger, secrets);
  const limits: EngineLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const paths = await openHome(options.home, logger);
  // Certificates are checked before anything listens: a bad one stops the start, naming its file.
  const tlsConfig = await loadTls(options, paths);
  const store = await FileStore.open({ dir: paths.storeDir, logger, clock, idempotencyTtlMs: limits.idempotencyTtlMs });

  // Listen first: deployment URLs need the port. Until the app is ready every request is 503.
  let handler: Handler = answerStarting;
  const listeners = await listenAll(options, tlsConfig, limits, () => handler, logger).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const url = (options.publicUrl ?? `http://${urlHost(options.host)}:${listeners.port}`).replace(/\/+$/, '');
  const observers = new Observers((error) => logger.warn('an observer of requests failed', { error: String(error) }));
  const base: EngineBase = {
    options,
    paths,
    limits,
    logger,
    clock,
    secrets,
    store,
    url,
    tls: listeners.tls,
    observers,
  };
  let services: EngineServices | undefined;
  try {
    services = await createServices(base);
    const app = createEngineApp(base, services);
    // What the last stop interrupted is settled before the first answer.
    await services.deployments?.recover?.();
    handler = app;
    announce(base, listeners, services);
    const restored = restore(base, services);
    return runningEngine(base, listeners, services, app, restored);
  } catch (error) {
    // what the services started that listens or ticks: a failed start leaves nothing running
    await Promise.all([services?.metrics.close(), services?.alerts?.close(), services?.warmPool.close()]).catch(
      () => undefined,
    );
    await closeAtFailedStart(listeners, store);
    throw error;
  }
}

/**
 * The home made ready: its folders, private, and what a crash left half-written removed
 * (temporary files of the state files, unfinished bundles). The caller holds the home's lock,
 * so nothing else writes there now.
 */
async function openHome(home: string, logger: Logger): Promise<ReturnType<typeof homePaths>> {
  const paths = homePaths(home);
  await ensureDir(paths.home);
  // a home other users can write is refused; one they can read is made private, with a warning
  for (const warning of secureHome(paths)) logger.warn(warning);
  await ensureDir(paths.bundlesDir);
  const leftovers =
    (await removeStaleTemps(paths.home)) + (await removeStaleTempDirs(paths.bundlesDir, BUNDLE_TEMP_PREFIX));
  if (leftovers > 0) logger.info('removed unfinished writes left by a crash', { files: leftovers });
  return paths;
}

function announce(base: EngineBase, { port, tls }: Listeners, services: EngineServices): void {
  const { options, limits } = base;
  base.logger.info('engine listening', {
    url: base.url,
    host: options.host,
    port,
    ...(tls === undefined
      ? {}
      : { https: tls.url, tls_host: tls.host, certificates: [...tls.listener.certificates().byName.keys()] }),
    home: base.paths.home,
    version: options.version,
    deployments: services.deployments !== undefined,
    runner: services.chosen?.kind,
    tests: services.tests !== undefined,
    slots: limits.admission,
  });
}

/** The deployments that were running start again; the warm pool fills once they are back. */
function restore(base: EngineBase, { deployments, warmPool, housekeeping }: EngineServices): Promise<void> {
  const restored = (deployments?.restore() ?? Promise.resolve()).catch((error: unknown) => {
    base.logger.error('restoring deployments failed', { error });
  });
  // refills wait for quiet anyway
  void restored.then(() => warmPool.fill());
  // once the deployments are back, so none that runs looks ended to it
  void restored.then(() => housekeeping.start());
  return restored;
}

function runningEngine(
  base: EngineBase,
  listeners: Listeners,
  services: EngineServices,
  app: App,
  restored: Promise<void>,
): RunningEngine {
  const runner = services.chosen?.runner;
  const swarm = runner?.orchestrator?.kind === 'swarm' ? runner.orchestrator.summary : undefined;
  const tls = listeners.tls;
  let closing: Promise<void> | undefined;
  return {
    url: base.url,
    host: base.options.host,
    port: listeners.port,
    server: listeners.server,
    store: base.store,
    app,
    deployments: services.deployments,
    runner: services.chosen?.kind ?? 'process',
    ...(swarm === undefined ? {} : { swarm }),
    ...(tls && { tls }),
    admission: services.admission,
    warmPool: services.warmPool,
    restored,
    close: (graceMs = 5_000) => (closing ??= stopEngine(base, listeners, services, app, graceMs)),
  };
}

/** Drains and stops, in order: the listeners stop taking requests, then the work, then the store. */
async function stopEngine(
  { logger, store }: EngineBase,
  { server, tls }: Listeners,
  services: EngineServices,
  app: App,
  graceMs: number,
): Promise<void> {
  const { warmPool, builds, tests, deployments, chosen, admission, history, metrics, alerts, tracing } = services;
  app.setDraining(true);
  logger.info('engine stopping');
  const servers = [server, ...(tls === undefined ? [] : [tls.listener.server])];
  const serverClosed = Promise.all(servers.map(closeServer));
  tls?.listener.close();
  await metrics.close();
  await services.housekeeping.close();
  await warmPool.close();
  // no evaluation while deployments stop: their instances going away is no alert
  await alerts?.close();
  // builds and tests answer before their processes are gone: these wait for them
  await Promise.all([builds.close?.(), tests?.close?.()]);
  if (deployments !== undefined) {
    await deployments.close().catch((error: unknown) => logger.error('stopping deployments failed', { error }));
  }
  await chosen?.runner?.close?.().catch((error: unknown) => logger.error('stopping the runner failed', { error }));
  // after the deployments: their last requests are in what is written
  await history?.close();
  // the last spans (the instances' too) leave, within a bound
  await tracing?.close();
  // work still waiting for a slot is dropped (its requests get 503); what runs finishes
  closeAdmission(admission);
  const timer = setTimeout(() => servers.forEach((s) => s.closeAllConnections()), graceMs);
  await serverClosed;
  clearTimeout(timer);
  await store.close();
  logger.info('engine stopped');
}

async function closeAtFailedStart({ server, tls }: Listeners, store: FileStore): Promise<void> {
  tls?.listener.close();
  for (const s of [server, tls?.listener.server]) {
    s?.close();
    s?.closeAllConnections();
  }
  await store.close();
}
