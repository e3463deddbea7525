/**
 * The Docker runner and the image builder against a real Docker daemon (test/support/docker.ts:
 * DOCKER_HOST, or a dockerd of this file's own; skipped with the reason outside CI when neither
 * can be had). The base image is this machine's node, imported (no registry is reachable).
 * Needs the built package (dist/): the image holds it.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBuildRequest } from '../../../../src/api/build-request.js';
import { loadDefinition } from '../../../../src/definition/load.js';
import type { DockerClient } from '../../../../src/engine/runners/docker/engine-api.js';
import { createImageBuilder } from '../../../../src/engine/runners/docker/images.js';
import { CONTAINER_LABELS, createDockerRunner } from '../../../../src/engine/runners/docker/docker-runner.js';
import { isProcessAlive } from '../../../../src/engine/engine-lock.js';
import { writeBundle } from '../../../../src/runtime/host/bundle.js';
import { taskVolumeName, VOLUME_LABELS } from '../../../../src/engine/runners/docker/task-volume.js';
import { DockerApiError } from '../../../../src/engine/runners/docker/engine-api.js';
import { BUNDLE_DIGEST_ANNOTATION, CONTAINER_USER, imageName, LABELS } from '../../../../src/packaging/image.js';
import { call, killEngineOf, requireBuilt, ROOT, tempHome } from '../../../support/app.js';
import { spawnDaemon, waitForDaemon } from '../../../support/daemon.js';
import {
  dockerSkipReason,
  ensureNodeBaseImage,
  removeContainers,
  startTestDocker,
  type TestDocker,
} from '../../../support/docker.js';
import { tempDir, type TempDir } from '../../../support/temp.js';
import { waitFor } from '../../../support/wait.js';
import { runBin, type BinResult } from '../../../support/cli.js';
import { TASK_MODULE, TASK_SERVER, taskAcrossReplicas } from '../../../support/tasks.js';

const CALCULATOR = join(ROOT, 'examples', 'calculator', 'server.yaml');

interface ContainerSummary {
  Id: string;
  State: string;
  Labels: Record<string, string>;
  Ports?: Array<{ PrivatePort: number; PublicPort?: number }>;
}

/** The CLI of this checkout, run to its end. */
function runCli(args: string[], env: Record<string, string>): Promise<BinResult> {
  return runBin(join(ROOT, 'bin', 'mcpctl.cjs'), args, { env, cwd: ROOT });
}

/** One tools/call (to an instance or through the gateway); the answer's text, whether it came as JSON or as an event stream. */
async function callDirect(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return response.text();
}

describe.skipIf(dockerSkipReason !== undefined)(
  `the Docker runner${dockerSkipReason === undefined ? '' : ` (skipped: ${dockerSkipReason})`}`,
  () => {
    let docker: TestDocker;
    let client: DockerClient;
    let baseImage: string;
    const temps: TempDir[] = [];
    const homes: string[] = [];
    const children: ChildProcess[] = [];
    const images = new Set<string>();
    let imagesBefore = new Set<string>();

    beforeAll(async () => {
      requireBuilt();
      docker = await startTestDocker();
      client = docker.client;
      // on a daemon this file did not start, every image it adds is removed at the end
      imagesBefore = new Set(
        (await client.json<Array<{ Id: string }>>('GET', '/images/json')).map((image) => image.Id),
      );
      baseImage = await ensureNodeBaseImage(client);
    }, 120_000);

    afterAll(async () => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const home of homes) {
        killEngineOf(home);
        await removeContainers(client, `${CONTAINER_LABELS.engine}=${home}`).catch(() => undefined);
      }
      if (client !== undefined) {
        for (const image of images)
          await client
            .json('DELETE', `/images/${encodeURIComponent(image)}`, { query: { force: 1 } })
            .catch(() => undefined);
        if (!docker.owned) {
          const added = (await client.json<Array<{ Id: string }>>('GET', '/images/json')).filter(
            (image) => !imagesBefore.has(image.Id),
          );
          for (const image of added)
            await client.json('DELETE', `/images/${image.Id}`, { query: { force: 1 } }).catch(() => undefined);
        }
      }
      for (const temp of temps) await temp.cleanup();
      await docker?.stop();
    }, 120_000);

    async function calculatorBundle(): Promise<{ dir: string; digest: string }> {
      const temp = await tempDir('mcpctl-docker-bundle-');
      temps.push(temp);
      const request = await toBuildRequest(await loadDefinition(CALCULATOR));
      return writeBundle(request, temp.dir);
    }

    async function containersOf(home: string): Promise<ContainerSummary[]> {
      return client.json<ContainerSummary[]>('GET', '/containers/json', {
        query: { all: 1, filters: JSON.stringify({ label: [`${CONTAINER_LABELS.engine}=${home}`] }) },
      });
    }

    it('builds mcpctl-server:<digest> once, and a hardened container of it serves /health and tools', async () => {
      const bundle = await calculatorBundle();
      const builder = createImageBuilder({ docker: client, baseImage });
      const built = await builder.ensure(bundle.dir);
      images.add(built.image);
      expect(built.image).toBe(imageName(bundle.digest));
      expect(built.built).toBe(true);
      expect((await builder.ensure(bundle.dir)).built).toBe(false);
      const inspected = await client.json<{
        Config: { User: string; Labels: Record<string, string>; ExposedPorts: Record<string, unknown> };
      }>('GET', `/images/${encodeURIComponent(built.image)}/json`);
      expect(inspected.Config.User).toBe(`${CONTAINER_USER.uid}:${CONTAINER_USER.gid}`);
      expect(inspected.Config.Labels[LABELS.server]).toBe('calculator');
      expect(inspected.Config.Labels[BUNDLE_DIGEST_ANNOTATION]).toBe(bundle.digest);
      expect(Object.keys(inspected.Config.ExposedPorts)).toEqual(['8080/tcp']);

      const runner = createDockerRunner({ docker: client, images: builder });
      const engine = `/test/engine-${process.pid}`;
      homes.push(engine);
      const lines: string[] = [];
      const instance = await runner.start({
        labels: { engine, deployment: 'deploy_test', instance: 'i1' },
        bundleDir: bundle.dir,
        env: { GREETING: 'hello' },
        logLevel: 'info',
        limits: { startTimeoutMs: 60_000 },
        resources: { memoryMb: 300, cpus: 0.25 },
        onLog: (line) => lines.push(line),
      });
      expect(instance.host).toBe('127.0.0.1');
      expect(await instance.health(5_000)).toBe(true);
      const answer = await callDirect(`http://127.0.0.1:${instance.port}/mcp`, 'evaluate', {
        expression: '(2 + 3) * sqrt(16)',
      });
      expect(answer).toContain('"result":20');

      const [found] = await containersOf(engine);
      const details = await client.json<{
        Config: { User: string };
        HostConfig: {
          ReadonlyRootfs: boolean;
          CapDrop: string[];
          SecurityOpt: string[];
          Memory: number;
          NanoCpus: number;
          Tmpfs: Record<string, string>;
        };
        NetworkSettings: { Ports: Record<string, Array<{ HostIp: string }>> };
      }>('GET', `/containers/${found!.Id}/json`);
      expect(details.Config.User).toBe('10001:10001');
      expect(details.HostConfig.ReadonlyRootfs).toBe(true);
      expect(details.HostConfig.CapDrop).toEqual(['ALL']);
      expect(details.HostConfig.SecurityOpt).toContain('no-new-privileges');
      expect(details.HostConfig.Memory).toBe(300 * 1024 * 1024);
      expect(details.HostConfig.NanoCpus).toBe(250_000_000);
      expect(Object.keys(details.HostConfig.Tmpfs)).toEqual(['/tmp']);
      expect(details.NetworkSettings.Ports['8080/tcp']?.map((binding) => binding.HostIp)).toEqual(['127.0.0.1']);
      expect(found!.Labels[CONTAINER_LABELS.deployment]).toBe('deploy_test');

      // found again by its labels, as after an engine restart
      const leftovers = await runner.find(engine);
      expect(leftovers.map((item) => item.labels)).toEqual([{ engine, deployment: 'deploy_test', instance: 'i1' }]);

      await instance.stop(10_000);
      expect(await instance.exited).toMatchObject({ code: 0 });
      expect(await containersOf(engine)).toEqual([]);
      expect(lines.some((line) => line.includes('"level"'))).toBe(true);
    }, 300_000);

    it('mcpctl export image builds the same image, and a push to a registry that cannot be reached fails plainly', async () => {
      const env = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...docker.env };
      const bundle = await calculatorBundle();
      const built = await runCli(['--json', 'export', 'image', CALCULATOR, '--base-image', baseImage], env);
      expect(built.code, built.stderr).toBe(0);
      expect(JSON.parse(built.stdout)).toMatchObject({
        image: imageName(bundle.digest),
        digest: bundle.digest,
        base_image: baseImage,
      });

      // no registry is reachable here: the push can only be shown to fail with the daemon's reason
      const pushed = await runCli(
        ['export', 'image', CALCULATOR, '--base-image', baseImage, '--registry', '127.0.0.1:9/team'],
        env,
      );
      expect(pushed.code).not.toBe(0);
      expect(pushed.stderr).toContain('127.0.0.1:9');
      expect(pushed.stderr).not.toMatch(/\n\s+at /);
      images.add(imageName(bundle.digest, '127.0.0.1:9/team'));
    }, 300_000);

    it('runs a production deployment as 2 containers, restarts a killed one, and after kill -9 of the engine leaves no orphan', async () => {
      const temp = await tempHome('mcpctl-docker-');
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
      const startDaemon = () => spawnDaemon(env, children);
      const engineState = () => waitForDaemon(home);
      const cli = (args: string[]) => runCli(args, env);
      startDaemon();
      const state = await engineState();
      expect(state.runner).toBe('docker');
      const status = await cli(['--json', 'engine', 'status']);
      expect(JSON.parse(status.stdout).runner, status.stderr).toBe('docker');

      const deployed = await cli(['--json', 'deploy', CALCULATOR, '--env', 'production']);
      expect(deployed.code, deployed.stderr).toBe(0);
      const deployment = JSON.parse(deployed.stdout) as {
        deployment_id: string;
        url: string;
        runner?: string;
        instances: unknown[];
      };
      expect(deployment.runner).toBe('docker');
      const healthyOf = async () => {
        const answer = await call(state.url, 'GET', `/v1/deploy/${deployment.deployment_id}/status`, {
          key: state.apiKey,
        });
        return answer.body.data as { status: string; url: string; instances: Array<{ state: string }> };
      };
      await waitFor(
        '2 healthy instances',
        async () =>
          (await healthyOf()).instances.filter((i) => i.state === 'healthy').length === 2 ? true : undefined,
        120_000,
      );
      const first = (await containersOf(home)).filter((c) => c.State === 'running');
      expect(first).toHaveLength(2);
      expect(new Set(first.map((c) => c.Labels[CONTAINER_LABELS.deployment]))).toEqual(
        new Set([deployment.deployment_id]),
      );

      expect(await callDirect(`${deployment.url}/mcp`, 'evaluate', { expression: '6 * 7' })).toContain('"result":42');

      // a container killed behind the engine's back is replaced
      await client.json('POST', `/containers/${first[0]!.Id}/kill`);
      const replaced = await waitFor(
        'the killed container to be replaced',
        async () => {
          const now = (await containersOf(home)).filter((c) => c.State === 'running');
          const healthy = (await healthyOf()).instances.filter((i) => i.state === 'healthy').length;
          return now.length === 2 && !now.some((c) => c.Id === first[0]!.Id) && healthy === 2 ? now : undefined;
        },
        120_000,
      );
      expect(replaced.some((c) => c.Id === first[1]!.Id)).toBe(true);

      // kill -9 of the engine: its containers outlive it; the next engine stops them and starts new ones
      process.kill(state.pid, 'SIGKILL');
      await waitFor('the engine to die', () => (isProcessAlive(state.pid) ? undefined : true));
      startDaemon();
      const again = await engineState();
      expect(again.url).toBe(state.url);
      const restored = await waitFor(
        'the deployment to be restored with 2 new containers',
        async () => {
          const answer = await call(again.url, 'GET', `/v1/deploy/${deployment.deployment_id}/status`, {
            key: again.apiKey,
          });
          const data = answer.body?.data as
            { status: string; url: string; instances?: Array<{ state: string }> } | undefined;
          const all = await containersOf(home);
          const healthy = data?.instances?.filter((i) => i.state === 'healthy').length ?? 0;
          return data?.status === 'deployed' &&
            healthy === 2 &&
            all.length === 2 &&
            !all.some((c) => replaced.some((old) => old.Id === c.Id))
            ? data
            : undefined;
        },
        120_000,
      );
      expect(restored.url).toBe(deployment.url);
      expect(await callDirect(`${deployment.url}/mcp`, 'evaluate', { expression: '1 + 1' })).toContain('"result":2');

      // a clean stop stops its containers
      expect((await cli(['engine', 'stop'])).code).toBe(0);
      await waitFor(
        'no containers left',
        async () => ((await containersOf(home)).length === 0 ? true : undefined),
        60_000,
      );
    }, 600_000);

    it("shares a deployment's task state between its 2 containers through its volume, removed with the deployment", async () => {
      const temp = await tempHome('mcpctl-docker-tasks-');
      temps.push(temp);
      const home = temp.dir;
      homes.push(home);
      const server = await tempDir('mcpctl-docker-tasks-server-');
      temps.push(server);
      await writeFile(join(server.dir, 'server.yaml'), TASK_SERVER);
      await writeFile(join(server.dir, 'tasks.mjs'), TASK_MODULE);
      const env = {
        PATH: process.env.PATH!,
        MCPCTL_HOME: home,
        MCPCTL_RATE_LIMIT: '0',
        MCPCTL_RUNNER: 'docker',
        MCPCTL_DOCKER_BASE_IMAGE: baseImage,
        ...docker.env,
      };
      const cli = (args: string[]) => runCli(args, env);
      spawnDaemon(env, children);
      await waitForDaemon(home);
      const deployed = await cli(['--json', 'deploy', join(server.dir, 'server.yaml'), '--env', 'production']);
      expect(deployed.code, deployed.stderr).toBe(0);
      const { deployment_id: id } = JSON.parse(deployed.stdout) as { deployment_id: string };
      const running = await waitFor(
        '2 running containers',
        async () => {
          const now = (await containersOf(home)).filter((c) => c.State === 'running');
          return now.length === 2 ? now : undefined;
        },
        120_000,
      );
      // each container's own address: the one that did not create the task answers for it
      const [a, b] = running.map((c) => {
        const port = c.Ports?.find((p) => p.PrivatePort === 8080 && p.PublicPort !== undefined)?.PublicPort;
        return `http://127.0.0.1:${port}/mcp`;
      }) as [string, string];
      const fromB = await taskAcrossReplicas(a, b);
      expect(fromB.whileRunning.result).toMatchObject({ taskId: fromB.taskId, status: 'working' });
      expect(fromB.ended).toMatchObject({ status: 'completed' });
      const fromA = await taskAcrossReplicas(b, a);
      expect(fromA.ended).toMatchObject({ status: 'completed' });
      // each task ran where it was created: two hosts (container ids), so both containers took part
      expect(fromB.text).toMatch(/^slept 1500 ms on /);
      expect(fromA.text).toMatch(/^slept 1500 ms on /);
      expect(fromA.text).not.toBe(fromB.text);

      const volume = taskVolumeName(home, id);
      const made = await client.json<{ Labels: Record<string, string> }>('GET', `/volumes/${volume}`);
      expect(made.Labels).toMatchObject({ [VOLUME_LABELS.engine]: home, [VOLUME_LABELS.deployment]: id });
      expect((await cli(['stop', id])).code).toBe(0);
      const removed = await cli(['rm', '--yes', id]);
      expect(removed.code, removed.stderr).toBe(0);
      const gone = await client.json('GET', `/volumes/${volume}`).then(
        () => 'still there',
        (error: unknown) => (error instanceof DockerApiError ? error.status : String(error)),
      );
      expect(gone).toBe(404);
      expect((await cli(['engine', 'stop'])).code).toBe(0);
    }, 300_000);
  },
);
