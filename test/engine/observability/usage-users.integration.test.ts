/**
 * Usage per user: a deployment behind real OAuth (an authorization server on loopback issues the
 * tokens, the gateway checks them) counts each call for the identity its token carries, never for
 * one the client asserts in `_meta`. Real engine, real runtime processes, from dist/.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { BuildRequestInput, Deployment } from '../../../src/api/contract.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { USER_ID_META_KEY } from '../../../src/runtime/constants.js';
import { requireBuilt } from '../../support/app.js';
import { startAuthorizationServer, type AuthorizationServer } from '../../support/authorization-server.js';
import { startRealEngine } from '../../support/engine.js';
import { tempDir, type TempDir } from '../../support/temp.js';

const API_KEY = 'usage-users-test-key-0123456789abcdef';

function definition(issuer: string): BuildRequestInput {
  return {
    name: 'notes',
    template: 'basic',
    auth: { type: 'oauth', issuer, scopes: ['notes:read'] },
    tools: [
      {
        name: 'whoami',
        description: 'Says who is calling',
        inputSchema: { type: 'object', properties: {} },
        handler: { type: 'static', content: [{ type: 'text', text: 'you are {{user.id}}' }] },
      },
    ],
  };
}

/** One MCP request with a bearer token; the status. */
function post(url: string, token: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
        },
        agent: false,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

const call = (meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'whoami', arguments: {}, ...(meta === undefined ? {} : { _meta: meta }) },
});

let as: AuthorizationServer;
let home: TempDir;
let engine: RunningEngine;
let client: ApiClient;
let deployment: Deployment;

beforeAll(async () => {
  requireBuilt();
  as = await startAuthorizationServer();
  home = await tempDir('mcpctl-usage-users-');
  engine = await startRealEngine(home.dir, { apiKey: API_KEY, fast: false });
  client = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  const server = await client.build(definition(as.issuer));
  deployment = (await client.deploy({ mcp_id: server.mcp_id, environment: 'production' })).deployment;
  expect(deployment.status).toBe('deployed');
}, 120_000);

afterAll(async () => {
  await client?.close();
  await engine?.close();
  await as?.close();
  await home?.cleanup();
});

describe('usage per user', () => {
  it('counts calls for the identity of the token, never for one the client names', async () => {
    const url = `${deployment.url}/mcp`;
    const alice = await as.token({ clientId: 'alice', resource: url });
    const bob = await as.token({ clientId: 'bob', resource: url });
    expect(await post(url, alice, call())).toBe(200);
    expect(await post(url, alice, call({ [USER_ID_META_KEY]: 'mallory' }))).toBe(200);
    expect(await post(url, bob, call())).toBe(200);
    // no token: refused, and counted for nobody
    expect(await post(url, 'not-a-token', call({ [USER_ID_META_KEY]: 'mallory' }))).toBe(401);

    const usage = await client.usage(deployment.deployment_id, '1d');
    expect(usage.users).toEqual([
      { user: 'alice', requests: 2, tool_calls: 2, tool_errors: 0 },
      { user: 'bob', requests: 1, tool_calls: 1, tool_errors: 0 },
    ]);
    expect(JSON.stringify(usage)).not.toContain('mallory');
  }, 60_000);
});
