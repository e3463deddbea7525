import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../../../src/api/contract.js';
import { createDeploymentService } from '../../../src/engine/deployments/deployment-service.js';
import { silentLogger } from '../../../src/engine/engine-log.js';
import { callTool, createHarness, FAST_LIMITS, running, type Harness } from '../../support/deployments.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe('engine stop and start', () => {
  it('close stops every instance and keeps the records; restore brings deployed ones back at the same URL', async () => {
    const server = await h.addServer('weather');
    const prod = await h.deploy(server, 'production', { env_vars: { GREETING: 'kept' } });
    const staging = await h.deploy(server, 'staging');
    const gone = await h.deploy(await h.addServer('gone'), 'development');
    await h.service.stop(gone.deployment_id);
    const pending = await h.service.deploy(server, { mcp_id: server.server.mcp_id, environment: 'development' });
    expect(pending.status).toBe('deploying');
    const pidsBefore = new Set(h.fixtures.handles.map((x) => x.pid));

    await h.restart();

    // Every process of the old service ended.
    expect(h.fixtures.handles.filter((x) => pidsBefore.has(x.pid) && isAlive(x.pid))).toEqual([]);
    for (const before of [prod, staging]) {
      const after = await h.service.status(before.deployment_id);
      expect(after).toMatchObject({
        status: 'deployed',
        url: before.url,
        health_check: before.health_check,
        stage: 'running',
      });
      expect(running(after!)).toBe(before.instances!.length);
      expect(after!.instances!.every((i) => !pidsBefore.has(i.pid!))).toBe(true);
      expect((await callTool(`${before.url}/mcp`, 'echo', { text: 'back' })).text).toBe('back');
    }
    expect((await callTool(`${prod.url}/mcp`, 'env', { name: 'GREETING' })).text).toBe('kept');
    expect((await h.service.status(gone.deployment_id))?.status).toBe('stopped');
    const interrupted = await h.service.status(pending.deployment_id);
    expect(interrupted).toMatchObject({ status: 'failed', reason: expect.stringMatching(/engine stopped/) });

    // The log spans both lives of the engine.
    const lines = await h.service.logs(prod.deployment_id, { limit: 1000 });
    const first = lines.findIndex((l) => /deploying weather/.test(l.message));
    const restored = lines.findIndex((l) => /restoring after an engine restart/.test(l.message));
    expect(first).toBeGreaterThanOrEqual(0);
    expect(restored).toBeGreaterThan(first);
    expect((await h.service.logs(gone.deployment_id, {})).some((l) => /stopped on request/.test(l.message))).toBe(true);
  });

  it('shows no running instance of a deployment it has not restored yet, not the ports of the engine before', async () => {
    const d = await h.deploy(await h.addServer('weather'), 'development');
    expect(d.instances![0]).toMatchObject({ state: 'healthy', port: expect.any(Number) });
    await h.service.close();
    // the next engine, before its restore has brought the deployment back
    const next = createDeploymentService({
      store: h.store,
      home: h.home,
      baseUrl: h.baseUrl,
      logger: silentLogger,
      env: {},
      startRuntime: h.fixtures.start,
      clock: Date.now,
      limits: FAST_LIMITS,
    });
    try {
      const shown = await next.status(d.deployment_id);
      expect(shown?.status).toBe('deployed');
      expect(shown!.instances).toEqual([{ id: d.instances![0]!.id, state: 'stopped', restarts: 0 }]);
      const listed = await next.waitForChange(d.deployment_id, 1);
      expect(listed!.instances!.every((i) => i.state === 'stopped' && i.port === undefined)).toBe(true);
    } finally {
      await next.close();
    }
  });

  it('shows the stable URLs and the HTTPS notice of the engine as it is after a restart', async () => {
    const server = await h.addServer('weather');
    const prod = await h.deploy(server, 'production', { domain: 'mcp.example.com' });
    const port = new URL(h.baseUrl).port;
    expect(prod.stable_urls![0]).toBe(`http://mcp.example.com:${port}/mcp`);
    expect(prod.notices!.join('\n')).toMatch(/no certificate for mcp\.example\.com/);

    // the engine comes back with a certificate for the domain
    await h.restart({
      https: { url: 'https://127.0.0.1:7443', port: 7443, covers: (host) => host === 'mcp.example.com' },
    });
    const after = await h.service.status(prod.deployment_id);
    expect(after).toMatchObject({ status: 'deployed', url: prod.url });
    expect(after!.stable_urls).toEqual([
      'https://mcp.example.com:7443/mcp',
      `http://weather.production.localhost:${port}/mcp`,
      `${h.baseUrl}/d/weather.production/mcp`,
    ]);
    expect(after!.notices!.join('\n')).toContain(
      'HTTPS: served by this engine’s gateway with the certificate for mcp.example.com (port 7443)',
    );
    expect(after!.notices!.join('\n')).not.toMatch(/no certificate/);
    // and it is on disk: what a stopped engine's record says too
    expect((await h.store.getDeployment(prod.deployment_id))!.deployment.stable_urls![0]).toBe(
      'https://mcp.example.com:7443/mcp',
    );
  });

  it('follows a deployment log as lines come, until the signal aborts', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    const controller = new AbortController();
    const seen: LogLine[] = [];
    const following = h.service.followLogs(
      d.deployment_id,
      (line) => {
        seen.push(line);
        if (line.message.includes('deployment stopped')) controller.abort();
      },
      controller.signal,
    );
    await callTool(`${d.url}/mcp`, 'echo', { text: 'followed' });
    await h.service.stop(d.deployment_id);
    await following;
    expect(seen.some((l) => l.message.includes('followed'))).toBe(true);
    expect(seen.at(-1)?.message).toMatch(/deployment stopped/);
    await expect(h.service.followLogs('deploy_unknown', () => {}, controller.signal)).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
