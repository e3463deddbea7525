import { afterEach, describe, expect, it } from 'vitest';
import { callTool, createHarness, eventually, rawRequest, type Harness } from '../../support/deployments.js';

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

  it('stops an idle development deployment after the idle time', async () => {
    h = await createHarness({ env: { MCPCTL_DEV_IDLE_MINUTES: '0.005' } });
    expect(h.service.limits.devIdleMs).toBe(300);
    const server = await h.addServer('weather');
    const dev = await h.deploy(server, 'development');
    const prod = await h.deploy(server, 'production');
    const stopped = await h.waitUntil(dev.deployment_id, (x) => x.status === 'stopped', 'the idle clean-up');
    expect(stopped.reason).toMatch(/idle/);
    expect((await h.service.status(prod.deployment_id))?.status).toBe('deployed');
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
