/**
 * Instance starts go through the engine's start queue: at most so many at once, a deployment
 * that waits says so in its stage, its start time-out counts from its slot, and a restore after
 * an engine restart retries a start that failed in a way that may pass, keeping the instances
 * that came up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WorkQueue } from '../../../src/engine/admission.js';
import { createHarness, running, type Harness } from '../../support/deployments.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('instance starts through the start queue', () => {
  it('starts one instance at a time with one slot; the others wait, say so, and all deploy', async () => {
    const starts = new WorkQueue('starts', { concurrency: 1, maxWaiting: 100 });
    h = await createHarness({ starts });
    const server = await h.addServer('slow', { listenDelayMs: 150 });
    const stages = new Set<string>();
    const deployments = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        h!.service.deploy(server, {
          mcp_id: server.server.mcp_id,
          environment: i % 2 === 0 ? 'staging' : 'production',
        }),
      ),
    );
    const settled = await Promise.all(
      deployments.map((d) =>
        h!.waitUntil(
          d.deployment_id,
          (current) => {
            if (current.stage !== undefined) stages.add(current.stage);
            return current.status !== 'deploying';
          },
          'the deployment to settle',
          60_000,
        ),
      ),
    );
    expect(settled.map((d) => d.status)).toEqual(['deployed', 'deployed', 'deployed', 'deployed']);
    expect(h.fixtures.mostStartingAtOnce).toBe(1);
    expect([...stages].some((stage) => /^queued: (\d+ starts? ahead|next in line)$/.test(stage))).toBe(true);
  });

  it('gives the runtime the documented start time-out, counted from the slot', async () => {
    h = await createHarness({ limits: { startTimeoutMs: 12_345 } });
    const server = await h.addServer('weather');
    await h.deploy(server, 'development');
    expect(h.fixtures.starts.map((options) => options.startTimeoutMs)).toEqual([12_345]);
  });

  it('refuses a new deployment with 503 and Retry-After when too many starts already wait', async () => {
    const starts = new WorkQueue('starts', { concurrency: 1, maxWaiting: 1 });
    h = await createHarness({ starts });
    const server = await h.addServer('slow', { listenDelayMs: 400 });
    const deploy = () => h!.service.deploy(server, { mcp_id: server.server.mcp_id, environment: 'staging' });
    const first = await deploy();
    const second = await deploy();
    await expect(deploy()).rejects.toMatchObject({
      code: 'unavailable',
      headers: { 'Retry-After': expect.stringMatching(/^\d+$/) },
    });
    for (const d of [first, second])
      await h.waitUntil(d.deployment_id, (c) => c.status === 'deployed', 'deployed', 30_000);
  });
});

describe('restore after an engine restart', () => {
  it('retries a start that died, instead of failing the deployment', async () => {
    h = await createHarness();
    // the first start deploys; the second (the restore) dies by SIGKILL; the third comes up
    const server = await h.addServer('flaky', { killAtStarts: [2] });
    const d = await h.deploy(server, 'development');
    expect(d.status).toBe('deployed');
    await h.restart();
    const after = await h.waitUntil(d.deployment_id, (c) => running(c) === 1, 'the restored instance', 30_000);
    expect(after).toMatchObject({ status: 'deployed', url: d.url });
    expect(after.instances![0]!.restarts).toBeGreaterThanOrEqual(1);
  });

  it('keeps an instance that came up while another keeps failing', async () => {
    h = await createHarness();
    // two starts deploy; of the two restored, the first comes up and every later start dies
    const server = await h.addServer('half', { killFromStart: 4 });
    const d = await h.deploy(server, 'production');
    expect(running(d)).toBe(2);
    await h.restart();
    const after = await h.waitUntil(
      d.deployment_id,
      (c) => (c.instances ?? []).some((i) => i.state === 'failed'),
      'the failing instance to be given up',
      30_000,
    );
    expect(after.status).toBe('deployed');
    const healthy = after.instances!.filter((i) => i.state === 'healthy');
    expect(healthy).toHaveLength(1);
    // still the process that came up at the restore: it was not stopped for the other's sake
    const pid = healthy[0]!.pid;
    expect((await h.service.status(d.deployment_id))!.instances!.find((i) => i.state === 'healthy')?.pid).toBe(pid);
    expect((await fetch(`${d.url}/health`)).status).toBe(200);
  });
});
