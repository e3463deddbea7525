/**
 * The `/v1` contract of docs/api.md as a test suite that runs against any target (the real engine
 * in test/engine/contract.integration.test.ts). Each target is `{ url, apiKey }` from a factory;
 * `close` tears it down.
 *
 * It checks what docs/api.md decides and a client relies on: envelope and request ids, auth,
 * content type and JSON errors, validation details, idempotency, build, sync and async deploy,
 * long-poll status with ETag, test results, stop/rollback transitions, lists, logs and metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { AnyEnvelope, Deployment, McpServer, TestResult } from '../../src/api/contract.js';
import { ApiError } from '../../src/api/errors.js';

export interface ContractTarget {
  url: string;
  apiKey: string;
  close(): Promise<void>;
}

/** A small definition every target can build and run: one static tool, one text resource. */
export function contractDefinition(name = 'contract-weather') {
  return {
    name,
    template: 'basic' as const,
    description: 'Weather for the contract tests',
    tools: [
      {
        name: 'get_forecast',
        description: 'Get the weather forecast for a city',
        inputSchema: { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] },
        handler: { type: 'static' as const, content: [{ type: 'text' as const, text: 'Sunny' }] },
      },
    ],
    resources: [
      {
        uri: 'notes://today',
        name: 'today',
        description: 'Notes for today',
        mimeType: 'text/plain',
        source: { type: 'text' as const, text: 'Bring an umbrella' },
      },
    ],
  };
}

interface Raw {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw answers are read loosely, then checked
  body: any;
}

/** `testAgent: false` for a target that does not offer POST /v1/test yet: it must then answer 501 not_implemented. */
export function describeContract(
  name: string,
  makeTarget: () => Promise<ContractTarget>,
  options: { testAgent?: boolean } = {},
): void {
  describe(`the /v1 contract: ${name}`, () => {
    let target: ContractTarget;
    let client: ApiClient;
    let mcpId: string;
    const deployments: string[] = [];

    async function raw(
      method: string,
      path: string,
      init: { body?: string; headers?: Record<string, string>; key?: string | null } = {},
    ): Promise<Raw> {
      const headers: Record<string, string> = { ...init.headers };
      if (init.key !== null) headers.authorization = `Bearer ${init.key ?? target.apiKey}`;
      const res = await fetch(`${target.url}${path}`, {
        method,
        headers,
        ...(init.body === undefined ? {} : { body: init.body }),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
    }

    function expectEnvelope(answer: Raw, success: boolean): void {
      expect(AnyEnvelope.safeParse(answer.body).success).toBe(true);
      expect(answer.body.success).toBe(success);
      expect(answer.body.meta.request_id).toMatch(/^req_/);
      expect(answer.headers.get('x-request-id')).toBe(answer.body.meta.request_id);
      if (!success) {
        expect(answer.body.error.code).toEqual(expect.any(String));
        expect(answer.body.error.message).toEqual(expect.any(String));
      }
    }

    beforeAll(async () => {
      target = await makeTarget();
      client = new ApiClient({ baseUrl: target.url, apiKey: target.apiKey, retry: { attempts: 1 } });
      mcpId = (await client.build(contractDefinition())).mcp_id;
    });

    afterAll(async () => {
      for (const id of deployments) await client.stop(id).catch(() => undefined);
      await client.close();
      await target.close();
    });

    it('answers 401 with the envelope for a missing or wrong key', async () => {
      for (const key of [null, 'not-the-key']) {
        const answer = await raw('GET', '/v1/servers', { key });
        expect(answer.status).toBe(401);
        expectEnvelope(answer, false);
        expect(answer.body.data).toBeNull();
        expect(answer.body.error.code).toBe('unauthorized');
      }
    });

    it('answers an unknown route with 404 not_found', async () => {
      const answer = await raw('GET', '/v1/no-such-thing');
      expect(answer.status).toBe(404);
      expectEnvelope(answer, false);
      expect(answer.body.error.code).toBe('not_found');
    });

    it('refuses a body without Content-Type: application/json (415) and malformed JSON (400)', async () => {
      const noType = await raw('POST', '/v1/build', {
        body: JSON.stringify(contractDefinition()),
        headers: { 'content-type': 'text/plain' },
      });
      expect(noType.status).toBe(415);
      expectEnvelope(noType, false);
      expect(noType.body.error.code).toBe('unsupported_media_type');
      const bad = await raw('POST', '/v1/build', { body: '{"name":', headers: { 'content-type': 'application/json' } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_json');
    });

    it('rejects unknown and invalid fields with 422 validation_failed naming each', async () => {
      const definition = contractDefinition();
      const body = { ...definition, template: 'fancy', tools: [{ ...definition.tools[0], colour: 'red' }] };
      const answer = await raw('POST', '/v1/build', {
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(422);
      expectEnvelope(answer, false);
      expect(answer.body.error.code).toBe('validation_failed');
      const details = answer.body.error.details as Array<{ path: string; message: string }>;
      expect(details.map((d) => d.path)).toContain('template');
      expect(details.some((d) => d.path.startsWith('tools[0]') && `${d.path} ${d.message}`.includes('colour'))).toBe(
        true,
      );
    });

    it('builds a server: ready, mcp_ id, seconds, and the same id for the same definition', async () => {
      const answer = await raw('POST', '/v1/build', {
        body: JSON.stringify(contractDefinition()),
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(200);
      expectEnvelope(answer, true);
      const server = McpServer.parse(answer.body.data);
      expect(server.status).toBe('ready');
      expect(server.name).toBe('contract-weather');
      expect(server.mcp_id).toBe(mcpId);
      expect(typeof server.build_time).toBe('number');
      expect(Date.parse(answer.body.meta.timestamp)).not.toBeNaN();
    });

    it('builds a server with only resources', async () => {
      const { tools: _tools, ...onlyResources } = contractDefinition('contract-notes');
      const server = await client.build(onlyResources);
      expect(server.status).toBe('ready');
    });

    it('replays an idempotent request and refuses the key with another body', async () => {
      const key = `contract-${Date.now()}-${Math.random()}`;
      const headers = { 'content-type': 'application/json', 'idempotency-key': key };
      const body = JSON.stringify(contractDefinition('contract-idem'));
      const first = await raw('POST', '/v1/build', { body, headers });
      const second = await raw('POST', '/v1/build', { body, headers });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body.data.mcp_id).toBe(first.body.data.mcp_id);
      const other = await raw('POST', '/v1/build', {
        body: JSON.stringify(contractDefinition('contract-other')),
        headers,
      });
      expect(other.status).toBe(422);
      expect(other.body.error.code).toBe('idempotency_mismatch');
    });

    it('lists and reads servers', async () => {
      const servers = await client.listServers();
      expect(servers.map((s) => s.mcp_id)).toContain(mcpId);
      expect((await client.getServer(mcpId)).name).toBe('contract-weather');
      expect((await client.listServers({ name: 'contract-weather' })).every((s) => s.name === 'contract-weather')).toBe(
        true,
      );
      const missing = await raw('GET', '/v1/servers/mcp_doesnotexist');
      expect(missing.status).toBe(404);
    });

    it('deploys synchronously: deployed, health check at url + /health', async () => {
      const answer = await raw('POST', '/v1/deploy', {
        body: JSON.stringify({ mcp_id: mcpId, environment: 'development' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(200);
      expectEnvelope(answer, true);
      const deployment = Deployment.parse(answer.body.data);
      deployments.push(deployment.deployment_id);
      expect(deployment.status).toBe('deployed');
      expect(deployment.deployment_id).toMatch(/^deploy_/);
      expect(deployment.health_check).toBe(`${deployment.url}/health`);
      expect(typeof deployment.deploy_time).toBe('number');
    });

    it('deploys asynchronously with Prefer: respond-async and settles by long-poll', async () => {
      const answer = await raw('POST', '/v1/deploy', {
        body: JSON.stringify({ mcp_id: mcpId, environment: 'staging' }),
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      });
      const first = Deployment.parse(answer.body.data);
      deployments.push(first.deployment_id);
      if (answer.status === 202) {
        expect(first.status).toBe('deploying');
        expect(answer.headers.get('preference-applied')).toBe('respond-async');
        expect(answer.headers.get('location')).toBe(`/v1/deploy/${first.deployment_id}/status`);
      } else {
        expect(answer.status).toBe(200);
      }
      let deployment = first;
      let etag: string | undefined;
      for (let i = 0; i < 60 && deployment.status === 'deploying'; i++) {
        const status = await client.status(first.deployment_id, {
          waitSeconds: 10,
          ...(etag === undefined ? {} : { etag }),
        });
        expect(status.etag).toBeDefined();
        etag = status.etag;
        deployment = status.deployment ?? deployment;
      }
      expect(deployment.status).toBe('deployed');
    });

    it('answers a long-poll with no change after the wait, with the same ETag', async () => {
      const id = deployments[0]!;
      const now = await raw('GET', `/v1/deploy/${id}/status`);
      expect(now.status).toBe(200);
      expectEnvelope(now, true);
      const etag = now.headers.get('etag');
      expect(etag).toBeTruthy();
      const later = await raw('GET', `/v1/deploy/${id}/status?wait=1`, { headers: { 'if-none-match': etag! } });
      expect(later.status).toBe(200);
      expect(later.headers.get('etag')).toBe(etag);
      expect(later.body.data.status).toBe('deployed');
    });

    it('answers 404 for an unknown deployment and for deploying an unknown server', async () => {
      expect((await raw('GET', '/v1/deploy/deploy_doesnotexist/status')).status).toBe(404);
      const answer = await raw('POST', '/v1/deploy', {
        body: JSON.stringify({ mcp_id: 'mcp_doesnotexist', environment: 'development' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('not_found');
    });

    it('refuses scaling outside the bounds with the field path', async () => {
      const answer = await raw('POST', '/v1/deploy', {
        body: JSON.stringify({ mcp_id: mcpId, environment: 'production', config: { scaling: { max_instances: 9 } } }),
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(422);
      expect(answer.body.error.code).toBe('validation_failed');
      expect((answer.body.error.details as Array<{ path: string }>).map((d) => d.path)).toContain(
        'config.scaling.max_instances',
      );
    });

    it('runs a test with the default model', async () => {
      if (options.testAgent === false) {
        const answer = await raw('POST', '/v1/test', {
          body: JSON.stringify({ mcp_id: mcpId, message: 'hi' }),
          headers: { 'content-type': 'application/json' },
        });
        expect(answer.status).toBe(501);
        expect(answer.body.error.code).toBe('not_implemented');
        return;
      }
      const result = await client.test({ mcp_id: mcpId, message: 'What is the forecast for Paris? Use get_forecast.' });
      TestResult.parse(result);
      expect(result.success_rate).toBeGreaterThanOrEqual(0);
      expect(result.success_rate).toBeLessThanOrEqual(1);
      expect(Array.isArray(result.tools_used)).toBe(true);
      expect(typeof result.execution_time).toBe('number');
    });

    it('refuses a test of an unknown server and an unknown model', async () => {
      const unknown = await raw('POST', '/v1/test', {
        body: JSON.stringify({ mcp_id: 'mcp_doesnotexist', message: 'hi' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(unknown.status).toBe(404);
      const model = await raw('POST', '/v1/test', {
        body: JSON.stringify({ mcp_id: mcpId, message: 'hi', ai_model: 'no-such-model' }),
        headers: { 'content-type': 'application/json' },
      });
      expect(model.status).toBe(422);
      expect((model.body.error.details as Array<{ path: string }>).map((d) => d.path)).toContain('ai_model');
    });

    it('stops a deployed deployment once; a second stop is 409 conflict', async () => {
      const { deployment } = await client.deploy({ mcp_id: mcpId, environment: 'development' });
      expect(deployment.status).toBe('deployed');
      const stopped = await client.stop(deployment.deployment_id);
      expect(stopped.status).toBe('stopped');
      try {
        await client.stop(deployment.deployment_id);
        expect.unreachable('a second stop must fail');
      } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).status).toBe(409);
        expect((error as ApiError).code).toBe('conflict');
      }
    });

    it('lists deployments with filters, newest first', async () => {
      const list = await client.listDeployments({ mcp_id: mcpId });
      expect(list.length).toBeGreaterThanOrEqual(2);
      expect(list.every((d) => d.mcp_id === undefined || d.mcp_id === mcpId)).toBe(true);
      const stopped = await client.listDeployments({ mcp_id: mcpId, status: 'stopped' });
      expect(stopped.every((d) => d.status === 'stopped')).toBe(true);
    });

    it('reads logs and metrics of a deployment', async () => {
      const id = deployments[0]!;
      const lines = await client.logs(id, { limit: 10 });
      expect(Array.isArray(lines)).toBe(true);
      const metrics = await client.metrics(id, 60);
      expect(metrics.deployment_id).toBe(id);
      expect(metrics.window_seconds).toBe(60);
    });
  });
}
