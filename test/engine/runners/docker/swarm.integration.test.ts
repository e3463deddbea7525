/**
 * Production deployments as Swarm services, against a real Docker daemon made a single-node Swarm
 * manager (test/support/docker.ts: DOCKER_HOST, or a dockerd of this file's own; skipped with the
 * reason outside CI when neither can be had). The engine runs as its background daemon with the
 * docker runner. One server whose module says which version runs (APP_VERSION) and throws at start
 * when told to (BREAK_AT_START), so every version is the same image and only the env changes.
 * Needs the built package (dist/): the image holds it.
 */
import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DockerClient } from '../../../../src/engine/runners/docker/engine-api.js';
import { SERVICE_LABELS } from '../../../../src/engine/runners/docker/service-spec.js';
import { SECRET_LABELS } from '../../../../src/engine/runners/docker/swarm-secrets.js';
import { isProcessAlive } from '../../../../src/engine/engine-lock.js';
import { call, killEngineOf, requireBuilt, ROOT, tempHome } from '../../../support/app.js';
import { spawnDaemon, waitForDaemon } from '../../../support/daemon.js';
import {
  dockerSkipReason,
  ensureNodeBaseImage,
  ensureSwarm,
  startTestDocker,
  type TestDocker,
} from '../../../support/docker.js';
import { tempDir, type TempDir } from '../../../support/temp.js';
import { waitFor } from '../../../support/wait.js';
import { runBin, type BinResult } from '../../../support/cli.js';
import { TASK_MODULE, TASK_SERVER, taskAcrossReplicas } from '../../../support/tasks.js';
import { taskVolumeName } from '../../../../src/engine/runners/docker/task-volume.js';
import { DockerApiError } from '../../../../src/engine/runners/docker/engine-api.js';
import { TASKS_DIR_ENV } from '../../../../src/runtime/constants.js';
import { TASKS_MOUNT } from '../../../../src/packaging/image.js';

const SERVER = `name: swarmver
version: 1.0.0
template: custom
description: Says which version of it runs.
# a Swarm service publishes its port on every address of its nodes: public on purpose here
auth: { type: none }
tools:
  - name: version
    description: Returns the version this deployment runs.
    annotations: { readOnlyHint: true, idempotentHint: true }
    inputSchema: { type: object, properties: {} }
    handler: { type: module, module: tools.mjs }
`;
const SWARM_SECRET = 'swarm-db-password-5e6f7a8b9c';
const MODULE = `if (process.env.BREAK_AT_START === 'yes') throw new Error('boom at start');
export function version() {
  return 'running ' + process.env.APP_VERSION;
}
`;

interface ServiceSummary {
  ID: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test reads the Engine API spec loosely
  Spec: Record<string, any>;
  UpdateStatus?: { State?: string };
}
interface TaskSummary {
  ID: string;
  DesiredState: string;
  Status: {
    State: string;
    ContainerStatus?: { ContainerID: string };
    PortStatus?: { Ports?: Array<{ TargetPort?: number; PublishedPort?: number }> };
  };
  Spec: { ContainerSpec: { Labels?: Record<string, string> } };
}
interface DeploymentView {
  deployment_id: string;
  status: string;
  reason?: string;
  url: string;
  runner?: string;
  instances?: Array<{ id: string; state: string }>;
}

/** The CLI of this checkout, run to its end. */
function runCli(args: string[], env: Record<string, string>): Promise<BinResult> {
  return runBin(join(ROOT, 'bin', 'mcpctl.cjs'), args, { env, cwd: ROOT });
}

/** One tools/call of `version`: the text of the answer, or why it failed. */
async function version(url: string): Promise<{ ok: true; text: string } | { ok: false; why: string }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'version', arguments: {} } }),
    });
    const text = await response.text();
    if (response.status !== 200 || !text.includes('running v') || text.includes('"isError":true'))
      return { ok: false, why: `${response.status} ${text.slice(0, 300)}` };
    return { ok: true, text: /running (v\d+)/.exec(text)![1]! };
  } catch (error) {
    return { ok: false, why: String(error) };
  }
}

/** Calls `version` one call after the other until stopped (bounded), counting what failed. */
function steadyClient(url: string) {
  const failures: string[] = [];
  const seen: string[] = [];
  let count = 0;
  let stopping = false;
  const done = (async () => {
    for (let i = 0; i < 20_000 && !stopping; i += 1) {
      const answer = await version(url);
      count += 1;
      if (answer.ok) {
        if (seen.at(-1) !== answer.text) seen.push(answer.text);
      } else failures.push(answer.why);
    }
  })();
  return {
    failures,
    seen,
    calls: () => count,
    async stop() {
      stopping = true;
      await done;
    },
  };
}

describe.skipIf(dockerSkipReason !== undefined)(
  `production deployments as Swarm services${dockerSkipReason === undefined ? '' : ` (skipped: ${dockerSkipReason})`}`,
  () => {
    let docker: TestDocker;
    let client: DockerClient;
    let baseImage: string;
    let swarm: { initialised: boolean; leave(): Promise<void> } | undefined;
    let folder: TempDir;
    let home: string;
    let homeDir: TempDir | undefined;
    /** the home of the engine of the task test, and its server's folder */
    let tasksHome: TempDir | undefined;
    let tasksServer: TempDir | undefined;
    const children: ChildProcess[] = [];
    let imagesBefore = new Set<string>();

    beforeAll(async () => {
      requireBuilt();
      docker = await startTestDocker();
      client = docker.client;
      imagesBefore = new Set(
        (await client.json<Array<{ Id: string }>>('GET', '/images/json')).map((image) => image.Id),
      );
      swarm = await ensureSwarm(client);
      baseImage = await ensureNodeBaseImage(client);
      folder = await tempDir('mcpctl-swarm-server-');
      await writeFile(join(folder.dir, 'server.yaml'), SERVER);
      await writeFile(join(folder.dir, 'tools.mjs'), MODULE);
      homeDir = await tempHome('mcpctl-swarm-');
      home = homeDir.dir;
    }, 180_000);

    afterAll(async () => {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (home !== undefined) killEngineOf(home);
      if (tasksHome !== undefined) killEngineOf(tasksHome.dir);
      if (client !== undefined) {
        const left = [...(await servicesOf().catch(() => []))];
        if (tasksHome !== undefined) left.push(...(await servicesOf(tasksHome.dir).catch(() => [])));
        for (const service of left) await client.json('DELETE', `/services/${service.ID}`).catch(() => undefined);
        await swarm?.leave();
        if (!docker.owned) {
          const added = (await client.json<Array<{ Id: string }>>('GET', '/images/json')).filter(
            (image) => !imagesBefore.has(image.Id),
          );
          for (const image of added)
            await client.json('DELETE', `/images/${image.Id}`, { query: { force: 1 } }).catch(() => undefined);
        }
      }
      await folder?.cleanup();
      await homeDir?.cleanup();
      await tasksServer?.cleanup();
      await tasksHome?.cleanup();
      await docker?.stop();
    }, 180_000);

    function servicesOf(engine = home): Promise<ServiceSummary[]> {
      return client.json<ServiceSummary[]>('GET', '/services', {
        query: { filters: JSON.stringify({ label: [`${SERVICE_LABELS.engine}=${engine}`] }) },
      });
    }
    async function runningTasks(service: string): Promise<TaskSummary[]> {
      const tasks = await client.json<TaskSummary[]>('GET', '/tasks', {
        query: { filters: JSON.stringify({ service: [service], 'desired-state': ['running'] }) },
      });
      return tasks.filter((task) => task.Status.State === 'running');
    }

    it('runs production as a service of 2 replicas, rolls a redeploy with no failed request, rolls a bad one back by itself, and finds the service after a restart', async () => {
      const env = {
        PATH: process.env.PATH!,
        MCPCTL_HOME: home,
        MCPCTL_RATE_LIMIT: '0',
        MCPCTL_RUNNER: 'docker',
        MCPCTL_DOCKER_BASE_IMAGE: baseImage,
        MCPCTL_SWARM_MONITOR_SECONDS: '3',
        ...docker.env,
      };
      // the rest of the Swarm settings from the home's settings file (the environment variables come first)
      await writeFile(
        join(home, 'engine-settings.json'),
        JSON.stringify({ swarm: { spread: 'region', health_interval_seconds: 1 } }),
      );
      const startDaemon = () => spawnDaemon(env, children);
      const engineState = () => waitForDaemon(home);
      const file = join(folder.dir, 'server.yaml');
      const deploy = (appVersion: string, breakAtStart = 'no') =>
        runCli(
          [
            '--json',
            'deploy',
            file,
            '--env',
            'production',
            '--env-var',
            'APP_VERSION',
            '--env-var',
            'BREAK_AT_START',
            '--env-var',
            'DB_PASSWORD',
          ],
          {
            ...env,
            APP_VERSION: appVersion,
            BREAK_AT_START: breakAtStart,
            DB_PASSWORD: SWARM_SECRET,
          },
        );
      const secretsOf = (service: string) =>
        client.json<Array<{ ID: string }>>('GET', '/secrets', {
          query: { filters: JSON.stringify({ label: [`${SECRET_LABELS.service}=${service}`] }) },
        });
      startDaemon();
      let state = await engineState();
      const written = JSON.parse(await readFile(join(home, 'engine.json'), 'utf8')) as {
        runner?: string;
        swarm?: string;
      };
      expect(written).toMatchObject({
        runner: 'docker',
        swarm: 'production as Swarm services (spread over node.labels.region)',
      });
      const statusOf = async (id: string) =>
        (await call(state.url, 'GET', `/v1/deploy/${id}/status`, { key: state.apiKey })).body.data as DeploymentView;
      const stable = `${state.url}/d/swarmver.production/mcp`;

      // --- a production deployment is a service of 2 replicas
      const first = await deploy('v1');
      expect(first.code, first.stderr).toBe(0);
      const v1 = JSON.parse(first.stdout) as DeploymentView;
      expect(v1).toMatchObject({ status: 'deployed', runner: 'swarm' });
      expect((v1 as DeploymentView & { notices: string[] }).notices.join(' ')).toContain('node.labels.region');
      const [service, ...others] = await servicesOf();
      expect(others).toEqual([]);
      const spec = service!.Spec;
      expect(spec.Labels).toMatchObject({
        [SERVICE_LABELS.server]: 'swarmver',
        [SERVICE_LABELS.environment]: 'production',
        [SERVICE_LABELS.deployment]: v1.deployment_id,
      });
      expect(spec.Mode.Replicated.Replicas).toBe(2);
      expect(spec.UpdateConfig).toMatchObject({ Parallelism: 1, Order: 'start-first', FailureAction: 'rollback' });
      expect(spec.RollbackConfig).toMatchObject({ Order: 'start-first' });
      expect(spec.EndpointSpec.Ports).toEqual([expect.objectContaining({ TargetPort: 8080, PublishMode: 'host' })]);
      expect(spec.TaskTemplate.Placement.Preferences).toEqual([{ Spread: { SpreadDescriptor: 'node.labels.region' } }]);
      const container = spec.TaskTemplate.ContainerSpec;
      // Privileges.NoNewPrivileges is sent too; Docker releases before it (20.10 here) drop it from the spec
      expect(container).toMatchObject({ User: '10001:10001', ReadOnly: true, CapabilityDrop: ['ALL'] });
      expect(container.Healthcheck.Test.join(' ')).toContain('/health');
      expect(spec.TaskTemplate.Resources.Limits).toMatchObject({
        MemoryBytes: 256 * 1024 * 1024,
        NanoCPUs: 500_000_000,
      });
      const tasks = await runningTasks(service!.ID);
      expect(tasks).toHaveLength(2);
      const inspected = await client.json<{
        Config: { User: string };
        HostConfig: { ReadonlyRootfs: boolean; CapDrop: string[]; Memory: number; NanoCpus: number };
      }>('GET', `/containers/${tasks[0]!.Status.ContainerStatus!.ContainerID}/json`);
      expect(inspected.Config.User).toBe('10001:10001');
      expect(inspected.HostConfig).toMatchObject({
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        Memory: 256 * 1024 * 1024,
        NanoCpus: 500_000_000,
      });
      // ATTACK: the values are a Docker secret the runtime reads, nowhere in the service's or the task's inspect
      expect(JSON.stringify(service)).not.toContain(SWARM_SECRET);
      expect(JSON.stringify(inspected)).not.toContain(SWARM_SECRET);
      expect(container.Secrets).toHaveLength(1);
      expect((await secretsOf(spec.Name)).map((s) => s.ID)).toEqual([container.Secrets[0].SecretID]);
      expect((await statusOf(v1.deployment_id)).instances?.filter((i) => i.state === 'healthy')).toHaveLength(2);
      expect(await version(stable)).toEqual({ ok: true, text: 'v1' });
      expect(await version(`${v1.url}/mcp`)).toEqual({ ok: true, text: 'v1' });

      // --- a redeploy rolls the service while a steady client calls through the stable URL
      let steady = steadyClient(stable);
      const second = await deploy('v2');
      expect(second.code, `${second.stderr}\nsteady client: ${steady.failures.join('\n')}`).toBe(0);
      const v2 = JSON.parse(second.stdout) as DeploymentView;
      expect(v2).toMatchObject({ status: 'deployed', runner: 'swarm' });
      // during the rollout both versions answer; once v2 is deployed, only v2
      expect(steady.seen[0]).toBe('v1');
      steady.seen.length = 0;
      const callsSoFar = steady.calls();
      await waitFor('more calls', () => (steady.calls() >= callsSoFar + 20 ? true : undefined), 30_000);
      await steady.stop();
      expect(steady.failures).toEqual([]);
      expect(steady.seen).toEqual(['v2']);
      expect((await statusOf(v1.deployment_id)).status).toBe('stopped');
      const [rolled, ...more] = await servicesOf();
      expect(more).toEqual([]);
      expect(rolled!.ID).toBe(service!.ID);
      expect(rolled!.UpdateStatus?.State).toBe('completed');
      const v2Tasks = await runningTasks(service!.ID);
      expect(v2Tasks.map((task) => task.Spec.ContainerSpec.Labels?.[SERVICE_LABELS.task])).toEqual([
        v2.deployment_id,
        v2.deployment_id,
      ]);

      // --- a version that cannot start: Swarm rolls it back by itself, v2 stays live
      steady = steadyClient(stable);
      const bad = await deploy('v3', 'yes');
      expect(bad.code).not.toBe(0);
      const failed = (await call(state.url, 'GET', '/v1/deployments', { key: state.apiKey })).body.data as {
        deployments: DeploymentView[];
      };
      const v3 = failed.deployments.find((d) => d.status === 'failed')!;
      expect(v3.reason).toContain('Swarm rolled the update back');
      expect(v3.reason).toContain('boom at start');
      await steady.stop();
      expect(steady.failures).toEqual([]);
      expect(steady.seen).toEqual(['v2']);
      expect((await statusOf(v2.deployment_id)).status).toBe('deployed');
      expect((await servicesOf())[0]!.Spec.Labels[SERVICE_LABELS.deployment]).toBe(v2.deployment_id);
      expect(await version(stable)).toEqual({ ok: true, text: 'v2' });

      // --- rollback: the same service, updated to v1's spec
      const back = await runCli(['--json', 'rollback', v2.deployment_id], env);
      expect(back.code, back.stderr).toBe(0);
      const v1again = JSON.parse(back.stdout) as DeploymentView;
      expect(v1again).toMatchObject({ status: 'deployed', runner: 'swarm' });
      expect(await version(stable)).toEqual({ ok: true, text: 'v1' });
      expect((await servicesOf()).map((s) => s.ID)).toEqual([service!.ID]);

      // --- kill -9 of the engine: the restarted engine takes the service over (no new one, no rollout)
      const tasksBefore = (await runningTasks(service!.ID)).map((task) => task.ID).sort();
      process.kill(state.pid, 'SIGKILL');
      await waitFor('the engine to die', () => (isProcessAlive(state.pid) ? undefined : true));
      startDaemon();
      state = await engineState();
      const restored = await waitFor(
        'the deployment to be restored',
        async () => {
          const view = await statusOf(v1again.deployment_id).catch(() => undefined);
          return view?.status === 'deployed' && view.instances?.filter((i) => i.state === 'healthy').length === 2
            ? view
            : undefined;
        },
        60_000,
      );
      expect(restored.url).toBe(v1again.url);
      // the status on disk says deployed at once; the stable URL answers once the engine took the service over
      const answer = await waitFor(
        'the restored deployment to answer',
        async () => {
          const result = await version(stable);
          return result.ok ? result : undefined;
        },
        60_000,
      );
      expect(answer.text).toBe('v1');
      expect((await servicesOf()).map((s) => s.ID)).toEqual([service!.ID]);
      expect((await runningTasks(service!.ID)).map((task) => task.ID).sort()).toEqual(tasksBefore);
      const logs = await runCli(['logs', v1again.deployment_id], env);
      expect(logs.stdout).toContain('listening');

      // --- staging stays a plain container of the docker runner
      const staged = await runCli(
        ['--json', 'deploy', file, '--env', 'staging', '--env-var', 'APP_VERSION', '--env-var', 'BREAK_AT_START'],
        {
          ...env,
          APP_VERSION: 'v9',
          BREAK_AT_START: 'no',
        },
      );
      expect(staged.code, staged.stderr).toBe(0);
      const staging = JSON.parse(staged.stdout) as DeploymentView;
      expect(staging).toMatchObject({ status: 'deployed', runner: 'docker' });
      expect(await version(`${staging.url}/mcp`)).toEqual({ ok: true, text: 'v9' });
      expect(await servicesOf()).toHaveLength(1);

      // --- engine stop removes the service and its tasks, and the staging container
      expect((await runCli(['engine', 'stop'], env)).code).toBe(0);
      expect(await servicesOf()).toEqual([]);
      expect(await secretsOf(spec.Name)).toEqual([]);
      const filters = JSON.stringify({ label: [`com.docker.swarm.service.id=${service!.ID}`] });
      const engineLabel = JSON.stringify({ label: [`mcpctl/engine=${home}`] });
      await waitFor(
        'the staging container to be gone',
        async () =>
          (await client.json<unknown[]>('GET', '/containers/json', { query: { all: 1, filters: engineLabel } }))
            .length === 0
            ? true
            : undefined,
        60_000,
      );
      await waitFor(
        'the tasks to be gone',
        async () =>
          (await client.json<unknown[]>('GET', '/containers/json', { query: { all: 1, filters } })).length === 0
            ? true
            : undefined,
        60_000,
      );
    }, 900_000);

    it('shares the task state of a service with task tools between its 2 replicas through a volume of the deployment, removed with it', async () => {
      tasksHome = await tempHome('mcpctl-swarm-tasks-');
      tasksServer = await tempDir('mcpctl-swarm-tasks-server-');
      await writeFile(join(tasksServer.dir, 'server.yaml'), TASK_SERVER);
      await writeFile(join(tasksServer.dir, 'tasks.mjs'), TASK_MODULE);
      const env = {
        PATH: process.env.PATH!,
        MCPCTL_HOME: tasksHome.dir,
        MCPCTL_RATE_LIMIT: '0',
        MCPCTL_RUNNER: 'docker',
        MCPCTL_DOCKER_BASE_IMAGE: baseImage,
        MCPCTL_SWARM_MONITOR_SECONDS: '3',
        MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS: '1',
        ...docker.env,
      };
      spawnDaemon(env, children);
      await waitForDaemon(tasksHome.dir);
      const deployed = await runCli(
        ['--json', 'deploy', join(tasksServer.dir, 'server.yaml'), '--env', 'production'],
        env,
      );
      expect(deployed.code, deployed.stderr).toBe(0);
      const view = JSON.parse(deployed.stdout) as DeploymentView;
      expect(view).toMatchObject({ status: 'deployed', runner: 'swarm' });
      const [service] = await servicesOf(tasksHome.dir);
      const volume = taskVolumeName(tasksHome.dir, view.deployment_id);
      const container = service!.Spec.TaskTemplate.ContainerSpec;
      expect(container.Mounts).toContainEqual(expect.objectContaining({ Type: 'volume', Source: volume }));
      expect(container.Env).toContain(`${TASKS_DIR_ENV}=${TASKS_MOUNT}/${volume}`);
      const tasks = await waitFor(
        '2 running replicas',
        async () => {
          const running = await runningTasks(service!.ID);
          return running.length === 2 ? running : undefined;
        },
        60_000,
      );
      // each replica's own published port: the one that did not create the task answers for it
      const [a, b] = tasks.map((task) => {
        const port = task.Status.PortStatus?.Ports?.find((p) => p.TargetPort === 8080)?.PublishedPort;
        return `http://127.0.0.1:${port}/mcp`;
      }) as [string, string];
      const fromB = await taskAcrossReplicas(a, b);
      expect(fromB.whileRunning.result).toMatchObject({ taskId: fromB.taskId, status: 'working' });
      expect(fromB.ended).toMatchObject({ status: 'completed' });
      const fromA = await taskAcrossReplicas(b, a);
      expect(fromA.ended).toMatchObject({ status: 'completed' });
      // each task ran on the replica that created it (its hostname): both replicas took part
      expect(fromA.text).toMatch(/^slept 1500 ms on /);
      expect(fromA.text).not.toBe(fromB.text);

      const cli = (args: string[]) => runCli(args, env);
      expect((await cli(['stop', view.deployment_id])).code).toBe(0);
      const removed = await cli(['rm', '--yes', view.deployment_id]);
      expect(removed.code, removed.stderr).toBe(0);
      const gone = await client.json('GET', `/volumes/${volume}`).then(
        () => 'still there',
        (error: unknown) => (error instanceof DockerApiError ? error.status : String(error)),
      );
      expect(gone).toBe(404);
      expect(await servicesOf(tasksHome.dir)).toEqual([]);
      expect((await cli(['engine', 'stop'])).code).toBe(0);
    }, 300_000);
  },
);
