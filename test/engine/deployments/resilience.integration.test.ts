import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, createHarness, eventually, running, type Harness } from '../../support/deployments.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe('supervision', () => {
  it('keeps serving when a production instance is killed: only calls in flight may fail, and the instance is replaced', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'production');
    const victim = d.instances![0]!;
    const handle = h.fixtures.handles.find((x) => x.pid === victim.pid)!;

    const CONCURRENCY = 4;
    const TOTAL = 240;
    let sent = 0;
    let dead = false;
    const outcomes: Array<{ ok: boolean; startedAfterDeath: boolean }> = [];
    void handle.exited.then(() => (dead = true));
    const worker = async () => {
      while (sent < TOTAL) {
        sent += 1;
        if (sent === 60) process.kill(victim.pid!, 'SIGKILL');
        const startedAfterDeath = dead;
        const answer = await callTool(`${d.url}/mcp`, 'slow', { ms: 10 }).catch(() => ({ status: 0, text: undefined }));
        outcomes.push({ ok: answer.status === 200 && answer.text === 'slept 10', startedAfterDeath });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    expect(dead).toBe(true);
    expect(outcomes).toHaveLength(TOTAL);
    const failed = outcomes.filter((o) => !o.ok);
    // A call can fail only if it was already on its way when the process died.
    expect(failed.every((o) => !o.startedAfterDeath)).toBe(true);
    expect(failed.length).toBeLessThanOrEqual(CONCURRENCY);

    const healed = await h.waitUntil(
      d.deployment_id,
      (x) => running(x) === 2 && (x.instances!.find((i) => i.id === victim.id)?.restarts ?? 0) >= 1,
      'the killed instance to be replaced',
    );
    const replaced = healed.instances!.find((i) => i.id === victim.id)!;
    expect(replaced.pid).not.toBe(victim.pid);
    expect(healed.status).toBe('deployed');
    const lines = await h.service.logs(d.deployment_id, { limit: 1000 });
    expect(lines.some((l) => l.instance === victim.id && /killed by SIGKILL/.test(l.message))).toBe(true);
  });

  it('answers a call whose instance died under it with 502 and the id of that call', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    const pid = d.instances![0]!.pid!;
    const answer = fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'call-7',
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 5000 } },
      }),
    });
    // once the instance has the call, it dies
    await eventually(async () =>
      expect(
        (await h.service.logs(d.deployment_id, { limit: 1000 })).some((l) =>
          /request tools\/call slow/.test(l.message),
        ),
      ).toBe(true),
    );
    process.kill(pid, 'SIGKILL');
    const response = await answer;
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 'call-7',
      error: { message: expect.stringMatching(/closed the connection/) },
    });
  });

  it('replaces an instance that stops answering its health checks', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    const before = d.instances![0]!;
    expect((await callTool(`${d.url}/mcp`, 'hang_health')).status).toBe(200);

    const healed = await h.waitUntil(
      d.deployment_id,
      (x) => running(x) === 1 && x.instances![0]!.restarts! >= 1,
      'the unresponsive instance to be replaced',
    );
    expect(healed.instances![0]!.pid).not.toBe(before.pid);
    expect((await callTool(`${d.url}/mcp`, 'pid')).text).toBe(String(healed.instances![0]!.pid));
    const lines = await h.service.logs(d.deployment_id, { limit: 1000 });
    expect(lines.some((l) => /did not answer 2 health checks/.test(l.message))).toBe(true);
  });

  it('gives up after the restart limit and marks the deployment failed with the reason', async () => {
    const server = await h.addServer('crashy', { exitAfterMs: 250 });
    const d = await h.deploy(server, 'development');
    expect(d.status).toBe('deployed');

    const failed = await h.waitUntil(d.deployment_id, (x) => x.status === 'failed', 'the deployment to fail');
    expect(failed.reason).toMatch(/restarts are exhausted/);
    expect(failed.instances![0]).toMatchObject({ state: 'failed', restarts: 3 });
    expect(failed.transitions!.map((t) => t.status)).toEqual(['deploying', 'deployed', 'failed']);
    await eventually(async () =>
      expect((await h.store.getDeployment(d.deployment_id))?.deployment.status).toBe('failed'),
    );
    const lines = await h.service.logs(d.deployment_id, { limit: 1000 });
    expect(lines.some((l) => /given up after 3 restarts in a row: exited with code 9/.test(l.message))).toBe(true);
    expect(lines.some((l) => /crashing as told/.test(l.message))).toBe(true);
  });
});
