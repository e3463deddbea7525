/**
 * Engine test support: an app on a real loopback port built from the given services (fakes or
 * real ones) with a real file store in a temp home, a raw HTTP helper, fakes of the services,
 * and the clean-up of background engines started by end-to-end tests.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Deployment, LogLine, Metrics } from '../../src/api/contract.js';
import { createApp, createEngineServer, type App, type AppOptions } from '../../src/engine/http/app.js';
import { createLogger } from '../../src/engine/engine-log.js';
import { Housekeeping } from '../../src/engine/housekeeping.js';
import { FileStore } from '../../src/engine/store/file-store.js';
import { isEngineProcess } from '../../src/engine/engine-lock.js';
import type { BuildService, DeploymentService } from '../../src/engine/services.js';
import type { ServerRecord } from '../../src/engine/records.js';
import { ServiceError } from '../../src/engine/service-error.js';
import { closeServer, listen } from './http.js';
import { tempDir, type TempDir } from './temp.js';

export { waitFor } from './wait.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'mcpctl.cjs');

/** End-to-end tests spawn the built CLI and daemon: `npm test` builds first. */
export function requireBuilt(): void {
  for (const file of ['dist/bundle/mcpctl.cjs', 'dist/engine/daemon.js', 'dist/runtime/serve-bundle.js']) {
    if (!existsSync(join(ROOT, file))) throw new Error(`${file} is missing: run \`npm run build\` first`);
  }
}

export function tempHome(prefix = 'mcpctl-engine-'): Promise<TempDir> {
  return tempDir(prefix);
}

export interface TestApp {
  url: string;
  apiKey: string;
  app: App;
  store: FileStore;
  server: Server;
  /** the JSON lines the app logged */
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export const TEST_KEY = 'test-key-0123456789abcdef0123456789';

export type TestAppOptions = Partial<Omit<AppOptions, 'store' | 'logger'>>;

/** An app on 127.0.0.1:0 with a file store in a temp home; `options` may be a function of that store (for fakes that share it). */
export async function startTestApp(
  options: TestAppOptions | ((store: FileStore) => TestAppOptions) = {},
): Promise<TestApp> {
  const home = await tempHome();
  const store = await FileStore.open({ dir: join(home.dir, 'store') });
  const given = typeof options === 'function' ? options(store) : options;
  const logs: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>),
    level: 'debug',
  });
  // removals as the engine wires them (never on their own here: no retention timer is started)
  const housekeeping = new Housekeeping({
    store,
    deployments: given.deployments,
    history: undefined,
    bundlesDir: join(home.dir, 'bundles'),
    logger,
    clock: Date.now,
    retention: { developmentMs: 0, buildMs: 0 },
    everyMs: 3_600_000,
  });
  const app = createApp({
    store,
    builds: given.builds ?? fakeBuilds(store),
    apiKey: TEST_KEY,
    version: '0.0.0-test',
    logger,
    housekeeping,
    ...given,
  });
  const server = createEngineServer((req, res) => app(req, res), {
    requestTimeoutMs: given.limits?.requestTimeoutMs ?? 60_000,
  });
  const { url } = await listen(server);
  return {
    url,
    apiKey: TEST_KEY,
    app,
    store,
    server,
    logs,
    close: async () => {
      await given.deployments?.close();
      await closeServer(server);
      await store.close();
      await home.cleanup();
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field in assertions
  body: any;
}

/** One request with the test key unless `key` says otherwise (null: no Authorization header). */
export async function call(
  base: string,
  method: string,
  path: string,
  init: { json?: unknown; body?: string | Buffer; headers?: Record<string, string>; key?: string | null } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== null) headers.authorization = `Bearer ${init.key ?? TEST_KEY}`;
  let body: string | Buffer | undefined = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** A realistic small definition the real runtime can start. */
export function weatherDefinition(name = 'weather') {
  return {
    name,
    template: 'basic' as const,
    description: 'Weather forecasts',
    tools: [
      {
        name: 'get_forecast',
        description: 'Get the forecast for a city',
        inputSchema: { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] },
        handler: { type: 'static' as const, content: [{ type: 'text' as const, text: 'Sunny in {{args.city}}' }] },
      },
    ],
    resources: [
      {
        uri: 'weather://cities',
        name: 'cities',
        description: 'Known cities',
        mimeType: 'text/plain',
        source: { type: 'text' as const, text: 'Paris\nBerlin' },
      },
    ],
  };
}

/** A build service that stores a record without starting anything (for HTTP-layer tests). */
export function fakeBuilds(store: FileStore, onBuild?: () => Promise<void>): BuildService & { calls: number } {
  const service = {
    calls: 0,
    async build(request: { name: string; template: 'basic' | 'advanced' | 'custom' }): Promise<ServerRecord> {
      service.calls += 1;
      await onBuild?.();
      const id = `mcp_${Math.random().toString(36).slice(2, 12)}`;
      const record: ServerRecord = {
        server: {
          mcp_id: id,
          name: request.name,
          status: 'ready',
          url: `http://x/v1/servers/${id}`,
          build_time: 0.001,
          created_at: new Date().toISOString(),
        },
        bundleDir: '/nonexistent',
        digest: id,
        definition: request,
      };
      await store.putServer(record);
      return record;
    },
  };
  return service;
}

/**
 * A deployment service in memory: deploy settles after `settleMs` as `outcome`, every change
 * wakes long-polls, logs and metrics are canned. Enough to exercise the HTTP layer.
 */
export function fakeDeployments(
  store: FileStore,
  options: { outcome?: 'deployed' | 'failed'; settleMs?: number } = {},
): DeploymentService & { followed: number; gatewayCalls: number } {
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  const wake = () => {
    for (const w of waiters) w();
    waiters.clear();
  };
  const get = async (id: string) => (await store.getDeployment(id))?.deployment;
  const update = async (id: string, status: Deployment['status'], reason?: string) => {
    const record = (await store.getDeployment(id))!;
    record.deployment = {
      ...record.deployment,
      status,
      ...(reason === undefined ? {} : { reason }),
      deploy_time: status === 'deploying' ? null : 0.05,
      transitions: [...(record.deployment.transitions ?? []), { status, at: new Date().toISOString() }],
    };
    record.version += 1;
    await store.putDeployment(record);
    wake();
    return record.deployment;
  };
  const create = async (mcpId: string, environment: 'production' | 'staging' | 'development') => {
    const id = `deploy_${Math.random().toString(36).slice(2, 12)}`;
    const deployment: Deployment = {
      deployment_id: id,
      status: 'deploying',
      url: `http://x/d/${id}`,
      health_check: `http://x/d/${id}/health`,
      deploy_time: null,
      mcp_id: mcpId,
      environment,
      created_at: new Date().toISOString(),
      transitions: [{ status: 'deploying', at: new Date().toISOString() }],
    };
    await store.putDeployment({ deployment, mcpId, config: {}, version: 1 });
    const settle = async () =>
      update(id, options.outcome ?? 'deployed', options.outcome === 'failed' ? 'instances did not start' : undefined);
    const timer = setTimeout(() => {
      timers.delete(timer);
      void settle();
    }, options.settleMs ?? 20);
    timers.add(timer);
    return deployment;
  };
  const service = {
    followed: 0,
    gatewayCalls: 0,
    deploy: (server: ServerRecord, request: { environment: 'production' | 'staging' | 'development' }) =>
      create(server.server.mcp_id, request.environment),
    status: get,
    async waitForChange(id: string, timeoutMs: number, signal?: AbortSignal) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      return get(id);
    },
    async stop(id: string) {
      const current = await get(id);
      if (current?.status !== 'deployed')
        throw new ServiceError('conflict', `deployment ${id} is ${current?.status}, not deployed`);
      return update(id, 'stopped');
    },
    async rollback(id: string) {
      const record = (await store.getDeployment(id))!;
      return create(record.mcpId, record.deployment.environment ?? 'development');
    },
    async logs(): Promise<LogLine[]> {
      return [{ time: new Date().toISOString(), level: 'info', message: 'started' }];
    },
    async followLogs(_id: string, onLine: (line: LogLine) => void, signal: AbortSignal) {
      service.followed += 1;
      onLine({ time: new Date().toISOString(), level: 'info', message: 'new line' });
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    async metrics(id: string, windowSeconds: number): Promise<Metrics> {
      return {
        deployment_id: id,
        window_seconds: windowSeconds,
        requests: 0,
        throughput_rps: 0,
        latency_ms: { p50: null, p95: null, p99: null },
        tool_calls: 0,
        tool_errors: 0,
        tool_error_rate: null,
        per_tool: {},
      };
    },
    async handleGateway(req: IncomingMessage, res: ServerResponse) {
      if (!(req.url ?? '').startsWith('/d/')) return false;
      service.gatewayCalls += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"gateway":true}');
      return true;
    },
    async restore() {},
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      wake();
    },
  };
  return service;
}

/**
 * Sends `text` as it is on a new connection to `base` and returns everything that comes back
 * until the server closes the connection (or `timeoutMs`, after which the socket is closed).
 * `hangUpAfterMs` closes the socket that long after sending: an upload cut short.
 */
export function rawExchange(
  base: string,
  text: string,
  options: { timeoutMs?: number; hangUpAfterMs?: number } = {},
): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    const timer = setTimeout(() => socket.destroy(), options.timeoutMs ?? 10_000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(text);
    if (options.hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), options.hangUpAfterMs);
  });
}

/** The JSON body of a raw HTTP answer. */
export function rawBody(answer: string): unknown {
  const start = answer.indexOf('\r\n\r\n');
  return start === -1 ? undefined : JSON.parse(answer.slice(start + 4));
}

/** Last resort for end-to-end tests: kill the engine recorded in a home's state file, if it still runs. */
export function killEngineOf(home: string): void {
  const file = join(home, 'engine.json');
  if (!existsSync(file)) return;
  try {
    const { pid } = JSON.parse(readFileSync(file, 'utf8')) as { pid: number };
    if (!isEngineProcess(pid)) return;
    // The background engine leads its own process group: its deployments' servers go with it.
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone already
  }
}
