/**
 * One deployment's supervision in fake time, with the fake runner: its launch, an instance that
 * fails its checks and is replaced, restarts that run out, the autoscaler up and down, and the
 * drain. Its record is written to a real file store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startError } from './fake-runner.js';
import { elapse, liveSetup, LIMITS, until, useFakeTime, type LiveSetup } from './supervision-setup.js';

let setup: LiveSetup | undefined;

beforeEach(() => useFakeTime());
afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

async function launched(min: number, max: number): Promise<LiveSetup> {
  setup = await liveSetup(min, max);
  const launching = setup.live.launch(min, 'starting');
  await until('the launch', () => setup!.live.healthy() === min);
  await launching;
  setup.live.transition('deployed');
  return setup;
}

/** How many instances the gateway may send new requests to. */
const serving = ({ live }: LiveSetup) => live.backends().filter((backend) => backend.serving).length;

describe('a live deployment', () => {
  it('launches its instances: each healthy, labelled with the deployment, the stage counting them', async () => {
    setup = await liveSetup(2, 4);
    const { live, runner } = setup;
    const stages: string[] = [];
    const launching = live.launch(2, 'starting');
    await until('two healthy instances', () => {
      stages.push(live.toDeployment().stage ?? '');
      return live.healthy() === 2;
    });
    await launching;
    expect(runner.started.map((instance) => instance.labels.deployment)).toEqual([live.id, live.id]);
    expect(stages.at(-1)).toMatch(/starting instances 2\/2/);
    expect(live.describeInstances().map((instance) => instance.state)).toEqual(['healthy', 'healthy']);
    expect(serving(setup)).toBe(2);
  });

  it('a deploy whose server refuses to start fails its launch and stops what it started', async () => {
    setup = await liveSetup(2, 2);
    const { live, runner } = setup;
    runner.failNext.push(startError(false));
    const launching = live.launch(2, 'starting').then(
      () => 'launched',
      (error: Error) => error.message,
    );
    await until('the launch to settle', () => live.instances.every((instance) => instance.state !== 'starting'));
    expect(await launching).toMatch(/refused to start/);
    expect(runner.running()).toHaveLength(0);
  });

  it('takes an instance that fails its checks out of rotation and replaces its process; the deployment stays up', async () => {
    const { live, runner } = await launched(2, 2);
    runner.started[0]!.healthy = false;
    await until('the first instance out of rotation', () => serving(setup!) === 1);
    expect(live.status).toBe('deployed');
    await until('its process replaced', () => runner.started.length === 3 && live.healthy() === 2);
    expect(runner.started[0]!.stopped).toBe(true);
    expect(live.instances[0]!.restarts).toBe(1);
    expect(live.status).toBe('deployed');
  });

  it('with one instance given up it runs on the others; with every one given up it fails and stops', async () => {
    const { live, runner } = await launched(2, 2);
    const crashAll = (instance: number) => async () => {
      for (let attempt = 0; attempt <= LIMITS.maxRestarts; attempt += 1) {
        await until('a running process', () => live.instances[instance]!.state === 'healthy');
        runner
          .running()
          .find((item) => item.labels.instance === live.instances[instance]!.id)!
          .crash();
        await elapse(0);
      }
    };
    await crashAll(0)();
    await until('the first instance to give up', () => live.instances[0]!.state === 'failed');
    expect(live.status).toBe('deployed');
    expect(live.healthy()).toBe(1);
    await crashAll(1)();
    await until('the deployment to fail', () => live.status === 'failed');
    expect(live.toDeployment().reason ?? live.record.deployment.reason).toMatch(/restarts are exhausted/);
    await until('every process stopped', () => runner.running().length === 0);
  });

  it('scales up under load, and back down once the load has stayed low for the delay', async () => {
    const { live, runner } = await launched(1, 3);
    live.startAutoscaler();
    // 6 requests in flight against a target of 2 per instance
    live.trackLoad(6);
    await until('three instances', () => live.healthy() === 3);
    expect(live.desired).toBe(3);
    expect(runner.running()).toHaveLength(3);
    live.trackLoad(-6);
    await elapse(LIMITS.scaleDownDelayMs / 2);
    expect(live.desired).toBe(3);
    await until('one instance', () => live.desired === 1 && runner.running().length === 1);
    expect(live.healthy()).toBe(1);
  });

  it('scaled up and then idle, it wakes with one instance and wants no more than that until the load says so', async () => {
    const { live, runner } = await launched(1, 3);
    live.startAutoscaler();
    live.trackLoad(6);
    await until('three instances', () => live.healthy() === 3);
    live.trackLoad(-6);
    const parking = live.idling.park('idle');
    await until('no instance', () => runner.running().length === 0);
    await parking;
    expect(live.snapshot().desired).toBe(0);
    const waking = live.idling.wake();
    await until('the wake', () => live.healthy() === 1 && !live.idling.idle);
    await waking;
    expect(live.desired).toBe(1);
    expect(live.snapshot()).toMatchObject({ desired: 1, instances: [{ state: 'healthy' }] });
    expect(live.toDeployment().desired_instances).toBe(1);
  });

  it('drains: no instance takes new requests, and each stops once its requests are done', async () => {
    const { live, runner } = await launched(2, 2);
    live.instances[0]!.outstanding = 1;
    const draining = live.drainAll();
    await elapse(0);
    expect(serving(setup!)).toBe(0);
    await until('the idle instance stopped', () => runner.started[1]!.stopped);
    expect(runner.started[0]!.stopped).toBe(false);
    live.instances[0]!.outstanding = 0;
    await until('the drain', () => runner.started[0]!.stopped);
    await draining;
  });
});
