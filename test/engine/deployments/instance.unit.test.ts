import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from '../../../src/engine/admission.js';
import { ManagedInstance, type InstanceHooks } from '../../../src/engine/deployments/instance.js';
import type { DeploymentLimits } from '../../../src/engine/deployments/limits.js';
import { createFakeRunner, startError, type FakeRunner } from './fake-runner.js';
import { elapse, LIMITS } from './supervision-setup.js';

interface Setup {
  runner: FakeRunner;
  instance: ManagedInstance;
  hooks: InstanceHooks & { lines: string[]; gaveUp: ReturnType<typeof vi.fn> };
}

function setup(limits: Partial<DeploymentLimits> = {}): Setup {
  const runner = createFakeRunner();
  const lines: string[] = [];
  const hooks = {
    lines,
    log: (_level: string, message: string) => void lines.push(message),
    output: () => undefined,
    changed: () => undefined,
    gaveUp: vi.fn(),
  };
  const instance = new ManagedInstance(
    'i1',
    { owner: { engine: 'home', deployment: 'deploy_1' }, bundleDir: '/bundle', env: {}, logLevel: 'info' },
    {
      runner,
      starts: new WorkQueue('starts', { concurrency: 2, maxWaiting: 100 }),
      limits: { ...LIMITS, ...limits },
      clock: () => Date.now(),
      hooks,
    },
  );
  return { runner, instance, hooks };
}

/** Runs fake time in 10 ms steps until `done` holds (at most 5 s of it). */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 5000) throw new Error('the condition did not come within 5 s of fake time');
    await elapse(10);
  }
}

describe('a supervised instance', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts: healthy once its process answers, with the runner labels of its deployment', async () => {
    const { runner, instance } = setup();
    await instance.start({ retry: false });
    expect(instance.state).toBe('healthy');
    expect(instance.serving).toBe(true);
    expect(instance.port).toBe(runner.started[0]!.port);
    expect(runner.started[0]!.spec.labels).toEqual({ engine: 'home', deployment: 'deploy_1', instance: 'i1' });
    await instance.stop();
  });

  it('without retry, a failed start rejects and leaves it stopped', async () => {
    const { runner, instance } = setup();
    runner.failNext.push(startError(true));
    await expect(instance.start({ retry: false })).rejects.toThrow(/could not start: timed out/);
    expect(instance.state).toBe('stopped');
  });

  it('fails a health check (unhealthy), then replaces its process after the threshold', async () => {
    const { runner, instance, hooks } = setup();
    await instance.start({ retry: true });
    runner.started[0]!.healthy = false;
    const seen = new Set<string>();
    await until(() => {
      seen.add(instance.state);
      return runner.started[0]!.stopped;
    });
    // the first failed check takes it out of rotation before the threshold replaces its process
    expect(seen.has('unhealthy')).toBe(true);
    expect(hooks.lines.some((line) => /did not answer 2 health checks in a row/.test(line))).toBe(true);
    await until(() => runner.started.length === 2 && instance.state === 'healthy');
    expect(instance.restarts).toBe(1);
    await instance.stop();
  });

  it('comes back from unhealthy when a check passes again', async () => {
    const { runner, instance } = setup();
    await instance.start({ retry: true });
    runner.started[0]!.healthy = false;
    // checks come 90 to 110 ms apart (jittered): the threshold's second failure is that far away
    await until(() => instance.state === 'unhealthy');
    runner.started[0]!.healthy = true;
    await elapse(120);
    expect(instance.state).toBe('healthy');
    expect(runner.started).toHaveLength(1);
    await instance.stop();
  });

  it('restarts a crashed process with a doubling back-off, then gives up after maxRestarts in a row', async () => {
    const { runner, instance, hooks } = setup();
    await instance.start({ retry: true });
    const delays: number[] = [];
    for (let attempt = 1; attempt <= LIMITS.maxRestarts; attempt += 1) {
      runner.running()[0]!.crash();
      await elapse(0);
      expect(instance.state).toBe('restarting');
      const before = runner.started.length;
      let waited = 0;
      while (runner.started.length === before) {
        await elapse(10);
        waited += 10;
      }
      delays.push(waited);
    }
    expect(delays).toEqual([50, 100, 200]);
    runner.running()[0]!.crash();
    await elapse(0);
    expect(instance.state).toBe('failed');
    expect(instance.failure).toMatch(/exited with code 1/);
    expect(hooks.gaveUp.mock.calls).toHaveLength(1);
    expect(instance.restarts).toBe(LIMITS.maxRestarts);
  });

  it('gives up at once when the server refuses to start and the start fails fast', async () => {
    const { runner, instance, hooks } = setup();
    runner.failNext.push(startError(false));
    await instance.start({ retry: true, failFast: true });
    expect(instance.state).toBe('failed');
    expect(hooks.gaveUp.mock.calls).toHaveLength(1);
    expect(runner.started).toHaveLength(0);
  });

  it('retries a start that may pass with back-off', async () => {
    const { runner, instance } = setup();
    runner.failNext.push(startError(true));
    await instance.start({ retry: true, failFast: true });
    expect(instance.state).toBe('restarting');
    await elapse(LIMITS.restartBackoffMs);
    expect(instance.state).toBe('healthy');
    await instance.stop();
  });

  it('drains: out of balancing at once, stopped once its requests are done', async () => {
    const { runner, instance } = setup();
    await instance.start({ retry: true });
    instance.outstanding = 1;
    const drained = instance.drain();
    expect(instance.state).toBe('draining');
    expect(instance.serving).toBe(false);
    expect(instance.reachable).toBe(true);
    await elapse(200);
    expect(runner.started[0]!.stopped).toBe(false);
    instance.outstanding = 0;
    await elapse(50);
    await drained;
    expect(instance.state).toBe('stopped');
    expect(runner.started[0]!.stopped).toBe(true);
  });

  it('drains at most for the drain time-out', async () => {
    const { runner, instance } = setup();
    await instance.start({ retry: true });
    instance.outstanding = 1;
    const drained = instance.drain();
    await elapse(LIMITS.drainTimeoutMs + 50);
    await drained;
    expect(instance.state).toBe('stopped');
    expect(runner.started[0]!.stopped).toBe(true);
  });

  it('stops for good: a crash after the stop is not restarted', async () => {
    const { runner, instance } = setup();
    await instance.start({ retry: true });
    await instance.stop();
    expect(instance.state).toBe('stopped');
    await elapse(1000);
    expect(runner.started).toHaveLength(1);
    expect(instance.state).toBe('stopped');
  });

  it('a suspect (a request that could not connect) is checked at once', async () => {
    const { runner, instance } = setup();
    await instance.start({ retry: true });
    const checks = runner.started[0]!.checks;
    instance.suspect();
    await elapse(0);
    expect(runner.started[0]!.checks).toBe(checks + 1);
    expect(instance.state).toBe('healthy');
    await instance.stop();
  });
});
