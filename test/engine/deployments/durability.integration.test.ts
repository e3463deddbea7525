/**
 * Durable acknowledgements: no answer reports a deployment state before that state is on disk.
 * The store here is slow on purpose for the writes that matter: while the record saying
 * `deployed` (or `stopped`) is being written, the service is asked what it reports and whether it
 * has woken its long-polls. Both must still say the state before.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Deployment, DeploymentState } from '../../../src/api/contract.js';
import type { DeploymentRecord } from '../../../src/engine/records.js';
import { createHarness, type Harness } from '../../support/deployments.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

interface Seen {
  status: DeploymentState;
  onDisk: boolean;
}

/**
 * Holds the write of the first record in state `watched` until the service has been asked what
 * it shows; returns what it showed then, and what a long-poll started before saw and when.
 */
function holdWriteOf(watched: DeploymentState) {
  const original = h.store.putDeployment.bind(h.store);
  const during: DeploymentState[] = [];
  const seen: Seen[] = [];
  let onDisk = false;
  h.store.putDeployment = async (record: DeploymentRecord) => {
    if (record.deployment.status === watched && !onDisk) {
      // Let anything woken by the change run first (a macrotask: every microtask is done).
      await new Promise((resolve) => setImmediate(resolve));
      during.push((await h.service.status(record.deployment.deployment_id))!.status);
      await original(record);
      onDisk = true;
      return;
    }
    await original(record);
  };
  /** follows a deployment with long-polls, noting every status seen and whether it was on disk yet */
  const follow = async (id: string, until: (d: Deployment) => boolean): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const current = (await h.service.waitForChange(id, 5_000))!;
      seen.push({ status: current.status, onDisk });
      if (until(current)) return;
      // a change in the last moments answers at once: do not spin on it
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`${id} did not settle`);
  };
  return { during, seen, follow };
}

describe('durable acknowledgements', () => {
  it('shows deployed, and wakes long-polls, only once the deployed record is on disk', async () => {
    const server = await h.addServer('weather');
    const watch = holdWriteOf('deployed');
    const first = await h.service.deploy(server, { mcp_id: server.server.mcp_id, environment: 'development' });
    expect(first.status).toBe('deploying');
    await watch.follow(first.deployment_id, (d) => d.status !== 'deploying');

    expect(watch.during).toEqual(['deploying']);
    expect(watch.seen.filter((s) => s.status === 'deployed')).not.toEqual([]);
    expect(watch.seen.filter((s) => s.status === 'deployed' && !s.onDisk)).toEqual([]);
    expect((await h.store.getDeployment(first.deployment_id))?.deployment.status).toBe('deployed');
  });

  it('shows stopped only once the stopped record is on disk', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    expect(d.status).toBe('deployed');
    const watch = holdWriteOf('stopped');
    const stopped = await h.service.stop(d.deployment_id);
    expect(stopped.status).toBe('stopped');
    expect(watch.during).toEqual(['deployed']);
    expect((await h.store.getDeployment(d.deployment_id))?.deployment.status).toBe('stopped');
  });

  it('shows failed only once the failed record is on disk', async () => {
    const server = await h.addServer('broken', { failStart: true });
    const watch = holdWriteOf('failed');
    const d = await h.deploy(server, 'development');
    expect(d.status).toBe('failed');
    expect(watch.during).toEqual(['deploying']);
  });
});

describe('a long-poll that says what the caller already has', () => {
  it('ends only when the deployment no longer looks unchanged to it, with the view that ended it', async () => {
    const server = await h.addServer('weather');
    const first = await h.service.deploy(server, { mcp_id: server.server.mcp_id, environment: 'development' });
    expect(first.status).toBe('deploying');
    // every stage of the start is a change, but not one this caller waits for
    const settled = await h.service.waitForChange(
      first.deployment_id,
      20_000,
      undefined,
      (d) => d.status === 'deploying',
    );
    expect(settled?.status).toBe('deployed');
  });

  it('does not miss a change made before it was asked: a view that already differs ends it at once', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    expect(d.status).toBe('deployed');
    const asked = new AbortController();
    // were the deployed change missed, this would wait the full minute (and the test time out)
    const seen = await h.service.waitForChange(
      d.deployment_id,
      60_000,
      asked.signal,
      (view) => view.status === 'deploying',
    );
    expect(seen?.status).toBe('deployed');
    const stopping = h.service.stop(d.deployment_id);
    const after = await h.service.waitForChange(
      d.deployment_id,
      60_000,
      asked.signal,
      (view) => view.status === 'deployed',
    );
    expect(after?.status).toBe('stopped');
    await stopping;
  });
});

describe('a record that cannot be written', () => {
  it('is no deployment: deploy fails with 503 and nothing starts or is listed', async () => {
    const server = await h.addServer('weather');
    h.store.putDeployment = async () => {
      throw new Error('disk full');
    };
    await expect(
      h.service.deploy(server, { mcp_id: server.server.mcp_id, environment: 'development' }),
    ).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/could not be saved.*disk full/),
    });
    expect(h.fixtures.starts).toEqual([]);
    expect(await h.store.listDeployments()).toEqual([]);
  });

  it('is not reported: a stop whose record cannot be written fails with 503', async () => {
    const server = await h.addServer('weather');
    const d = await h.deploy(server, 'development');
    h.store.putDeployment = async () => {
      throw new Error('disk full');
    };
    await expect(h.service.stop(d.deployment_id)).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/could not be saved/),
    });
    expect((await h.service.status(d.deployment_id))?.status).toBe('deployed');
  });
});
