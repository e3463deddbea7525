import { afterEach, describe, expect, it } from 'vitest';
import { callTool, createHarness, eventually, rawRequest, running, type Harness } from '../../support/deployments.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('environments', () => {
  it('a new development deployment of a server replaces the previous one: exactly one runs', async () => {
    h = await createHarness();
    const server = await h.addServer('weather');
    const other = await h.addServer('other');
    const first = await h.deploy(server, 'development');
    const unrelated = await h.deploy(other, 'development');
    const second = await h.deploy(server, 'development');
    const third = await h.deploy(server, 'development');
    expect(third.status).toBe('deployed');
    expect(third.instances).toHaveLength(1);

    const harness = h;
    await eventually(async () => {
      const dev = await harness.store.listDeployments({ environment: 'development' });
      const weather = dev.filter((r) => r.mcpId === server.server.mcp_id);
      expect(weather.filter((r) => r.deployment.status === 'deployed').map((r) => r.deployment.deployment_id)).toEqual([
        third.deployment_id,
      ]);
      expect(weather.filter((r) => r.deployment.status === 'stopped')).toHaveLength(2);
    });
    expect((await h.service.status(first.deployment_id))?.reason).toBe(`replaced by ${second.deployment_id}`);
    expect((await h.service.status(second.deployment_id))?.reason).toBe(`replaced by ${third.deployment_id}`);
    expect((await h.service.status(unrelated.deployment_id))?.status).toBe('deployed');
    // The replaced ones' processes are gone: only the two running deployments hold one each.
    await eventually(async () => expect(harness.fixtures.handles.filter((x) => isAlive(x.pid))).toHaveLength(2));
    expect((await callTool(`${first.url}/mcp`, 'echo')).status).toBe(503);
  });

  it('a production redeploy and a rollback never leave the domain without an instance', async () => {
    h = await createHarness();
    const v1 = await h.addServer('weather', { version: '1' });
    const v2 = await h.addServer('weather', { version: '2' });
    const a = await h.deploy(v1, 'production', { domain: 'weather.example.test' });
    const ask = async () => {
      const answer = await rawRequest(`${h!.baseUrl}/mcp`, {
        method: 'POST',
        headers: { host: 'weather.example.test', 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'version', arguments: {} },
        }),
      });
      return answer.status === 200
        ? (JSON.parse(answer.body) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text
        : `HTTP ${answer.status}`;
    };
    expect(await ask()).toBe('1');

    // A client keeps calling through the domain while the deployment is replaced twice.
    const seen: string[] = [];
    let busy = true;
    const client = (async () => {
      while (busy && seen.length < 20_000) seen.push(await ask());
    })();
    const b = await h.deploy(v2, 'production', { domain: 'weather.example.test' });
    expect(b.status).toBe('deployed');
    await h.waitUntil(a.deployment_id, (x) => x.status === 'stopped', 'the old deployment to be replaced');
    const accepted = await h.service.rollback(b.deployment_id);
    expect(accepted.status).toBe('deploying');
    const rolled = await h.waitUntil(accepted.deployment_id, (x) => x.status !== 'deploying', 'the rollback to settle');
    expect(rolled.status).toBe('deployed');
    expect(rolled.mcp_id).toBe(v1.server.mcp_id);
    await h.waitUntil(b.deployment_id, (x) => x.status === 'stopped', 'the rolled-back deployment to be replaced');
    busy = false;
    await client;

    expect(seen.filter((answer) => answer !== '1' && answer !== '2')).toEqual([]);
    expect(seen).toContain('2');
    expect(seen.at(-1)).toBe('1');
    expect(await ask()).toBe('1');
    // Rolling back the rollback is already done; nothing is earlier than the first deployment.
    expect(await h.service.rollback(rolled.deployment_id)).toMatchObject({
      deployment_id: rolled.deployment_id,
      unchanged: true,
    });
    await expect(h.service.rollback(a.deployment_id)).rejects.toMatchObject({ code: 'conflict' });
    await expect(h.service.rollback('deploy_unknown')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('an idle development or staging deployment holds no instance, stays deployed, and the next request wakes it', async () => {
    h = await createHarness({ env: { MCPCTL_DEV_IDLE_MINUTES: '0.005' } });
    expect(h.service.limits.devIdleMs).toBe(300);
    const server = await h.addServer('weather');
    const dev = await h.deploy(server, 'development');
    const staging = await h.deploy(server, 'staging', { scaling: { idle_seconds: 1 } });
    const kept = await h.deploy(await h.addServer('kept'), 'staging', { scaling: { idle_seconds: 0 } });
    const prod = await h.deploy(server, 'production');
    const harness = h;
    const alive = () => harness.fixtures.handles.filter((x) => isAlive(x.pid)).length;

    const idle = await h.waitUntil(dev.deployment_id, (x) => x.idle === true && x.instances?.length === 0, 'idle');
    expect(idle.status).toBe('deployed');
    expect(idle.stage).toBe('idle');
    await h.waitUntil(staging.deployment_id, (x) => x.idle === true && x.instances?.length === 0, 'staging idle');
    // its process is gone; production and a deployment that never idles keep theirs
    await eventually(async () => expect(alive()).toBe(3));
    expect((await h.service.status(prod.deployment_id))?.idle).toBeUndefined();
    expect((await h.service.status(kept.deployment_id))?.idle).toBeUndefined();
    // its health URL answers healthy: idle is not down
    const health = await rawRequest(`${dev.url}/health`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ status: 'healthy', idle: true });

    // the next request is served, from a new instance
    const answer = await callTool(`${dev.url}/mcp`, 'echo', { text: 'awake' });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('awake');
    const woken = await h.service.status(dev.deployment_id);
    expect(woken).toMatchObject({ status: 'deployed', stage: 'running' });
    expect(woken?.idle).toBeUndefined();
    expect(running(woken!)).toBe(1);

    // an engine restart keeps an idle deployment idle (no instance), and it still wakes
    await h.waitUntil(staging.deployment_id, (x) => x.idle === true, 'staging still idle');
    await h.restart();
    const restored = await h.waitUntil(staging.deployment_id, (x) => x.status === 'deployed', 'restored');
    expect(restored).toMatchObject({ idle: true, instances: [] });
    expect((await callTool(`${staging.url}/mcp`, 'echo', { text: 'again' })).status).toBe(200);
  });

  it('a production deployment with min_instances 0 goes idle (no process left), stays healthy, and a tools/call wakes it', async () => {
    h = await createHarness();
    const server = await h.addServer('weather');
    const prod = await h.deploy(server, 'production', { scaling: { min_instances: 0, idle_seconds: 1 } });
    expect(prod.status).toBe('deployed');
    // while awake it holds one instance, not zero
    expect(running(prod)).toBe(1);
    expect(prod.desired_instances).toBe(1);
    const harness = h;
    const alive = () => harness.fixtures.handles.filter((x) => isAlive(x.pid)).length;

    const idle = await h.waitUntil(prod.deployment_id, (x) => x.idle === true && x.instances?.length === 0, 'idle');
    expect(idle).toMatchObject({ status: 'deployed', stage: 'idle' });
    await eventually(async () => expect(alive()).toBe(0));
    const health = await rawRequest(`${prod.url}/health`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ status: 'healthy', idle: true });

    const answer = await callTool(`${prod.url}/mcp`, 'echo', { text: 'awake' });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('awake');
    const woken = await h.service.status(prod.deployment_id);
    expect(woken).toMatchObject({ status: 'deployed', stage: 'running' });
    expect(woken?.idle).toBeUndefined();
    expect(running(woken!)).toBe(1);
    expect(alive()).toBe(1);
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
