/**
 * The egress policy as a client of the server sees it: `http` tools and `url` resources of a
 * runtime started as the engine starts it (no allowPrivateEgress) and as `mcpctl dev` does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/runtime/server/logger.js';
import { createRuntime, type RuntimeDefinition } from '../../src/runtime/server/server.js';
import { closeServer, connect, firstText, listen, makeTempDir, startBackend } from '../support/runtime.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function definition(backend: string, egress?: RuntimeDefinition['egress']): RuntimeDefinition {
  return {
    name: 'profiles',
    template: 'basic',
    ...(egress === undefined ? {} : { egress }),
    tools: [
      {
        name: 'profile',
        description: 'A user profile',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        handler: {
          type: 'http',
          method: 'GET',
          url: `${backend}/data/{{args.id}}/profile`,
          headers: { 'X-Api-Key': 'key-abc' },
          timeout_ms: 5000,
          max_bytes: 10_000,
          result: 'text',
        },
      },
    ],
    resources: [
      {
        uri: 'data://{key}',
        name: 'data',
        description: 'data by key',
        source: { type: 'url', url: `${backend}/data/{{params.key}}`, timeout_ms: 5000, max_bytes: 10_000 },
      },
    ],
  };
}

async function serve(served: RuntimeDefinition, allowPrivateEgress?: boolean) {
  const temp = await makeTempDir();
  cleanups.push(() => temp[Symbol.asyncDispose]());
  const logs: LogEntry[] = [];
  const runtime = await createRuntime(served, {
    dir: temp.path,
    logger: { debug: false, log: (entry) => logs.push(entry) },
    ...(allowPrivateEgress === undefined ? {} : { allowPrivateEgress }),
  });
  cleanups.push(() => runtime.close());
  const { server, url } = await listen(runtime.handler);
  cleanups.push(() => closeServer(server));
  const client = await connect(`${url}/mcp`);
  cleanups.push(() => client.close());
  return { client, logs };
}

async function backend() {
  const started = await startBackend();
  cleanups.push(() => started[Symbol.asyncDispose]());
  return started;
}

describe('egress of http tools and url resources', () => {
  it('refuses a loopback backend without egress, and says so in the result and the server log', async () => {
    const api = await backend();
    const { client, logs } = await serve(definition(api.url));
    const result = await client.callTool({ name: 'profile', arguments: { id: '7' } });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toContain(
      `Tool "profile" failed: GET ${api.url}/data/7/profile: refused: 127.0.0.1 is a loopback address`,
    );
    expect(firstText(result)).toContain('egress: { allow_private: true }');
    await expect(client.readResource({ uri: 'data://k1' })).rejects.toThrow(
      /refused: 127\.0\.0\.1 is a loopback address/,
    );
    expect(api.requests).toEqual([]);
    expect(logs.filter((entry) => entry.event === 'egress_refused')).toMatchObject([
      { level: 'warn', host: '127.0.0.1', address: '127.0.0.1', kind: 'loopback' },
      { level: 'warn', host: '127.0.0.1', address: '127.0.0.1', kind: 'loopback' },
    ]);
  });

  it('reaches it with egress: { allow_private: true }, and under mcpctl dev', async () => {
    const api = await backend();
    for (const served of [
      await serve(definition(api.url, { allow_private: true })),
      await serve(definition(api.url), true),
    ]) {
      const result = await served.client.callTool({ name: 'profile', arguments: { id: '7' } });
      expect(result.isError).toBeFalsy();
      const contents = await served.client.readResource({ uri: 'data://k1' });
      expect(contents.contents).toHaveLength(1);
    }
    expect(api.requests.map((request) => request.url)).toEqual([
      '/data/7/profile',
      '/data/k1',
      '/data/7/profile',
      '/data/k1',
    ]);
  });

  it('refuses "." and ".." (and their encodings) where a value lands in the path, without a request', async () => {
    const api = await backend();
    const { client } = await serve(definition(api.url, { allow_private: true }));
    for (const id of ['..', '.', '%2e%2e', '%2E.', '%252e%252e', '../admin', '..\\admin']) {
      const result = await client.callTool({ name: 'profile', arguments: { id } });
      expect(result.isError).toBe(true);
      expect(firstText(result)).toBe(
        'Tool "profile" failed: refused: the value of {{args.id}} makes a URL path segment "." or ".." (or an encoding of them), ' +
          'which would change the path the call reaches; pass a value without "." or ".." segments',
      );
      expect(result._meta).toMatchObject({ 'mcpctl/failure': { kind: 'arguments' } });
    }
    await expect(client.readResource({ uri: 'data://%2E%2E' })).rejects.toThrow(
      /refused: the value of \{\{params\.key\}\} makes a URL path segment/,
    );
    expect(api.requests).toEqual([]);
  });
});
