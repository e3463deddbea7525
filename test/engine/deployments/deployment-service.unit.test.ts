/**
 * The deployment service in fake time, with the fake runner and a real file store: a deploy that
 * comes up, a second deploy of the same server and environment that replaces the first (the
 * rollout), a deploy that fails, a stop, and a rollback to the previous deployment's build.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startError } from './fake-runner.js';
import { inFakeTime, serviceSetup, useFakeTime, type ServiceSetup } from './supervision-setup.js';

let setup: ServiceSetup | undefined;

beforeEach(() => useFakeTime());
afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

const settled = (deployment: { status: string }) => deployment.status !== 'deploying';

describe('the deployment service', () => {
  it('answers a deploy with `deploying` at once, then is deployed once its instances serve, on disk too', async () => {
    setup = await serviceSetup();
    const { service, runner, store } = setup;
    const server = await setup.addServer('calc');
    const accepted = await service.deploy(server, { mcp_id: server.server.mcp_id, environment: 'production' });
    expect(accepted.status).toBe('deploying');
    const deployed = await setup.settle(accepted.deployment_id, settled, 'the deploy');
    expect(deployed.status).toBe('deployed');
    expect(deployed.instances?.map((instance) => instance.state)).toEqual(['healthy', 'healthy']);
    expect(runner.running()).toHaveLength(2);
    expect(deployed.transitions?.map((step) => step.status)).toEqual(['deploying', 'deployed']);
    expect((await store.getDeployment(accepted.deployment_id))?.deployment.status).toBe('deployed');
  });

  it('replaces the deployed one of the same server and environment once the new one serves', async () => {
    setup = await serviceSetup();
    const { service, runner } = setup;
    const server = await setup.addServer('calc');
    const first = await setup.deploy(server, 'staging');
    await setup.settle(first, settled, 'the first deploy');
    const firstInstance = runner.running()[0]!;
    // the new deployment's instance is slow to answer: the first serves until it does
    runner.healthyOnStart = false;
    const second = await setup.deploy(server, 'staging');
    await setup.settle(second, (d) => d.instances?.length === 1, 'the second deployment’s instance');
    expect((await service.status(first))?.status).toBe('deployed');
    expect(firstInstance.stopped).toBe(false);
    runner.started.at(-1)!.healthy = true;
    await setup.settle(second, (d) => d.status === 'deployed', 'the second deploy');
    const replaced = await setup.settle(first, (d) => d.status === 'stopped', 'the first to be replaced');
    expect(replaced.reason).toBe(`replaced by ${second}`);
    expect(firstInstance.stopped).toBe(true);
    expect(runner.running()).toHaveLength(1);
  });

  it('fails a deploy whose server refuses to start, with the reason, and leaves the deployed one alone', async () => {
    setup = await serviceSetup();
    const { runner } = setup;
    const server = await setup.addServer('calc');
    const good = await setup.deploy(server, 'staging');
    await setup.settle(good, settled, 'the first deploy');
    runner.failNext.push(startError(false));
    const bad = await setup.deploy(server, 'staging');
    const failed = await setup.settle(bad, settled, 'the failing deploy');
    expect(failed.status).toBe('failed');
    expect(failed.reason).toMatch(/instances did not start: .*refused to start/);
    expect((await setup.service.status(good))?.status).toBe('deployed');
    expect(runner.running()).toHaveLength(1);
  });

  it('stops a deployment: its instances end, the state is on disk, and a second stop is a conflict', async () => {
    setup = await serviceSetup();
    const { service, runner, store } = setup;
    const server = await setup.addServer('calc');
    const id = await setup.deploy(server, 'production');
    await setup.settle(id, settled, 'the deploy');
    const stopped = await inFakeTime(service.stop(id));
    expect(stopped.status).toBe('stopped');
    expect(stopped.reason).toBe('stopped on request');
    expect(runner.running()).toHaveLength(0);
    expect((await store.getDeployment(id))?.deployment.status).toBe('stopped');
    await expect(service.stop(id)).rejects.toMatchObject({ code: 'conflict' });
  });

  it('tells the runner to forget a deployment once it is removed (the Docker runner drops its task volume)', async () => {
    setup = await serviceSetup();
    const { service, runner } = setup;
    const server = await setup.addServer('calc');
    const id = await setup.deploy(server, 'production');
    await setup.settle(id, settled, 'the deploy');
    await expect(service.remove!(id)).rejects.toMatchObject({ code: 'conflict' });
    expect(runner.forgotten).toEqual([]);
    await inFakeTime(service.stop(id));
    await service.remove!(id);
    expect(runner.forgotten).toEqual([expect.stringMatching(new RegExp(` ${id}$`))]);
  });

  it('rolls back: a new deployment with the previous build and config, which replaces the current one', async () => {
    setup = await serviceSetup();
    const { service, runner } = setup;
    const v1 = await setup.addServer('calc');
    const v2 = await setup.addServer('calc');
    const first = await setup.deploy(v1, 'staging', { env_vars: { MODE: 'one' } });
    await setup.settle(first, settled, 'the first deploy');
    const second = await setup.deploy(v2, 'staging', { env_vars: { MODE: 'two' } });
    await setup.settle(second, settled, 'the second deploy');
    const back = await service.rollback(second);
    expect(back.mcp_id).toBe(v1.server.mcp_id);
    expect((await setup.settle(back.deployment_id, settled, 'the rollback')).status).toBe('deployed');
    const replaced = await setup.settle(second, (d) => d.status === 'stopped', 'the second to be replaced');
    expect(replaced.reason).toBe(`replaced by ${back.deployment_id}`);
    expect(runner.started.at(-1)!.spec.env).toMatchObject({ MODE: 'one' });
    expect(runner.running()).toHaveLength(1);
  });
  it.each(['swarm', 'kubernetes'])(
    'refuses a production scale to zero (min_instances 0) where %s runs production, before anything starts',
    async (kind) => {
      setup = await serviceSetup();
      const { service, runner } = setup;
      // an orchestrator that takes production (it is never asked to run anything here)
      Object.assign(runner, { orchestrator: { kind, handles: (environment: string) => environment === 'production' } });
      const server = await setup.addServer('calc');
      const request = {
        mcp_id: server.server.mcp_id,
        environment: 'production' as const,
        config: { scaling: { min_instances: 0 } },
      };
      await expect(service.deploy(server, request)).rejects.toMatchObject({
        code: 'validation_failed',
        details: [{ path: 'config.scaling.min_instances', message: expect.stringMatching(/^must not be 0 here/) }],
      });
      expect(runner.started).toHaveLength(0);
      expect(service.snapshot?.()).toEqual([]);
    },
  );
});
