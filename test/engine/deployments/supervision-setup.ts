/**
 * What the supervision unit tests share: short limits, fake time that runs timers and lets real
 * file writes finish, and a deployment service on a real file store in a temp home whose
 * instances come from the fake runner.
 */
import { join } from 'node:path';
import { vi } from 'vitest';
import type { Deployment, DeployRequest } from '../../../src/api/contract.js';
import { createDeploymentService, type LocalDeploymentService } from '../../../src/engine/deployments/index.js';
import { DEFAULT_LIMITS, type DeploymentLimits } from '../../../src/engine/deployments/limits.js';
import { silentLogger } from '../../../src/engine/engine-log.js';
import type { ServerRecord } from '../../../src/engine/records.js';
import { FileStore } from '../../../src/engine/store/file-store.js';
import { WorkQueue } from '../../../src/engine/admission.js';
import { LiveDeployment } from '../../../src/engine/deployments/live-deployment.js';
import { LogBook } from '../../../src/engine/deployments/log-book.js';
import { newDeploymentRecord } from '../../../src/engine/deployments/new-record.js';
import { SecretRegistry } from '../../../src/engine/secret-registry.js';
import { addFixtureServer } from '../../support/deployments.js';
import { tempDir } from '../../support/temp.js';
import { createFakeRunner, type FakeRunner } from './fake-runner.js';

export const LIMITS: DeploymentLimits = {
  ...DEFAULT_LIMITS,
  healthIntervalMs: 100,
  healthTimeoutMs: 50,
  unhealthyThreshold: 2,
  startTimeoutMs: 1000,
  restartBackoffMs: 50,
  restartBackoffMaxMs: 200,
  maxRestarts: 3,
  stopGraceMs: 100,
  scaleIntervalMs: 100,
  targetOutstandingPerInstance: 2,
  scaleDownDelayMs: 400,
  drainTimeoutMs: 1000,
  idleCheckMs: 1000,
};

/** The timers the supervision uses; setImmediate stays real, so file writes and wake-ups go on. */
export function useFakeTime(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
}

/** Runs the timers (and the promises they settle) for `ms` of fake time. */
export const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms);

/** The real setTimeout, taken before any test fakes it: file writes take real time. */
const realTimeout = globalThis.setTimeout;

/**
 * Runs fake time in 10 ms steps, each followed by a real millisecond for file writes, until `done`
 * holds; gives up once 10 s of fake time and 10 s of real time have passed.
 */
export async function until(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  const started = performance.now();
  for (let waited = 0; !(await done()); waited += 10) {
    if (waited > 10_000 && performance.now() - started > 10_000)
      throw new Error(`${what} did not come within 10 s of fake time`);
    await elapse(10);
    await new Promise((resolve) => realTimeout(resolve, 1));
  }
}

/** Awaits `work` while fake time runs (a stop drains on timers). */
export async function inFakeTime<T>(work: Promise<T>): Promise<T> {
  let done = false;
  const result = work.finally(() => (done = true));
  await until('the work', () => done);
  return result;
}

export interface ServiceSetup {
  runner: FakeRunner;
  service: LocalDeploymentService;
  store: FileStore;
  /** a stored server (its bundle is never run: the fake runner starts nothing) */
  addServer(name: string): Promise<ServerRecord>;
  deploy(
    server: ServerRecord,
    environment: DeployRequest['environment'],
    config?: DeployRequest['config'],
  ): Promise<string>;
  /** the deployment's view once `check` holds, in fake time */
  settle(id: string, check: (deployment: Deployment) => boolean, what: string): Promise<Deployment>;
  close(): Promise<void>;
}

export async function serviceSetup(limits: Partial<DeploymentLimits> = {}): Promise<ServiceSetup> {
  const temp = await tempDir('mcpctl-supervision-');
  const store = await FileStore.open({ dir: join(temp.dir, 'store') });
  const runner = createFakeRunner();
  const baseUrl = 'http://127.0.0.1:47321';
  const service = createDeploymentService({
    store,
    home: temp.dir,
    baseUrl,
    logger: silentLogger,
    env: {},
    startRuntime: () => Promise.reject(new Error('the fake runner starts instances')),
    runner,
    clock: () => Date.now(),
    limits: { ...LIMITS, ...limits },
  });
  let serial = 0;
  const setup: ServiceSetup = {
    runner,
    service,
    store,
    addServer: (name) => addFixtureServer(store, temp.dir, baseUrl, `${name}${(serial += 1)}`, name),
    async deploy(server, environment, config) {
      const request = { mcp_id: server.server.mcp_id, environment, ...(config === undefined ? {} : { config }) };
      return (await service.deploy(server, request)).deployment_id;
    },
    async settle(id, check, what) {
      let seen: Deployment | undefined;
      await until(what, async () => {
        seen = await service.status(id);
        return seen !== undefined && check(seen);
      });
      return seen!;
    },
    async close() {
      await inFakeTime(service.close());
      vi.useRealTimers();
      await store.close();
      await temp.cleanup();
    },
  };
  return setup;
}

export interface LiveSetup {
  runner: FakeRunner;
  live: LiveDeployment;
  close(): Promise<void>;
}

/** A deployment of `min` to `max` instances on its own, as the service would make it (not started). */
export async function liveSetup(min: number, max: number, limits: Partial<DeploymentLimits> = {}): Promise<LiveSetup> {
  const temp = await tempDir('mcpctl-live-');
  const store = await FileStore.open({ dir: join(temp.dir, 'store') });
  const runner = createFakeRunner();
  const baseUrl = 'http://127.0.0.1:47321';
  const server = await addFixtureServer(store, temp.dir, baseUrl, 'live1', 'live');
  const record = newDeploymentRecord({
    server,
    environment: 'production',
    config: { scaling: { min_instances: min, max_instances: max } },
    domain: undefined,
    desired: min,
    previousId: undefined,
    baseUrl,
    https: undefined,
    isolation: undefined,
    now: Date.now(),
    runner: 'process',
  });
  const id = record.deployment.deployment_id;
  let writable = true;
  const live = new LiveDeployment(record, {
    server,
    routeName: record.routeName!,
    min,
    max,
    store,
    runner,
    engine: temp.dir,
    starts: new WorkQueue('starts', { concurrency: 4, maxWaiting: 100 }),
    limits: { ...LIMITS, ...limits },
    clock: () => Date.now(),
    logs: new LogBook(join(temp.dir, 'logs'), id, 1000),
    logger: silentLogger,
    secrets: new SecretRegistry(),
    writable: () => writable,
  });
  return {
    runner,
    live,
    async close() {
      writable = false;
      await inFakeTime(live.stopInstances());
      await live.flush().catch(() => undefined);
      // its log lines are written on a (fake) timer: a book left unwritten would hold up every later close
      await inFakeTime(LogBook.settleAll());
      vi.useRealTimers();
      live.releaseSecrets();
      await store.close();
      await temp.cleanup();
    },
  };
}
