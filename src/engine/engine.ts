/**
 * One running engine: the store, the builder, the deployment service, the app and the HTTP server
 * on one port. The background daemon and `mcpctl serve` both run this; tests run it in-process.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { closeAdmission, createAdmission, type Admission, type WorkQueue } from './admission.js';
import { apiKeyProblem } from './api-key.js';
import { createApp, createEngineServer, engineServerOptions, wireEngineServer, type App } from './http/app.js';
import { createBuilder, loadRuntimeModules, type RuntimeModules } from './builder.js';
import { createLocalCredentials } from './local-credentials.js';
import { homePaths } from './home.js';
import { engineHostPolicy, listensBeyondLoopback, urlHost, withHsts } from './http/exposure.js';
export { urlHost };
import { DEFAULT_LIMITS, type EngineLimits } from './engine-limits.js';
import { redactingEngineLogger } from './engine-log.js';
import { ENGINE_OWNER, engineSecretValues, SecretRegistry } from './secret-registry.js';
import { BUNDLE_TEMP_PREFIX } from '../runtime/host/bundle.js';
import { ensureDir, removeStaleTempDirs, removeStaleTemps } from './store/atomic.js';
import { FileStore } from './store/file-store.js';
import { WarmPool } from './runners/process/warm-pool.js';
import type { Runner } from './runners/runner.js';
import { chooseRunner, createRunner, RunnerConfigError, runnerFromSettings } from './runners/select.js';
import type { TestServiceDeps } from './agent/index.js';
import type { TlsListener } from './http/tls.js';
import { isolatedRuntime } from './isolation.js';
import { EngineConfigError } from './engine-errors.js';
import { secureHome } from './file-modes.js';
import type { TlsOptions } from './http/tls-settings.js';
import type { DeploymentService, DeploymentServiceDeps, StartRuntimeProcess, TestService } from './services.js';
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

/** Raised when the port cannot be bound. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
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
  const paths = homePaths(options.home);
  await ensureDir(paths.home);
  // a home other users can write is refused; one they can read is made private, with a warning
  for (const warning of secureHome(paths)) logger.warn(warning);
  await ensureDir(paths.bundlesDir);
  const limits: EngineLimits = { ...DEFAULT_LIMITS, ...options.limits };
  // What a crash left half-written: temporary files of the state files, unfinished bundles.
  // The caller holds the home's lock, so nothing else writes there now.
  const leftovers =
    (await removeStaleTemps(paths.home)) + (await removeStaleTempDirs(paths.bundlesDir, BUNDLE_TEMP_PREFIX));
  if (leftovers > 0) logger.info('removed unfinished writes left by a crash', { files: leftovers });
  // Certificates are checked before anything listens: a bad one stops the start, naming its file.
  const tlsConfig = await loadTls(options, paths);
  const store = await FileStore.open({ dir: paths.storeDir, logger, clock, idempotencyTtlMs: limits.idempotencyTtlMs });

  // Listen first: deployment URLs need the port. Until the app is ready every request is 503.
  let handler: (req: IncomingMessage, res: ServerResponse) => unknown = answerStarting;
  const server = createEngineServer((req, res) => handler(req, res), limits);
  let port: number;
  let tls: RunningEngine['tls'];
  try {
    port = await listen(server, options.port, options.host).catch(async (error: unknown) => {
      if (options.anyPortIfTaken === true && options.port !== 0 && (error as ListenError).code === 'EADDRINUSE') {
        logger.info('the previous port is taken; using another', { port: options.port });
        return listen(server, 0, options.host);
      }
      throw error;
    });
    if (tlsConfig !== undefined) {
      const listener = tlsConfig.create({
        serverOptions: engineServerOptions(limits),
        handler: withHsts((req, res) => void handler(req, res)),
        logger,
      });
      wireEngineServer(listener.server);
      // HTTPS may face the network on its own address while plain HTTP stays on loopback
      const tlsHost = tlsConfig.settings.host ?? options.host;
      const tlsPort = await listen(listener.server, tlsConfig.settings.port, tlsHost).catch((error: unknown) => {
        listener.close();
        throw error;
      });
      tls = { url: `https://${urlHost(tlsHost)}:${tlsPort}`, host: tlsHost, port: tlsPort, listener };
    }
  } catch (error) {
    server.close();
    await store.close();
    throw error;
  }
  const url = (options.publicUrl ?? `http://${urlHost(options.host)}:${port}`).replace(/\/+$/, '');

  try {
    const { load: loadRuntime, report: isolation } = isolatedRuntime(
      options.runtime ?? loadRuntimeModules,
      options.env,
      paths.home,
    );
    const admission = createAdmission(limits.admission, clock);
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
      store,
      bundlesDir: paths.bundlesDir,
      baseUrl: url,
      version: options.version,
      logger: logger.child({ component: 'builder' }),
      runtime,
      clock,
      queue: admission.builds,
      ...(options.smokeTimeoutMs === undefined ? {} : { smokeTimeoutMs: options.smokeTimeoutMs }),
    });
    const factory =
      options.deployments === false ? undefined : (options.deployments ?? (await loadDeploymentFactory()));
    let deployments: DeploymentService | undefined;
    // the process runner is the deployment service's default (made with its startRuntime); another is made here
    const chosen =
      factory === undefined
        ? undefined
        : await chosenRunner(options, paths.settingsFile, lazyStartRuntime(runtime), logger);
    const runner = chosen?.runner;
    if (factory !== undefined) {
      deployments = await factory({
        store,
        home: paths.home,
        baseUrl: url,
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
        clock,
        secrets,
      });
    }
    const agent =
      options.tests === false
        ? undefined
        : (options.tests ??
          (await loadTestServiceFactory())({
            env: options.env,
            logger: logger.child({ component: 'tests' }),
            startRuntime: lazyStartRuntime(runtime),
            version: options.version,
            localCredentials,
            clock,
          }));
    const tests = agent === undefined ? undefined : queuedTests(agent, admission.tests);
    const app = createApp({
      store,
      builds,
      deployments,
      tests,
      admission,
      warmPool,
      isolation,
      hosts: engineHostPolicy({
        host: options.host,
        tlsHost: tls?.host,
        publicUrl: options.publicUrl,
        env: options.env,
      }),
      publicUrl: options.publicUrl,
      apiKey: options.apiKey,
      version: options.version,
      logger: logger.child({ component: 'api' }),
      limits,
      clock,
    });
    // What the last stop interrupted is settled before the first answer.
    await deployments?.recover?.();
    handler = app;
    logger.info('engine listening', {
      url,
      host: options.host,
      port,
      ...(tls === undefined
        ? {}
        : { https: tls.url, tls_host: tls.host, certificates: [...tls.listener.certificates().byName.keys()] }),
      home: paths.home,
      version: options.version,
      deployments: deployments !== undefined,
      runner: chosen?.kind,
      tests: tests !== undefined,
      slots: limits.admission,
    });
    const restored = (deployments?.restore() ?? Promise.resolve()).catch((error: unknown) => {
      logger.error('restoring deployments failed', { error });
    });
    // the pool fills once what was running is back (refills wait for quiet anyway)
    void restored.then(() => warmPool.fill());

    let closing: Promise<void> | undefined;
    const close = (graceMs = 5_000): Promise<void> => {
      closing ??= (async () => {
        app.setDraining(true);
        logger.info('engine stopping');
        const servers = [server, ...(tls === undefined ? [] : [tls.listener.server])];
        const serverClosed = Promise.all(servers.map(closeServer));
        tls?.listener.close();
        await warmPool.close();
        // builds and tests answer before their processes are gone: these wait for them
        await Promise.all([builds.close?.(), tests?.close?.()]);
        if (deployments !== undefined) {
          await deployments.close().catch((error: unknown) => logger.error('stopping deployments failed', { error }));
        }
        await runner?.close?.().catch((error: unknown) => logger.error('stopping the runner failed', { error }));
        // work still waiting for a slot is dropped (its requests get 503); what runs finishes
        closeAdmission(admission);
        const timer = setTimeout(() => servers.forEach((s) => s.closeAllConnections()), graceMs);
        await serverClosed;
        clearTimeout(timer);
        await store.close();
        logger.info('engine stopped');
      })();
      return closing;
    };

    const kind = chosen?.kind ?? 'process';
    const swarm = runner?.orchestrator?.kind === 'swarm' ? runner.orchestrator.summary : undefined;
    return {
      url,
      host: options.host,
      port,
      server,
      store,
      app,
      deployments,
      runner: kind,
      ...(swarm === undefined ? {} : { swarm }),
      ...(tls && { tls }),
      admission,
      warmPool,
      restored,
      close,
    };
  } catch (error) {
    tls?.listener.close();
    for (const s of [server, tls?.listener.server]) {
      s?.close();
      s?.closeAllConnections();
    }
    await store.close();
    throw error;
  }
}

function answerStarting(_req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify({
    success: false,
    data: null,
    meta: { request_id: 'req_starting', timestamp: new Date().toISOString() },
    error: { code: 'unavailable', message: 'the engine is starting; retry in a moment' },
  });
  res.writeHead(503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Retry-After': '1',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function listen(server: NetServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      const reason = error.code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use` : error.message;
      reject(new ListenError(reason, error.code));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function closeServer(server: Server | TlsListener['server']): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  return closed;
}

/** The engine's certificates (none: HTTP only), checked; a problem is an EngineConfigError naming the file. */
async function loadTls(options: StartEngineOptions, paths: { home: string; settingsFile: string }) {
  const { tlsSettings, mayServeHttps, TlsConfigError } = await import('./http/tls-settings.js');
  try {
    const settings = await tlsSettings({ options: options.tls, env: options.env, ...paths });
    // node:https and node:tls load only when there may be certificates
    return (await mayServeHttps(settings)) ? await (await import('./http/tls.js')).prepareTls(settings) : undefined;
  } catch (error) {
    throw error instanceof TlsConfigError ? new EngineConfigError(`HTTPS cannot start: ${error.message}`) : error;
  }
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
    const kind = chooseRunner([
      { value: options.runner, from: '--runner' },
      { value: options.env.MCPCTL_RUNNER, from: 'MCPCTL_RUNNER' },
      { value: await runnerFromSettings(settingsFile), from: `"runner" in ${settingsFile}` },
    ]);
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
