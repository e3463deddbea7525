/**
 * The whole engine in-process (src/engine/engine.ts: store, app, builder, deployments, test agent)
 * on a loopback port, and a CLI sandbox whose environment points at it: the one way CLI commands
 * are tested against a service. Builds are real (bundle and smoke check with the built runtime,
 * so `npm run build` first); deployments run fixture instances (test/support/fixture-instance.ts)
 * with short supervision intervals, so a test can make one fail or start slowly. In front of it,
 * test/support/proxy.ts records what the CLI sent and injects transport faults.
 */
import { afterEach } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import type { Deployment, DeployRequest } from '../../src/api/contract.js';
import { createDeploymentService } from '../../src/engine/deployments/index.js';
import { startEngine, type RunningEngine, type StartEngineOptions } from '../../src/engine/engine.js';
import { silentLogger } from '../../src/engine/engine-log.js';
import type { Logger } from '../../src/engine/engine-log.js';
import type { EngineLimits } from '../../src/engine/engine-limits.js';
import type { ServerRecord } from '../../src/engine/records.js';
import { createFixtureStarter, type FixtureStarter } from './fixture-instance.js';
import { createSandbox, type Sandbox } from './cli.js';
import { TEST_KEY as API_KEY } from './app.js';
import { addFixtureServer, FAST_LIMITS } from './deployments.js';

export interface TestEngine {
  engine: RunningEngine;
  sandbox: Sandbox;
  /** the sandbox's environment with MCPCTL_API_URL and MCPCTL_API_KEY of this engine */
  env: Record<string, string>;
  client: ApiClient;
  fixtures: FixtureStarter;
  addServer(name: string, settings?: Record<string, unknown>): Promise<ServerRecord>;
  /** deploys through the API and waits for the outcome */
  deploy(
    server: ServerRecord,
    environment: DeployRequest['environment'],
    config?: DeployRequest['config'],
  ): Promise<Deployment>;
  close(): Promise<void>;
}

/**
 * The whole engine in-process on a loopback port with the real runtime (built servers run as real
 * processes), in `home`; FAST_LIMITS for the deployments unless `fast` is false.
 */
export async function startRealEngine(
  home: string,
  options: {
    apiKey: string;
    port?: number;
    logger?: Logger;
    fast?: boolean;
    warmPool?: number;
    tls?: StartEngineOptions['tls'];
    env?: Record<string, string>;
  },
): Promise<RunningEngine> {
  const engine = await startEngine({
    home,
    host: '127.0.0.1',
    port: options.port ?? 0,
    apiKey: options.apiKey,
    version: '0.0.0-test',
    logger: options.logger ?? silentLogger,
    env: options.env ?? {},
    limits: { ratePerSecond: 0, ...(options.warmPool === undefined ? {} : { warmPool: options.warmPool }) },
    ...(options.fast === false
      ? {}
      : { deployments: (deps) => createDeploymentService({ ...deps, limits: FAST_LIMITS }) }),
    ...(options.tls === undefined ? {} : { tls: options.tls }),
  });
  await engine.restored;
  return engine;
}

export async function startTestEngine(
  options: { logger?: Logger; env?: Record<string, string>; limits?: Partial<EngineLimits> } = {},
): Promise<TestEngine> {
  const sandbox = await createSandbox();
  const fixtures = createFixtureStarter();
  const engine = await startEngine({
    home: sandbox.env.MCPCTL_HOME!,
    host: '127.0.0.1',
    port: 0,
    apiKey: API_KEY,
    version: '0.0.0-test',
    logger: options.logger ?? silentLogger,
    env: options.env ?? {},
    limits: { ratePerSecond: 0, ...options.limits },
    deployments: (deps) => createDeploymentService({ ...deps, startRuntime: fixtures.start, limits: FAST_LIMITS }),
  });
  await engine.restored;
  const client = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  let serial = 0;
  return {
    engine,
    sandbox,
    env: { ...sandbox.env, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: API_KEY },
    client,
    fixtures,
    addServer(name, settings) {
      serial += 1;
      return addFixtureServer(engine.store, sandbox.dir, engine.url, `${name}${serial}`, name, settings);
    },
    async deploy(server, environment, config) {
      const answer = await client.deploy({
        mcp_id: server.server.mcp_id,
        environment,
        ...(config === undefined ? {} : { config }),
      });
      return answer.deployment;
    },
    async close() {
      await client.close();
      await engine.close(1000);
      await fixtures.killAll();
      await sandbox.cleanup();
    },
  };
}

/**
 * A real engine per test, each in a temp home, stopped (and its home removed) after each test:
 * `start` in the test gives the engine and its home.
 */
export function realEnginePerTest(apiKey: string): {
  start(env?: Record<string, string>): Promise<{ engine: RunningEngine; home: string }>;
} {
  let sandbox: Sandbox | undefined;
  let engine: RunningEngine | undefined;
  afterEach(async () => {
    await engine?.close(1000);
    engine = undefined;
    await sandbox?.cleanup();
    sandbox = undefined;
  });
  return {
    async start(env = {}) {
      sandbox = await createSandbox();
      const home = sandbox.env.MCPCTL_HOME!;
      engine = await startRealEngine(home, { apiKey, env });
      return { engine, home };
    },
  };
}
