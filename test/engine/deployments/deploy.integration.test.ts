import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Deployment } from '../../../src/api/contract.js';
import { ServiceError } from '../../../src/engine/service-error.js';
import { callTool, createHarness, rawRequest, running, type Harness } from '../../support/deployments.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe('deploy', () => {
  it('puts a production deployment on a URL with two healthy instances behind the gateway', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'production', { env_vars: { GREETING: 'hello from env' } });

    expect(Deployment.parse(d)).toBeTruthy();
    expect(d.status).toBe('deployed');
    expect(d.url).toBe(`${h.baseUrl}/d/${d.deployment_id}`);
    expect(d.health_check).toBe(`${d.url}/health`);
    expect(d.deploy_time).toBeGreaterThanOrEqual(0);
    expect(d.desired_instances).toBe(2);
    expect(running(d)).toBe(2);
    expect(new Set(d.instances!.map((i) => i.port)).size).toBe(2);
    expect(d.transitions!.map((t) => t.status)).toEqual(['deploying', 'deployed']);
    expect(d.notices!.join(' ')).toMatch(/regions/);
    expect(JSON.stringify(d)).not.toContain('hello from env');

    const health = await fetch(d.health_check);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: 'healthy',
      deployment_id: d.deployment_id,
      instances: { total: 2, healthy: 2 },
    });

    const answer = await callTool(`${d.url}/mcp`, 'echo', { text: 'hi' });
    expect(answer).toMatchObject({ status: 200, text: 'hi' });
    expect((await callTool(`${d.url}/mcp`, 'env', { name: 'GREETING' })).text).toBe('hello from env');

    // Both instances take requests (least outstanding, ties shared out).
    const pids = new Set<string>();
    for (let i = 0; i < 6; i += 1) pids.add((await callTool(`${d.url}/mcp`, 'pid')).text!);
    expect(pids.size).toBe(2);

    const stored = await h.store.getDeployment(d.deployment_id);
    expect(stored?.deployment.status).toBe('deployed');
    expect(stored?.config.env_vars).toEqual({ GREETING: 'hello from env' });
  });

  it('rejects scaling outside the bounds with the field path and the allowed range', async () => {
    const server = await h.addServer('weather');
    const attempt = h.deploy(server, 'production', { scaling: { min_instances: 2, max_instances: 9 } });
    await expect(attempt).rejects.toBeInstanceOf(ServiceError);
    await expect(attempt).rejects.toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'config.scaling.max_instances', message: expect.stringMatching(/from 2 to 8/) }],
    });
    await expect(h.deploy(server, 'development', { scaling: { min_instances: 2 } })).rejects.toMatchObject({
      details: [{ path: 'config.scaling.min_instances', message: expect.stringMatching(/exactly 1/) }],
    });
    await expect(
      h.deploy(server, 'production', { scaling: { min_instances: 5, max_instances: 3 } }),
    ).rejects.toMatchObject({
      details: [{ path: 'config.scaling.min_instances' }],
    });
    expect(await h.store.listDeployments()).toEqual([]);
  });

  it('fails a deployment whose instances do not start, with the reason and their output', async () => {
    const server = await h.addServer('broken', { failStart: true });
    const d = await h.deploy(server, 'staging');
    expect(d.status).toBe('failed');
    expect(d.reason).toMatch(/did not start/);
    expect(d.reason).toMatch(/told to fail at start/);
    expect(d.transitions!.map((t) => t.status)).toEqual(['deploying', 'failed']);
    const lines = await h.service.logs(d.deployment_id, {});
    expect(lines.some((line) => line.level === 'error' && /deployment failed/.test(line.message))).toBe(true);
  });

  it('answers at once with deploying when asked not to wait, then settles', async () => {
    const server = await h.addServer('weather');
    const first = await h.service.deploy(server, { mcp_id: server.server.mcp_id, environment: 'development' });
    expect(first.status).toBe('deploying');
    expect(first.deploy_time).toBeNull();
    const settled = await h.waitUntil(first.deployment_id, (d) => d.status !== 'deploying', 'the deployment to settle');
    expect(settled.status).toBe('deployed');
    expect(settled.stage).toBe('running');
  });

  it('enforces the state machine: stop only a deployed deployment', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    const stopped = await h.service.stop(d.deployment_id);
    expect(stopped.status).toBe('stopped');
    expect(stopped.reason).toMatch(/on request/);
    expect(stopped.instances!.every((i) => i.state === 'stopped')).toBe(true);
    await expect(h.service.stop(d.deployment_id)).rejects.toMatchObject({ code: 'conflict' });
    await expect(h.service.stop('deploy_nosuchthing')).rejects.toMatchObject({ code: 'not_found' });

    const health = await fetch(d.health_check);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'stopped' });
    const call = await callTool(`${d.url}/mcp`, 'echo');
    expect(call.status).toBe(503);
    expect(call.message?.error?.message).toMatch(/stopped/);
    expect(h.fixtures.handles.length).toBe(1);
  });

  it('gives staging a generated temporary name and routes a custom domain by Host header', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'staging', { domain: 'MCP.Example.test' });
    expect(d.url).toMatch(new RegExp(`^${h.baseUrl}/d/stg-[a-z0-9]{8}$`));
    expect(d.domain).toBe('mcp.example.test');
    expect(d.notices!.join(' ')).toMatch(/DNS/);
    expect((await callTool(`${d.url}/mcp`, 'echo', { text: 'by path' })).text).toBe('by path');

    const rpc = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'by host' } },
    });
    const viaDomain = await rawRequest(`${h.baseUrl}/mcp`, {
      method: 'POST',
      headers: { host: 'mcp.example.test:8080', 'content-type': 'application/json' },
      body: rpc,
    });
    expect(viaDomain.status).toBe(200);
    expect(viaDomain.body).toContain('by host');
    const health = await rawRequest(`${h.baseUrl}/health`, { headers: { host: 'mcp.example.test' } });
    expect(JSON.parse(health.body)).toMatchObject({ deployment_id: d.deployment_id, status: 'healthy' });
    // Other paths and hosts are not the gateway's.
    expect((await rawRequest(`${h.baseUrl}/v1/health`, { headers: { host: 'mcp.example.test' } })).status).toBe(404);
    expect(
      (await rawRequest(`${h.baseUrl}/mcp`, { method: 'POST', headers: { host: 'other.example.test' }, body: rpc }))
        .status,
    ).toBe(404);

    const other = await h.addServer('other');
    await expect(h.deploy(other, 'production', { domain: 'mcp.example.test' })).rejects.toMatchObject({
      code: 'conflict',
    });
    await expect(h.deploy(other, 'production', { domain: 'http://x' })).rejects.toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'config.domain' }],
    });
  });

  it('streams an SSE answer through as it comes, without waiting for its end', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    const response = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'stream', arguments: { text: 'second' } },
      }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    // The fixture writes the first event, pauses, then the result: the first read holds only the first.
    const first = decoder.decode((await reader.read()).value);
    expect(first).toContain('"first"');
    expect(first).not.toContain('second');
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
    expect(rest).toContain('"text":"second"');
  });

  it('answers 404 for an unknown deployment name and for paths other than /mcp and /health', async () => {
    expect((await fetch(`${h.baseUrl}/d/deploy_unknown/health`)).status).toBe(404);
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    expect((await fetch(`${d.url}/other`)).status).toBe(404);
    expect((await fetch(`${h.baseUrl}/elsewhere`)).status).toBe(404);
  });
});
