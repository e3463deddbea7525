import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, createHarness, running, type Harness } from '../../support/deployments.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('health checks', () => {
  it('checks a healthy instance that gets no requests less and less often', async () => {
    h = await createHarness({ limits: { healthIntervalMs: 100 } });
    const d = await h.deploy(await h.addServer('quiet'), 'development');
    const before = Number((await callTool(`${d.url}/mcp`, 'health_checks')).text);
    // Idle, the checks space out (doubling up to 800 ms): wait until two checks in a row are at
    // least 700 ms apart, which a fixed 100 ms interval never gives. Reading the status does not
    // reach the instance, so it stays idle.
    const checks: number[] = [];
    await h.waitUntil(
      d.deployment_id,
      (x) => {
        const last = x.instances?.[0]?.last_check;
        const at = last === undefined ? undefined : Date.parse(last);
        if (at !== undefined && at !== checks.at(-1)) checks.push(at);
        return checks.length >= 2 && checks.at(-1)! - checks.at(-2)! >= 700;
      },
      'the checks of an idle instance to space out',
    );
    const after = Number((await callTool(`${d.url}/mcp`, 'health_checks')).text);
    expect(after - before).toBeGreaterThan(0);
    expect(after - before).toBeLessThan(15);
    const status = await h.service.status(d.deployment_id);
    expect(running(status!)).toBe(1);
  });

  it('counts an answered request as a passed check: a busy instance is not replaced for a slow /health', async () => {
    // a 1 s interval, and a request at least every 100 ms that the instance answers
    h = await createHarness({ limits: { healthIntervalMs: 1_000, healthTimeoutMs: 300, unhealthyThreshold: 2 } });
    const d = await h.deploy(await h.addServer('busy'), 'development');
    const pid = d.instances![0]!.pid;
    expect((await callTool(`${d.url}/mcp`, 'hang_health')).status).toBe(200);
    for (let i = 0; i < 30; i += 1) {
      expect((await callTool(`${d.url}/mcp`, 'echo', { text: `${i}` })).text).toBe(`${i}`);
      await sleep(50);
    }
    const busy = await h.service.status(d.deployment_id);
    expect(busy!.instances![0]).toMatchObject({ state: 'healthy', pid, restarts: 0 });
    expect(busy!.instances![0]!.last_check).toBeDefined();
    // Once the requests stop, the checks that time out replace it as before.
    const healed = await h.waitUntil(
      d.deployment_id,
      (x) => running(x) === 1 && x.instances![0]!.restarts! >= 1,
      'the instance to be replaced once idle',
      20_000,
    );
    expect(healed.instances![0]!.pid).not.toBe(pid);
  });
  it('sends requests to an instance that failed a check when no instance is healthy, rather than answer 503', async () => {
    // A check that times out on a loaded machine (every instance's at once, when the machine
    // stalls) must not refuse every client while the instances still answer. A high threshold
    // keeps the instance from being replaced while the test looks.
    h = await createHarness({ limits: { healthIntervalMs: 100, healthTimeoutMs: 200, unhealthyThreshold: 1_000 } });
    const d = await h.deploy(await h.addServer('stalled'), 'development');
    const pid = d.instances![0]!.pid;
    expect((await callTool(`${d.url}/mcp`, 'hang_health')).status).toBe(200);
    await h.waitUntil(d.deployment_id, (x) => x.instances![0]!.state === 'unhealthy', 'the instance to fail a check');
    const answer = await callTool(`${d.url}/mcp`, 'echo', { text: 'still here' });
    expect(answer).toMatchObject({ status: 200, text: 'still here' });
    // the same process answered: it was not replaced
    expect((await callTool(`${d.url}/mcp`, 'pid')).text).toBe(String(pid));
    const lines = (await h.service.logs(d.deployment_id, { limit: 1000 })).map((l) => l.message);
    expect(lines.some((m) => /instance i1 failed a health check/.test(m))).toBe(true);
  });
});
