/**
 * Egress of a deployed server: the engine builds a definition whose `http` tools call an API on
 * loopback, and deploys it on the process runner (real runtime processes, from dist/: `npm run
 * build` first). Without `egress` the API is out of reach; with `egress: { allow_private: true }`
 * it answers, a redirect to another origin arrives without the definition's headers, and
 * metadata targets stay refused.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import type { BuildRequestInput } from '../../src/api/contract.js';
import type { RunningEngine } from '../../src/engine/engine.js';
import { createSandbox, type Sandbox } from '../support/cli.js';
import { startRealEngine } from '../support/engine.js';
import { closeServer, listen } from '../support/http.js';
import { waitFor } from '../support/wait.js';

const API_KEY = 'egress-test-engine-key-0123456789abcdef';
const SECRET = 'definition-secret-4f1c9a';

let sandbox: Sandbox;
let engine: RunningEngine | undefined;
const cleanups: Array<() => Promise<void>> = [];

beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await engine?.close(1000);
  engine = undefined;
  await sandbox.cleanup();
});

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

/** A loopback server recording what it receives; `route` answers. */
async function api(route: (url: string) => { status: number; headers?: Record<string, string>; body?: string }) {
  const seen: Seen[] = [];
  const { server, url } = await listen((req, res) => {
    seen.push({ url: req.url!, headers: req.headers });
    const answer = route(req.url!);
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '{}');
  });
  cleanups.push(() => closeServer(server));
  return { url, seen };
}

function tool(name: string, path: string) {
  return {
    name,
    description: `Calls ${path} of the API`,
    inputSchema: { type: 'object' as const, properties: { id: { type: 'string' as const } } },
    handler: {
      type: 'http' as const,
      url: `\${API_URL}${path}`,
      headers: { 'X-Api-Key': '${API_SECRET}' },
      result: 'text' as const,
    },
  };
}

function definition(egress?: BuildRequestInput['egress']): BuildRequestInput {
  return {
    name: 'egress-check',
    template: 'basic',
    ...(egress === undefined ? {} : { egress }),
    tools: [tool('profile', '/v1/users/{{args.id}}/profile'), tool('away', '/away'), tool('metadata', '/metadata')],
  };
}

async function deploy(client: ApiClient, served: BuildRequestInput, apiUrl: string) {
  const server = await client.build(served);
  const { deployment } = await client.deploy({
    mcp_id: server.mcp_id,
    environment: 'production',
    config: { env_vars: { API_URL: apiUrl, API_SECRET: SECRET } },
  });
  expect(deployment.status).toBe('deployed');
  const mcp = new Client({ name: 'egress-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${deployment.url}/mcp`)));
  cleanups.push(() => mcp.close());
  return { mcp, deployment };
}

function text(result: { content?: unknown }): string {
  return (result.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? '';
}

describe('egress of a deployed http tool', () => {
  it('cannot reach a loopback API without egress; with allow_private it can, redirects elsewhere lose the headers, metadata stays refused', async () => {
    const landing = await api(() => ({ status: 200, body: '{"landed":true}' }));
    const backend = await api((url) => {
      if (url === '/away') return { status: 302, headers: { location: `${landing.url}/landing` } };
      if (url === '/metadata')
        return {
          status: 302,
          headers: { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' },
        };
      return { status: 200, body: '{"name":"Ada"}' };
    });
    engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: API_KEY });
    const client = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
    cleanups.push(() => client.close());

    // deployed without egress: refused, nothing reaches the API
    const closed = await deploy(client, definition(), backend.url);
    const refused = await closed.mcp.callTool({ name: 'profile', arguments: { id: '7' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('refused: 127.0.0.1 is a loopback address');
    expect(text(refused)).toContain('egress: { allow_private: true }');
    expect(backend.seen).toEqual([]);

    // with egress: { allow_private: true }
    const open = await deploy(client, definition({ allow_private: true }), backend.url);
    const ok = await open.mcp.callTool({ name: 'profile', arguments: { id: '7' } });
    expect(ok.isError).toBeFalsy();
    expect(text(ok)).toBe('{"name":"Ada"}');
    expect(backend.seen.at(-1)).toMatchObject({ url: '/v1/users/7/profile', headers: { 'x-api-key': SECRET } });

    // a redirect to another origin (another port): the target never sees the definition's headers
    const away = await open.mcp.callTool({ name: 'away', arguments: {} });
    expect(text(away)).toBe('{"landed":true}');
    expect(landing.seen).toHaveLength(1);
    expect(landing.seen[0]!.headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(landing.seen[0]!.headers)).not.toContain(SECRET);

    // a redirect to the metadata address: refused before any connection, even with allow_private
    const metadata = await open.mcp.callTool({ name: 'metadata', arguments: {} });
    expect(metadata.isError).toBe(true);
    expect(text(metadata)).toContain(
      'GET http://169.254.169.254/latest/meta-data/iam/security-credentials/: refused: 169.254.169.254 is a cloud metadata address',
    );
    // the instance's log says what was refused (its lines reach the engine a moment after the answer)
    await waitFor('the refusal in the deployment log', async () => {
      const lines = await client.logs(open.deployment.deployment_id, { limit: 1000 });
      return lines.some((line) => line.message.includes('egress_refused') && line.message.includes('169.254.169.254'))
        ? true
        : undefined;
    });

    // `..` in a path segment: a tool error, and no request
    const before = backend.seen.length;
    for (const id of ['..', '%2e%2e']) {
      const climbed = await open.mcp.callTool({ name: 'profile', arguments: { id } });
      expect(climbed.isError).toBe(true);
      expect(text(climbed)).toContain('refused: the value of {{args.id}} makes a URL path segment "." or ".."');
    }
    expect(backend.seen.length).toBe(before);
  });
});
