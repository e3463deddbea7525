/**
 * A deployment service on a real loopback port with a real file store in a temp home, and
 * fixture instances (test/fixtures/instance) as its runtime. `close()` stops everything it started.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Deployment, DeployRequest } from '../../src/api/contract.js';
import type { WorkQueue } from '../../src/engine/admission.js';
import {
  createDeploymentService,
  type DeploymentLimits,
  type LocalDeploymentService,
} from '../../src/engine/deployments/index.js';
import { silentLogger } from '../../src/engine/engine-log.js';
import { FileStore } from '../../src/engine/store/file-store.js';
import type { HttpsEndpoint } from '../../src/engine/services.js';
import type { ServerRecord } from '../../src/engine/records.js';
import type { Store } from '../../src/engine/store/store.js';
import { createFixtureStarter, type FixtureStarter } from './fixture-instance.js';
import { closeServer, listen } from './http.js';
import { tempDir } from './temp.js';

export { eventually } from './wait.js';

/** Short intervals so supervision, scaling and clean-up happen within a test's time. */
export const FAST_LIMITS: Partial<DeploymentLimits> = {
  healthIntervalMs: 100,
  healthTimeoutMs: 500,
  unhealthyThreshold: 2,
  startTimeoutMs: 10_000,
  restartBackoffMs: 50,
  restartBackoffMaxMs: 200,
  maxRestarts: 3,
  stopGraceMs: 1000,
  scaleIntervalMs: 200,
  targetOutstandingPerInstance: 2,
  scaleDownDelayMs: 400,
  drainTimeoutMs: 2000,
  idleCheckMs: 100,
};

export interface Harness {
  home: string;
  baseUrl: string;
  store: FileStore;
  service: LocalDeploymentService;
  fixtures: FixtureStarter;
  /** a built server whose bundle makes the fixture behave as `settings` says */
  addServer(name: string, settings?: Record<string, unknown>): Promise<ServerRecord>;
  deploy(
    server: ServerRecord,
    environment: DeployRequest['environment'],
    config?: DeployRequest['config'],
  ): Promise<Deployment>;
  /** a new service on the same home, store and port (an engine restart), with HTTPS when given */
  restart(options?: { https?: HttpsEndpoint }): Promise<void>;
  /** waits (bounded) until the deployment satisfies `check`, and returns it */
  waitUntil(id: string, check: (d: Deployment) => boolean, what: string, timeoutMs?: number): Promise<Deployment>;
  close(): Promise<void>;
}

export async function createHarness(
  options: { limits?: Partial<DeploymentLimits>; env?: Record<string, string>; starts?: WorkQueue } = {},
): Promise<Harness> {
  const temp = await tempDir('mcpctl-deployments-');
  const home = temp.dir;
  const store = await FileStore.open({ dir: join(home, 'store') });
  const fixtures = createFixtureStarter();
  let service: LocalDeploymentService | undefined;
  const { server: http, url: baseUrl } = await listen(
    createServer((req, res) => {
      void (async () => {
        if (service !== undefined && (await service.handleGateway(req, res))) return;
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not the gateway"}');
      })();
    }),
  );
  const make = (https?: HttpsEndpoint) =>
    createDeploymentService({
      ...(https === undefined ? {} : { https }),
      store,
      home,
      baseUrl,
      logger: silentLogger,
      env: options.env ?? {},
      startRuntime: fixtures.start,
      clock: Date.now,
      limits: { ...FAST_LIMITS, ...options.limits },
      ...(options.starts === undefined ? {} : { starts: options.starts }),
    });
  service = make();
  let serial = 0;

  const harness: Harness = {
    home,
    baseUrl,
    store,
    fixtures,
    get service() {
      return service!;
    },
    async addServer(name, settings = {}) {
      serial += 1;
      return addFixtureServer(store, home, baseUrl, `${name}${serial}`, name, settings);
    },
    async deploy(server, environment, config) {
      const request = { mcp_id: server.server.mcp_id, environment, ...(config === undefined ? {} : { config }) };
      const accepted = await service!.deploy(server, request);
      return harness.waitUntil(accepted.deployment_id, (d) => d.status !== 'deploying', 'the deploy to settle', 60_000);
    },
    async restart(restartOptions = {}) {
      await service!.close();
      service = make(restartOptions.https);
      await service.restore();
    },
    async waitUntil(id, check, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = await service!.status(id);
        if (current !== undefined && check(current)) return current;
        if (Date.now() > deadline)
          throw new Error(`gave up waiting for ${what}; the deployment is ${JSON.stringify(current, null, 2)}`);
        // a long poll that answers as soon as the deployment satisfies `check` (a stored one: after 250 ms)
        await service!.waitForChange(id, 250, undefined, (d) => !check(d));
      }
    },

    async close() {
      await service?.close();
      await fixtures.killAll();
      await closeServer(http);
      await store.close();
      await temp.cleanup();
    },
  };
  return harness;
}

/** Stores a built server whose bundle folder tells the fixture instance how to behave. */
export async function addFixtureServer(
  store: Store,
  home: string,
  baseUrl: string,
  id: string,
  name: string,
  settings: Record<string, unknown> = {},
): Promise<ServerRecord> {
  const mcpId = `mcp_${id.replace(/[^a-z0-9]/gi, '')}`;
  const bundleDir = join(home, 'fixture-bundles', mcpId);
  await mkdir(bundleDir, { recursive: true });
  await writeFile(join(bundleDir, 'fixture.json'), JSON.stringify(settings));
  const record: ServerRecord = {
    server: {
      mcp_id: mcpId,
      name,
      status: 'ready',
      url: `${baseUrl}/v1/servers/${mcpId}`,
      build_time: 0.01,
      created_at: new Date().toISOString(),
    },
    bundleDir,
    digest: mcpId,
    // A fixture instance checks no credential: its definition says so (`auth: none`), so that a
    // deployment with a domain is let through; `auth: null` in the settings leaves auth out.
    definition: {
      name,
      template: 'basic',
      ...(settings.auth === null
        ? {}
        : { auth: (settings.auth ?? { type: 'none' }) as NonNullable<ServerRecord['definition']['auth']> }),
    },
  };
  await store.putServer(record);
  return record;
}

export interface ToolAnswer {
  status: number;
  /** the JSON-RPC message, or undefined when the answer was not JSON */
  message?: { result?: { content?: Array<{ text?: string }>; isError?: boolean }; error?: { message: string } };
  text?: string;
}

/** One tools/call through the gateway (or any MCP URL). */
export async function callTool(
  mcpUrl: string,
  name: string,
  args: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<ToolAnswer> {
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = await response.text();
  try {
    const message = JSON.parse(body) as ToolAnswer['message'];
    return { status: response.status, message, text: message?.result?.content?.[0]?.text };
  } catch {
    return { status: response.status };
  }
}

export function running(d: Deployment): number {
  return (d.instances ?? []).filter((instance) => instance.state === 'healthy').length;
}

/** A request with node:http, which (unlike fetch) sends the Host header given. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
