/**
 * Deployments the engine has on disk but does not run (stopped, replaced) cost the request path
 * nothing: a request to a running deployment never reads the store, and a deploy reads the one
 * record of its server's history it needs.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newDeploymentRecord } from '../../../src/engine/deployments/new-record.js';
import { applyTransition } from '../../../src/engine/deployments/states.js';
import type { ServerRecord } from '../../../src/engine/records.js';
import { callTool, createHarness, type Harness } from '../../support/deployments.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await h.close();
});

/** `count` stopped development deployments of `server`, written to the store as the engine writes them. */
async function registerStopped(server: ServerRecord, count: number): Promise<string[]> {
  const ids: string[] = [];
  const start = Date.now() - (count + 1) * 60_000;
  for (let i = 0; i < count; i += 1) {
    const now = start + i * 60_000;
    const record = newDeploymentRecord({
      server,
      environment: 'development',
      config: {},
      domain: undefined,
      desired: 1,
      previousId: ids.at(-1),
      baseUrl: h.baseUrl,
      now,
    });
    applyTransition(record.deployment, 'deployed', now + 100);
    applyTransition(record.deployment, 'stopped', now + 200, 'replaced');
    await h.store.putDeployment(record);
    ids.push(record.deployment.deployment_id);
  }
  return ids;
}

describe('deployments on disk that do not run', () => {
  it('are not read by a request to a running deployment', async () => {
    const server = await h.addServer('weather');
    await registerStopped(server, 40);
    const running = await h.deploy(await h.addServer('other'), 'development');
    const reads = [
      vi.spyOn(h.store, 'getDeployment'),
      vi.spyOn(h.store, 'listDeployments'),
      vi.spyOn(h.store, 'getServer'),
      vi.spyOn(h.store, 'listServers'),
    ];

    for (let i = 0; i < 5; i += 1)
      expect((await callTool(`${running.url}/mcp`, 'echo', { text: `call ${i}` })).text).toBe(`call ${i}`);
    const health = await fetch(`${running.url}/health`);
    expect(health.status).toBe(200);

    expect(reads.map((read) => read.mock.calls.length)).toEqual([0, 0, 0, 0]);
  });

  it('a stopped one is still answered clearly by name, from its record', async () => {
    const [stopped] = await registerStopped(await h.addServer('weather'), 3);
    const answer = await callTool(`${h.baseUrl}/d/${stopped}/mcp`, 'echo', { text: 'hi' });
    expect(answer.status).toBe(503);
    expect(answer.message?.error?.message).toBe(`deployment ${stopped} is stopped`);
  });

  it('a deploy follows the newest of them that was deployed, reading one record of the history', async () => {
    const server = await h.addServer('weather');
    const ids = await registerStopped(server, 30);
    const list = vi.spyOn(h.store, 'listDeployments');
    const next = await h.deploy(server, 'development');
    expect((await h.store.getDeployment(next.deployment_id))?.previousId).toBe(ids.at(-1));
    const returned = await Promise.all(
      list.mock.results.map(async (result) => ((await result.value) as unknown[]).length),
    );
    expect(returned).toEqual([1]);
  });
});
