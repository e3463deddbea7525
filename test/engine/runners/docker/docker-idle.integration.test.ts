/**
 * Scale to zero on the Docker runner, against a real Docker daemon (test/support/docker.ts:
 * DOCKER_HOST, or a dockerd of this file's own; skipped with the reason outside CI when neither can
 * be had): a staging deployment that gets no request for its idle period removes its containers (and
 * its network) but stays `deployed`, its health URL answers healthy, the next tools/call through the
 * gateway starts a new container and is answered, and an engine restart (a clean one, and after
 * kill -9) keeps an idle deployment idle, with no container, until a request wakes it. Containers and
 * networks are found by the engine's labels; container starts are read from the daemon's events.
 * Needs the built package (dist/): the image holds it.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DockerClient } from '../../../../src/engine/runners/docker/engine-api.js';
import { CONTAINER_LABELS } from '../../../../src/engine/runners/docker/docker-runner.js';
import { NETWORK_LABELS } from '../../../../src/engine/runners/docker/networks.js';
import { isProcessAlive } from '../../../../src/engine/engine-lock.js';
import { call, killEngineOf, requireBuilt, ROOT, tempHome } from '../../../support/app.js';
import { spawnDaemon, waitForDaemon, type DaemonState } from '../../../support/daemon.js';
import {
  dockerSkipReason,
  ensureNodeBaseImage,
  removeContainers,
  startTestDocker,
  type TestDocker,
} from '../../../support/docker.js';
import type { TempDir } from '../../../support/temp.js';
import { waitFor } from '../../../support/wait.js';
import { runBin, type BinResult } from '../../../support/cli.js';

const CALCULATOR = join(ROOT, 'examples', 'calculator', 'server.yaml');

interface ContainerSummary {
  Id: string;
  Labels: Record<string, string>;
}

interface DeploymentStatus {
  status: string;
  stage?: string;
  idle?: boolean;
  url: string;
  instances?: Array<{ id: string; state: string }>;
}

/** One tools/call through the gateway: the answer's status and text, whether it came as JSON or as an event stream. */
async function toolsCall(url: string, name: string, args: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { status: response.status, text: await response.text() };
}

describe.skipIf(dockerSkipReason !== undefined)(
  `scale to zero on the Docker runner${dockerSkipReason === undefined ? '' : ` (skipped: ${dockerSkipReason})`}`,
  () => {
    let docker: TestDocker;
    let client: DockerClient;
    let baseImage: string;
    let imagesBefore = new Set<string>();
    const temps: TempDir[] = [];
    const homes: string[] = [];
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      requireBuilt();
      docker = await startTestDocker();
      client = docker.client;
      imagesBefore = new Set(
        (await client.json<Array<{ Id: string }>>('GET', '/images/json')).map((image) => image.Id),
      );
      baseImage = await ensureNodeBaseImage(client);
    }, 120_000);

    afterAll(async () => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const home of homes) {
        killEngineOf(home);
        if (client === undefined) continue;
        await removeContainers(client, `${CONTAINER_LABELS.engine}=${home}`).catch(() => undefined);
        const networks = await client
          .json<Array<{ Id: string }>>('GET', '/networks', {
            query: { filters: JSON.stringify({ label: [`${NETWORK_LABELS.engine}=${home}`] }) },
          })
          .catch(() => []);
        for (const network of networks) await client.json('DELETE', `/networks/${network.Id}`).catch(() => undefined);
      }
      // on a daemon this file did not start, every image it added is removed
      if (client !== undefined && !docker.owned) {
        const added = (await client.json<Array<{ Id: string }>>('GET', '/images/json')).filter(
          (image) => !imagesBefore.has(image.Id),
        );
        for (const image of added)
          await client.json('DELETE', `/images/${image.Id}`, { query: { force: 1 } }).catch(() => undefined);
      }
      for (const temp of temps) await temp.cleanup();
      await docker?.stop();
    }, 120_000);

    async function containersOf(home: string): Promise<ContainerSummary[]> {
      return client.json<ContainerSummary[]>('GET', '/containers/json', {
        query: { all: 1, filters: JSON.stringify({ label: [`${CONTAINER_LABELS.engine}=${home}`] }) },
      });
    }

    /** The daemon's clock, in seconds, for /events?since= (its clock may not be this machine's). */
    async function daemonTime(): Promise<number> {
      const info = await client.json<{ SystemTime: string }>('GET', '/info');
      return Math.floor(Date.parse(info.SystemTime) / 1000);
    }

    /** The deployments (their label) of the engine's containers that started since `since` (daemon seconds), in order. */
    async function startsSince(home: string, since: number): Promise<string[]> {
      const until = (await daemonTime()) + 1;
      const stream = await client.stream('GET', '/events', {
        query: {
          since,
          until,
          filters: JSON.stringify({
            type: ['container'],
            event: ['start'],
            label: [`${CONTAINER_LABELS.engine}=${home}`],
          }),
        },
        long: true,
      });
      let text = '';
      for await (const chunk of stream) text += String(chunk);
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => (JSON.parse(line) as { Actor: { Attributes: Record<string, string> } }).Actor.Attributes)
        .map((attributes) => attributes[CONTAINER_LABELS.deployment] ?? '');
    }

    async function networksOf(home: string): Promise<Array<{ Name: string }>> {
      return client.json<Array<{ Name: string }>>('GET', '/networks', {
        query: { filters: JSON.stringify({ label: [`${NETWORK_LABELS.engine}=${home}`] }) },
      });
    }

    it('an idle staging deployment holds no container, answers healthy, a tools/call starts one, and an engine restart keeps it idle', async () => {
      const temp = await tempHome('mcpctl-docker-idle-');
      temps.push(temp);
      const home = temp.dir;
      homes.push(home);
      const env = {
        PATH: process.env.PATH!,
        MCPCTL_HOME: home,
        MCPCTL_RATE_LIMIT: '0',
        MCPCTL_RUNNER: 'docker',
        MCPCTL_DOCKER_BASE_IMAGE: baseImage,
        ...docker.env,
      };
      const cli = (args: string[]): Promise<BinResult> =>
        runBin(join(ROOT, 'bin', 'mcpctl.cjs'), args, { env, cwd: ROOT });
      spawnDaemon(env, children);
      let engine: DaemonState = await waitForDaemon(home);
      expect(engine.runner).toBe('docker');

      const deployedSince = await daemonTime();
      const deployed = await cli(['--json', 'deploy', CALCULATOR, '--env', 'staging', '--idle-seconds', '1']);
      expect(deployed.code, deployed.stderr).toBe(0);
      const { deployment_id: id, url } = JSON.parse(deployed.stdout) as { deployment_id: string; url: string };
      const statusOf = async () => {
        const answer = await call(engine.url, 'GET', `/v1/deploy/${id}/status`, { key: engine.apiKey });
        return answer.body?.data as DeploymentStatus | undefined;
      };
      const logsOf = async (grep: string) => {
        const answer = await call(engine.url, 'GET', `/v1/deploy/${id}/logs?grep=${encodeURIComponent(grep)}`, {
          key: engine.apiKey,
        });
        return (answer.body?.data as { lines: Array<{ message: string }> }).lines;
      };
      const untilIdle = (what: string) =>
        waitFor(
          what,
          async () => {
            const status = await statusOf();
            return status?.status === 'deployed' && status.idle === true && status.instances?.length === 0
              ? status
              : undefined;
          },
          120_000,
        );
      const untilNoContainer = (what: string) =>
        waitFor(what, async () => ((await containersOf(home)).length === 0 ? true : undefined), 60_000);

      // it ran a container; with no request for a second it is idle, deployed, and no container or network of it is left
      const idle = await untilIdle('the deployment to go idle');
      expect(idle.stage).toBe('idle');
      await untilNoContainer('its container to be removed');
      expect(await networksOf(home)).toEqual([]);
      expect(await startsSince(home, deployedSince)).toEqual([id]);

      // its health URL answers healthy: idle is not down
      const health = await fetch(`${url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'healthy', idle: true });

      // a tools/call through the gateway wakes it: a container of the deployment starts and answers
      const asleepSince = await daemonTime();
      const answer = await toolsCall(`${url}/mcp`, 'evaluate', { expression: '6 * 7' });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).toContain('"result":42');
      expect(await startsSince(home, asleepSince)).toEqual([id]);
      expect(await logsOf('woken by a request')).toHaveLength(1);
      expect((await statusOf())?.status).toBe('deployed');

      // idle again, then the engine stops and starts: the deployment stays idle, with no container
      await untilIdle('the deployment to go idle again');
      await untilNoContainer('its second container to be removed');
      const stopped = await cli(['engine', 'stop']);
      expect(stopped.code, stopped.stderr).toBe(0);
      await waitFor('the engine to end', () => (isProcessAlive(engine.pid) ? undefined : true), 60_000);
      spawnDaemon(env, children);
      engine = await waitForDaemon(home);
      const restored = await untilIdle('the restored deployment to be idle');
      expect(restored.url).toBe(url);
      expect(await containersOf(home)).toEqual([]);
      expect(await networksOf(home)).toEqual([]);

      // and the next request still wakes it
      const restartedSince = await daemonTime();
      const again = await toolsCall(`${url}/mcp`, 'evaluate', { expression: '1 + 1' });
      expect(again.status, again.text).toBe(200);
      expect(again.text).toContain('"result":2');
      expect(await startsSince(home, restartedSince)).toEqual([id]);
      expect(await logsOf('woken by a request')).toHaveLength(2);

      // idle once more, then kill -9 of the engine: the next one finds no container of it, keeps it idle, and it wakes
      await untilIdle('the deployment to go idle a third time');
      await untilNoContainer('its third container to be removed');
      process.kill(engine.pid, 'SIGKILL');
      await waitFor('the engine to die', () => (isProcessAlive(engine.pid) ? undefined : true), 60_000);
      spawnDaemon(env, children);
      engine = await waitForDaemon(home);
      expect((await untilIdle('the deployment to be idle after kill -9')).url).toBe(url);
      expect(await containersOf(home)).toEqual([]);
      const killedSince = await daemonTime();
      const third = await toolsCall(`${url}/mcp`, 'evaluate', { expression: '2 ^ 10' });
      expect(third.status, third.text).toBe(200);
      expect(third.text).toContain('"result":1024');
      expect(await startsSince(home, killedSince)).toEqual([id]);
      expect(await logsOf('woken by a request')).toHaveLength(3);

      // a stop of the deployment while it is idle: stopped, nothing of it left to stop
      await untilIdle('the deployment to go idle a fourth time');
      await untilNoContainer('its fourth container to be removed');
      const stoppedDeployment = await cli(['stop', id]);
      expect(stoppedDeployment.code, stoppedDeployment.stderr).toBe(0);
      expect((await statusOf())?.status).toBe('stopped');
      const lastSince = await daemonTime();
      expect((await toolsCall(`${url}/mcp`, 'evaluate', { expression: '1' })).status).toBe(503);
      expect(await startsSince(home, lastSince)).toEqual([]);
      expect(await containersOf(home)).toEqual([]);
      expect(await networksOf(home)).toEqual([]);
      expect((await cli(['engine', 'stop'])).code).toBe(0);
    }, 600_000);
  },
);
