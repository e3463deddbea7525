/**
 * While `deployed` is on its way to the disk, answers still say `deploying` (an answer that
 * reports a state is sent only after that state is on disk). Their stage used to be the one on
 * disk, `queued`, with every instance already healthy: `queued (2/2 healthy)`. It says what comes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeploymentRecord } from '../../../src/engine/records.js';
import { createHarness, type Harness } from '../../support/deployments.js';
import { waitUntil } from '../../support/wait.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the stage after healthy instances', () => {
  it('is "instances healthy, going live" while deployed is being written, not queued', async () => {
    h = await createHarness();
    const store = h.store;
    const write = store.putDeployment.bind(store);
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    // the write of `deployed` waits until the test has looked
    store.putDeployment = async (record: DeploymentRecord) => {
      if (record.deployment.status === 'deployed' && !holding) {
        holding = true;
        await held;
      }
      return write(record);
    };
    const server = await h.addServer('weather');
    const accepted = await h.service.deploy(server, { mcp_id: server.server.mcp_id, environment: 'production' });
    await waitUntil('deployed to be on its way to the disk', () => holding);
    const view = (await h.service.status(accepted.deployment_id))!;
    expect(view.status).toBe('deploying');
    expect(view.instances?.every((instance) => instance.state === 'healthy')).toBe(true);
    expect(view.stage).toBe('instances healthy, going live');
    release!();
    const settled = await h.waitUntil(accepted.deployment_id, (d) => d.status === 'deployed', 'the deploy');
    expect(settled.stage).toBe('running');
  });
});
