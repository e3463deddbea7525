/**
 * Builds with the real runtime (bundle + smoke start + MCP check) and with a stand-in server that
 * answers MCP wrongly, to see each failure become `build_failed` with details.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildRequest } from '../../src/api/contract.js';
import { WorkQueue } from '../../src/engine/admission.js';
import {
  createBuilder,
  loadRuntimeModules,
  placeholderEnv,
  PLACEHOLDER_VALUE,
  type RuntimeModules,
} from '../../src/engine/builder.js';
import { silentLogger } from '../../src/engine/engine-log.js';
import { isProcessAlive } from '../../src/engine/engine-lock.js';
import { FileStore } from '../../src/engine/store/file-store.js';
import { ServiceError } from '../../src/engine/service-error.js';
import { loadDefinition } from '../../src/definition/load.js';
import { toBuildRequest } from '../../src/api/build-request.js';
import { runCli } from '../support/cli.js';
import { requireBuilt, tempHome, weatherDefinition } from '../support/app.js';

beforeAll(() => requireBuilt());

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(runtime?: () => Promise<RuntimeModules | undefined>, clock?: () => number, queue?: WorkQueue) {
  const home = await tempHome('mcpctl-build-');
  const store = await FileStore.open({ dir: join(home.dir, 'store') });
  cleanups.push(
    () => home.cleanup(),
    () => store.close(),
  );
  let starts = 0;
  let running = 0;
  let mostAtOnce = 0;
  const real = await loadRuntimeModules();
  const counting: RuntimeModules = {
    writeBundle: (request, root) => real.writeBundle(request, root),
    startRuntimeProcess: async (options) => {
      starts += 1;
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      const child = await real.startRuntimeProcess(options);
      void child.exited.then(() => (running -= 1));
      return child;
    },
  };
  const builder = createBuilder({
    store,
    bundlesDir: join(home.dir, 'bundles'),
    baseUrl: 'http://127.0.0.1:1',
    version: '0.0.0-test',
    logger: silentLogger,
    runtime: runtime ?? (async () => counting),
    smokeTimeoutMs: 10_000,
    ...(clock === undefined ? {} : { clock }),
    ...(queue === undefined ? {} : { queue }),
  });
  // a build answers before its check process is gone: close waits for it
  cleanups.push(() => builder.close());
  return { builder, store, starts: () => starts, mostAtOnce: () => mostAtOnce };
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('the build succeeded');
}

describe('builds with the real runtime', () => {
  it.each(['basic', 'advanced', 'custom'])('builds the %s template as init scaffolds it', async (template) => {
    const { builder } = await setup();
    const home = await tempHome('mcpctl-init-');
    cleanups.push(() => home.cleanup());
    const scaffold = await runCli(['init', 'demo', '--template', template, '--yes'], { cwd: home.dir, env: {} });
    expect(scaffold.code, scaffold.stderr).toBe(0);
    const request = await toBuildRequest(await loadDefinition(join(home.dir, 'demo', 'server.yaml')));
    const record = await builder.build(request as BuildRequest);
    expect(record.server).toMatchObject({ name: 'demo', status: 'ready', template });
  });

  it.each(['weather', 'notes', 'calculator'])('builds the %s example', async (example) => {
    const { builder } = await setup();
    const request = await toBuildRequest(
      await loadDefinition(join(import.meta.dirname, '../../examples', example, 'server.yaml')),
    );
    const record = await builder.build(request as BuildRequest);
    expect(record.server.status).toBe('ready');
  });

  it('builds a definition: ready, its bundle on disk, build_time in seconds; the same definition is the same server', async () => {
    const { builder, store, starts } = await setup();
    const record = await builder.build(weatherDefinition());
    expect(record.server).toMatchObject({
      name: 'weather',
      status: 'ready',
      template: 'basic',
      tools: 1,
      resources: 1,
      prompts: 0,
      version: '0.1.0',
    });
    expect(record.server.mcp_id).toMatch(/^mcp_[a-z0-9]{10}$/);
    expect(record.server.url).toBe(`http://127.0.0.1:1/v1/servers/${record.server.mcp_id}`);
    expect(record.server.build_time).toBeGreaterThan(0);
    expect(record.server.build_time).toBeLessThan(60);
    expect(existsSync(record.bundleDir)).toBe(true);
    expect(await store.getServer(record.server.mcp_id)).toEqual(record);
    const again = await builder.build(weatherDefinition());
    expect(again.server.mcp_id).toBe(record.server.mcp_id);
    expect(starts()).toBe(1);
    // concurrent identical builds become one server
    const [a, b] = await Promise.all([
      builder.build(weatherDefinition('twin') as BuildRequest),
      builder.build(weatherDefinition('twin') as BuildRequest),
    ]);
    expect(a.server.mcp_id).toBe(b.server.mcp_id);
    expect((await store.listServers()).filter((r) => r.server.name === 'twin')).toHaveLength(1);
  });

  it('a reused build reports the time this request took, not the first build’s', async () => {
    // a clock that moves only when a server starts: the first build takes 5 s, a reuse none
    let now = 1_000_000;
    const real = await loadRuntimeModules();
    const slowStart: RuntimeModules = {
      writeBundle: (request, root) => real.writeBundle(request, root),
      startRuntimeProcess: async (options) => {
        now += 5_000;
        return real.startRuntimeProcess(options);
      },
    };
    const { builder, store } = await setup(
      async () => slowStart,
      () => now,
    );
    const first = await builder.build(weatherDefinition('timed'));
    expect(first.server).toMatchObject({ build_time: 5 });
    expect(first.server.reused).toBeUndefined();
    const again = await builder.build(weatherDefinition('timed'));
    expect(again.server).toMatchObject({ mcp_id: first.server.mcp_id, build_time: 0, reused: true });
    // the stored server keeps its own build
    expect((await store.getServer(first.server.mcp_id))?.server).toMatchObject({ build_time: 5 });
  });

  it('answers once the check passed, before the check process is gone; close waits until it is', async () => {
    const real = await loadRuntimeModules();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let pid = 0;
    const heldStop: RuntimeModules = {
      writeBundle: (request, root) => real.writeBundle(request, root),
      startRuntimeProcess: async (options) => {
        const child = await real.startRuntimeProcess(options);
        pid = child.pid;
        // the stop waits for the test to let it go
        return { ...child, stop: async (graceMs) => (await held, child.stop(graceMs)) };
      },
    };
    const { builder } = await setup(async () => heldStop);
    const record = await builder.build(weatherDefinition('early'));
    expect(record.server.status).toBe('ready');
    expect(isProcessAlive(pid)).toBe(true);
    let closed = false;
    const closing = builder.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(isProcessAlive(pid)).toBe(false);
  });

  it('checks builds through the build queue: with one slot, one server runs at a time and every build succeeds', async () => {
    const { builder, mostAtOnce } = await setup(
      undefined,
      undefined,
      new WorkQueue('builds', { concurrency: 1, maxWaiting: 10 }),
    );
    const records = await Promise.all(
      ['one', 'two', 'three'].map((name) => builder.build(weatherDefinition(name) as BuildRequest)),
    );
    expect(records.map((r) => r.server.status)).toEqual(['ready', 'ready', 'ready']);
    expect(new Set(records.map((r) => r.server.mcp_id)).size).toBe(3);
    expect(mostAtOnce()).toBe(1);
  });

  it('builds a server whose endpoint needs a bearer token and whose handlers use ${VAR}s resolved only at deploy time', async () => {
    const { builder } = await setup();
    const definition = {
      ...weatherDefinition('secured'),
      auth: { type: 'bearer' as const, token: '${MCP_TOKEN}' },
      tools: [
        {
          name: 'lookup',
          description: 'Looks a city up',
          inputSchema: { type: 'object' as const, properties: { city: { type: 'string' as const } } },
          handler: {
            type: 'http' as const,
            method: 'GET' as const,
            url: '${API_BASE}/cities/{{args.city}}',
            headers: { authorization: 'Bearer ${API_KEY}' },
            timeout_ms: 1000,
            max_bytes: 1024,
            result: 'text' as const,
          },
        },
      ],
    };
    const record = await builder.build(definition);
    expect(record.server.status).toBe('ready');
    expect(record.definition.auth).toEqual({ type: 'bearer', token: '${MCP_TOKEN}' });
  });

  it('fails with build_failed and details when the server cannot start', async () => {
    const { builder, store } = await setup();
    const definition = {
      name: 'broken',
      template: 'custom' as const,
      tools: [
        {
          name: 'compute',
          description: 'Computes',
          inputSchema: { type: 'object' as const },
          handler: { type: 'module' as const, module: 'missing.js', timeout_ms: 1000 },
        },
      ],
    };
    const error = await failure(builder.build(definition));
    expect(error.code).toBe('build_failed');
    expect(error.message).toMatch(/missing\.js|did not start|could not be written/);
    expect(await store.listServers()).toEqual([]);
  });

  it('names the field the runtime could not start, once, in one-line details', async () => {
    const { builder } = await setup();
    const definition = {
      name: 'throws',
      template: 'custom' as const,
      tools: [
        {
          name: 'fine',
          description: 'Fine',
          inputSchema: { type: 'object' as const },
          handler: { type: 'static' as const, content: [{ type: 'text' as const, text: 'ok' }] },
        },
        {
          name: 'boom',
          description: 'Explodes',
          inputSchema: { type: 'object' as const },
          handler: { type: 'module' as const, module: 'boom.mjs', timeout_ms: 1000 },
        },
      ],
      files: { 'boom.mjs': { encoding: 'utf8' as const, content: 'throw new Error("kaboom at import");\n' } },
    };
    const error = await failure(builder.build(definition));
    expect(error.code).toBe('build_failed');
    expect(error.message).toBe('the server did not start');
    expect(error.details).toEqual([{ path: 'tools[1].handler', message: 'cannot load boom.mjs: kaboom at import' }]);
  });

  it('answers not_implemented when this engine has no runtime', async () => {
    const { builder } = await setup(async () => undefined);
    expect((await failure(builder.build(weatherDefinition() as BuildRequest))).code).toBe('not_implemented');
  });

  it('validates with the contract before doing anything', async () => {
    const { builder, starts } = await setup();
    const error = await failure(builder.build({ ...weatherDefinition(), name: '' }));
    expect(error.code).toBe('validation_failed');
    expect(error.details?.map((d) => d.path)).toContain('name');
    expect(starts()).toBe(0);
  });
});

describe('the MCP check of a build', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  /** A runtime whose "server" is this in-test HTTP server answering JSON-RPC as `answer` says. */
  async function standIn(
    answer: (message: { id?: number; method: string }) => unknown,
    sse = false,
  ): Promise<() => Promise<RuntimeModules>> {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const message = JSON.parse(body) as { id?: number; method: string };
        if (message.id === undefined) {
          res.writeHead(202).end();
          return;
        }
        const reply = JSON.stringify({ jsonrpc: '2.0', id: message.id, ...(answer(message) as object) });
        if (sse) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${reply}\n\n`);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(reply);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const real = await loadRuntimeModules();
    return async () => ({
      writeBundle: (request, root) => real.writeBundle(request, root),
      startRuntimeProcess: async () => ({
        pid: process.pid,
        port,
        url: `http://127.0.0.1:${port}`,
        mcpUrl: `http://127.0.0.1:${port}/mcp`,
        healthUrl: `http://127.0.0.1:${port}/health`,
        exited: new Promise(() => {}),
        stop: async () => {},
        [Symbol.asyncDispose]: async () => {},
      }),
    });
  }

  const initialize = {
    result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'weather', version: '1' } },
  };

  it('accepts a server that lists what the definition declares, over SSE too', async () => {
    const runtime = await standIn(
      (m) =>
        m.method === 'initialize'
          ? initialize
          : m.method === 'tools/list'
            ? { result: { tools: [{ name: 'get_forecast' }] } }
            : { result: { resources: [{ uri: 'weather://cities' }] } },
      true,
    );
    const { builder } = await setup(runtime);
    expect((await builder.build(weatherDefinition() as BuildRequest)).server.status).toBe('ready');
  });

  it('fails a server that does not list a declared tool, naming the field', async () => {
    const runtime = await standIn((m) =>
      m.method === 'initialize'
        ? initialize
        : m.method === 'tools/list'
          ? { result: { tools: [] } }
          : { result: { resources: [{ uri: 'weather://cities' }] } },
    );
    const { builder } = await setup(runtime);
    const error = await failure(builder.build(weatherDefinition()));
    expect(error.code).toBe('build_failed');
    expect(error.details).toEqual([{ path: 'tools[0].name', message: 'the started server does not list this tool' }]);
  });

  it('fails a server that answers initialize with an error', async () => {
    const runtime = await standIn(() => ({ error: { code: -32603, message: 'boom' } }));
    const { builder } = await setup(runtime);
    const error = await failure(builder.build(weatherDefinition()));
    expect(error.code).toBe('build_failed');
    expect(error.message).toContain('initialize failed: boom');
  });
});

describe('placeholderEnv', () => {
  it('gives every reference without a default a placeholder, and leaves a bearer token to the engine’s local credentials', () => {
    const env = placeholderEnv({
      name: 'x',
      template: 'basic',
      auth: { type: 'bearer', token: '${TOKEN}' },
      description: '${DESC:-none} ${NEEDED} $${LITERAL}',
    });
    expect(env.NEEDED).toBe(PLACEHOLDER_VALUE);
    expect(env.DESC).toBeUndefined();
    expect(env.LITERAL).toBeUndefined();
    expect(env.TOKEN).toBeUndefined();
    const oauth = placeholderEnv({
      name: 'x',
      template: 'basic',
      auth: { type: 'oauth', issuer: '${ISSUER}', scopes: [] },
    });
    expect(oauth.ISSUER).toBe(PLACEHOLDER_VALUE);
  });
});
