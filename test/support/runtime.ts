/**
 * Shared set-up for runtime tests: a definition file becomes a bundle in a temp folder, the bundle
 * a runtime on a real 127.0.0.1 socket, and the SDK's client connects to it. Everything started
 * here is stopped by the returned handles.
 */
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toBuildRequest } from '../../src/api/build-request.js';
import { loadDefinition } from '../../src/definition/load.js';
import { readBundle, writeBundle } from '../../src/runtime/host/bundle.js';
import type { LogEntry } from '../../src/runtime/server/logger.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime/server/server.js';
import { closeServer, listen } from './http.js';
import { tempDir } from './temp.js';

export { closeServer, listen } from './http.js';

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'runtime');

export async function makeTempDir(
  prefix = 'mcpctl-runtime-',
): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const temp = await tempDir(prefix);
  return { path: temp.dir, [Symbol.asyncDispose]: temp.cleanup };
}

/** Loads a definition file and writes its bundle under `root`. */
export async function bundleDefinition(file: string, root: string): Promise<{ dir: string; digest: string }> {
  const loaded = await loadDefinition(file);
  return writeBundle(await toBuildRequest(loaded), root);
}

export interface Served {
  runtime: Runtime;
  url: string;
  mcpUrl: string;
  logs: LogEntry[];
  [Symbol.asyncDispose](): Promise<void>;
}

/** Bundles a definition file and serves it; `options` go to createRuntime. */
export async function serveDefinition(
  file: string,
  options: Omit<RuntimeOptions, 'dir'> & { debug?: boolean } = {},
): Promise<Served> {
  const temp = await makeTempDir();
  const logs: LogEntry[] = [];
  let runtime: Runtime;
  try {
    const { dir } = await bundleDefinition(file, temp.path);
    const bundle = await readBundle(dir);
    runtime = await createRuntime(bundle.definition, {
      ...options,
      dir: bundle.filesDir,
      logger: { debug: options.debug === true, log: (entry) => logs.push(entry) },
    });
  } catch (error) {
    // a definition that cannot be bundled or started leaves nothing behind
    await temp[Symbol.asyncDispose]();
    throw error;
  }
  const { server, url } = await listen(runtime.handler);
  return {
    runtime,
    url,
    mcpUrl: `${url}/mcp`,
    logs,
    async [Symbol.asyncDispose]() {
      await closeServer(server);
      await runtime.close();
      await temp[Symbol.asyncDispose]();
    },
  };
}

export interface ConnectOptions {
  headers?: Record<string, string>;
  /** the protocol era: the 2025 handshake (default) or the 2026-07-28 revision */
  era?: 'legacy' | 'modern';
}

export async function connect(
  mcpUrl: string,
  options: ConnectOptions = {},
): Promise<Client & { [Symbol.asyncDispose](): Promise<void> }> {
  const client = new Client(
    { name: 'runtime-test', version: '1.0.0' },
    options.era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    ...(options.headers === undefined ? {} : { requestInit: { headers: options.headers } }),
  });
  await client.connect(transport);
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** The text of a tool result's first content block. */
export function firstText(result: { content?: unknown }): string {
  const content = result.content as Array<{ type: string; text?: string }> | undefined;
  const block = content?.[0];
  if (block?.type !== 'text' || block.text === undefined)
    throw new Error(`expected a text block, got ${JSON.stringify(content)}`);
  return block.text;
}

export interface BackendRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A small HTTP backend for http handlers and url resources: /forecast/CITY, /echo, /slow, /big,
 * /data/KEY, everything else 404. It records what it received.
 */
export async function startBackend(): Promise<{
  url: string;
  requests: BackendRequest[];
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const requests: BackendRequest[] = [];
  const pending = new Set<NodeJS.Timeout>();
  const { server, url } = await listen((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const path = (req.url ?? '').split('?')[0]!;
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      };
      if (path.startsWith('/forecast/'))
        return json(200, { city: decodeURIComponent(path.slice('/forecast/'.length)), temperature: 21.5 });
      if (path === '/echo') return json(200, { received: JSON.parse(body || 'null') as unknown });
      if (path === '/big') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(5000));
      if (path === '/slow') {
        const timer = setTimeout(() => res.end('late'), 5000);
        pending.add(timer);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      if (path.startsWith('/data/'))
        return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`raw path: ${path}`);
      json(404, { error: 'no such thing' });
    });
  });
  return {
    url,
    requests,
    async [Symbol.asyncDispose]() {
      for (const timer of pending) clearTimeout(timer);
      await closeServer(server);
    },
  };
}
