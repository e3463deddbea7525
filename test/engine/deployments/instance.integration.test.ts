/**
 * One supervised instance on its own: what happens when it is stopped while it is still starting
 * (an autoscaler scaling down, a deployment stopped in the middle of a rollout).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WorkQueue } from '../../../src/engine/admission.js';
import { ManagedInstance } from '../../../src/engine/deployments/instance.js';
import { DEFAULT_LIMITS } from '../../../src/engine/deployments/limits.js';
import { createFixtureStarter } from '../../support/fixture-instance.js';
import { FAST_LIMITS } from '../../support/deployments.js';

const starter = createFixtureStarter();
afterEach(() => starter.killAll());

function instance(): ManagedInstance {
  const noop = () => undefined;
  return new ManagedInstance(
    'i1',
    { bundleDir: '/nonexistent', env: {}, logLevel: 'info' },
    {
      startRuntime: starter.start,
      starts: new WorkQueue('starts', { concurrency: 2, maxWaiting: 10 }),
      limits: { ...DEFAULT_LIMITS, ...FAST_LIMITS },
      clock: () => Date.now(),
      hooks: { log: noop, output: noop, changed: noop, gaveUp: noop },
    },
  );
}

describe('an instance stopped while it starts', () => {
  it('with retry, start resolves (it is started without being awaited) and nothing is left running', async () => {
    const managed = instance();
    const starting = managed.start({ retry: true });
    await managed.stop();
    await expect(starting).resolves.toBeUndefined();
    expect(managed.state).toBe('stopped');
    expect(managed.pid).toBeUndefined();
    for (const handle of starter.handles) expect(await handle.exited).toBeDefined();
  });

  it('without retry, start rejects so the rollout that awaits it knows', async () => {
    const managed = instance();
    const starting = managed.start({ retry: false });
    await managed.stop();
    await expect(starting).rejects.toThrow('stopped while starting');
    expect(managed.state).toBe('stopped');
  });
});
