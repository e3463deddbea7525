import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, createHarness, running, type Harness } from '../../support/deployments.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

describe('autoscaling', () => {
  it('scales a production deployment up under load and back down when the load stops', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'production', { scaling: { min_instances: 2, max_instances: 4 } });
    expect(d.desired_instances).toBe(2);

    // 16 clients calling a slow tool keep about 16 requests in flight: far over 2 per instance.
    let loaded = true;
    let calls = 0;
    // what each failed call was answered, to say why when there is one
    const failures: string[] = [];
    const client = async () => {
      while (loaded && calls < 5000) {
        calls += 1;
        const answer = await callTool(`${d.url}/mcp`, 'slow', { ms: 50 });
        if (answer.status !== 200)
          failures.push(`${answer.status} ${JSON.stringify(answer.message?.error ?? answer.message)}`);
      }
    };
    const clients = Array.from({ length: 16 }, client);
    const up = await h
      .waitUntil(d.deployment_id, (x) => x.desired_instances === 4 && running(x) === 4, 'scaling up to 4 instances')
      .finally(() => (loaded = false));
    await Promise.all(clients);
    expect(up.instances!.length).toBe(4);
    expect(failures).toEqual([]);

    const down = await h.waitUntil(
      d.deployment_id,
      (x) => x.desired_instances === 2 && x.instances!.length === 2 && running(x) === 2,
      'scaling back down to 2 instances',
    );
    expect(down.status).toBe('deployed');
    const lines = (await h.service.logs(d.deployment_id, { limit: 1000 })).map((l) => l.message);
    // The steps depend on how busy the machine is (2 → 4 at once, or 2 → 3 → 4): read their direction.
    const steps = lines.flatMap((m) => {
      const step = /scaling from (\d+) to (\d+) instances/.exec(m);
      return step === null ? [] : [[Number(step[1]), Number(step[2])] as const];
    });
    expect(steps.some(([from, to]) => from === 2 && to > 2)).toBe(true);
    expect(steps.some(([from, to]) => from > 2 && to === 2)).toBe(true);
    expect(steps.every(([from, to]) => from !== to && Math.max(from, to) <= 4 && Math.min(from, to) >= 2)).toBe(true);
    // What remains still serves.
    expect((await callTool(`${d.url}/mcp`, 'echo', { text: 'after' })).text).toBe('after');
  });
});
