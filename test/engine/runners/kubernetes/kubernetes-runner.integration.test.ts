/**
 * The kubernetes runner against a real cluster: the background engine with MCPCTL_RUNNER=kubernetes
 * deploys the calculator example, the rollout reaches `deployed`, a tools/call through the gateway
 * works, the pods' logs are read, a kill -9 of the engine and a new start takes the workload over
 * by its labels (same URL), and a stop removes every object the runner applied. A server with task
 * tools keeps its tasks on a claim: with MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS (a ReadWriteMany
 * class) a task created on one pod is read from the other; without it, a development deployment's
 * ReadWriteOnce claim of the default class keeps a task across the replacement of its pod.
 *
 * Runs when KUBECONFIG is set and a Docker host builds the image (DOCKER_HOST, or
 * /var/run/docker.sock); the cluster gets the image from MCPCTL_KUBERNETES_REGISTRY (the engine
 * pushes it there), or, for a kind cluster named by MCPCTL_TEST_KIND_CLUSTER, from `kind load`
 * (the test builds it first with `mcpctl export image`). Skipped otherwise, with the reason in the
 * test's name. Needs the built package (dist/): the image holds it.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { connectCluster, labelSelector, type Cluster } from '../../../../src/engine/runners/kubernetes/cluster.js';
import { engineLabel, ENGINE_LABELS } from '../../../../src/engine/runners/kubernetes/plan.js';
import { createPortForwards } from '../../../../src/engine/runners/kubernetes/port-forward.js';
import { CONTAINER_PORT } from '../../../../src/packaging/image.js';
import { call, killEngineOf, requireBuilt, ROOT, tempHome } from '../../../support/app.js';
import { spawnDaemon, waitForDaemon } from '../../../support/daemon.js';
import type { TempDir } from '../../../support/temp.js';
import { taskRpc } from '../../../support/tasks.js';
import { waitFor } from '../../../support/wait.js';
import { runBin, type BinResult } from '../../../support/cli.js';

const run = promisify(execFile);
const CALCULATOR = join(ROOT, 'examples', 'calculator', 'server.yaml');
const TASK_TOOLS = join(ROOT, 'test', 'fixtures', 'runtime', 'tasks', 'server.yaml');
const env = process.env;
const dockerHost = (env.DOCKER_HOST ?? '') !== '' || existsSync('/var/run/docker.sock');
const skipReason =
  (env.KUBECONFIG ?? '') === ''
    ? 'KUBECONFIG is not set'
    : !dockerHost
      ? 'no Docker host to build the image (DOCKER_HOST)'
      : (env.MCPCTL_KUBERNETES_REGISTRY ?? '') === '' && (env.MCPCTL_TEST_KIND_CLUSTER ?? '') === ''
        ? 'neither MCPCTL_KUBERNETES_REGISTRY nor MCPCTL_TEST_KIND_CLUSTER says how the cluster gets the image'
        : undefined;
// said on stderr too: a reporter may show a skipped file without its tests' names
if (skipReason !== undefined) console.warn(`kubernetes runner test skipped: ${skipReason}`);
const title = (text: string) => (skipReason === undefined ? text : `${text} (skipped: ${skipReason})`);

/** The CLI of this checkout, run to its end. */
function runCli(args: string[], cliEnv: Record<string, string>): Promise<BinResult> {
  return runBin(join(ROOT, 'bin', 'mcpctl.cjs'), args, { env: cliEnv, cwd: ROOT });
}

/** One tools/call through the gateway; the answer's text, as JSON or as an event stream. */
async function callTool(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return response.text();
}

describe('the kubernetes runner on a real cluster', () => {
  const homes: string[] = [];
  const temps: TempDir[] = [];
  const children: ChildProcess[] = [];
  let cluster: Cluster | undefined;

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const home of homes) {
      killEngineOf(home);
      await cluster?.remove(labelSelector({ [ENGINE_LABELS.engine]: engineLabel(home) })).catch(() => undefined);
    }
    for (const temp of temps) await temp.cleanup();
  }, 120_000);

  /** kind: the image the engine would build, built first and loaded into the cluster's nodes. */
  async function loadImage(cli: (args: string[]) => Promise<BinResult>, definition: string): Promise<void> {
    if ((env.MCPCTL_KUBERNETES_REGISTRY ?? '') !== '') return;
    const built = await cli(['--json', 'export', 'image', definition]);
    expect(built.code, built.stderr).toBe(0);
    const image = (JSON.parse(built.stdout) as { image: string }).image;
    await run('kind', ['load', 'docker-image', image, '--name', env.MCPCTL_TEST_KIND_CLUSTER!], { timeout: 300_000 });
  }

  it.skipIf(skipReason !== undefined)(
    title('deploys, serves tools/call, reads pod logs, survives kill -9 of the engine, and a stop removes its objects'),
    { timeout: 600_000 },
    async () => {
      requireBuilt();
      const temp = await tempHome('mcpctl-k8s-');
      temps.push(temp);
      const home = temp.dir;
      homes.push(home);
      const cliEnv: Record<string, string> = {
        ...(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>),
        MCPCTL_HOME: home,
        MCPCTL_RATE_LIMIT: '0',
        MCPCTL_RUNNER: 'kubernetes',
      };
      cluster = await connectCluster({
        ...(env.MCPCTL_KUBERNETES_NAMESPACE === undefined ? {} : { namespace: env.MCPCTL_KUBERNETES_NAMESPACE }),
      });
      const cli = (args: string[]) => runCli(args, cliEnv);
      await loadImage(cli, CALCULATOR);

      const startDaemon = () => spawnDaemon(cliEnv, children);
      const engineState = () => waitForDaemon(home);
      startDaemon();
      let state = await engineState();
      expect(state.runner).toBe('kubernetes');

      const deployed = await cli(['--json', 'deploy', CALCULATOR, '--env', 'production', '--timeout', '400']);
      expect(deployed.code, deployed.stderr).toBe(0);
      const deployment = JSON.parse(deployed.stdout) as {
        deployment_id: string;
        url: string;
        status: string;
        runner?: string;
      };
      expect(deployment).toMatchObject({ status: 'deployed', runner: 'kubernetes' });

      const selector = labelSelector({ [ENGINE_LABELS.engine]: engineLabel(home) });
      const kinds = (await cluster.list(selector)).map((o) => o.kind).sort();
      expect(kinds).toEqual(['Deployment', 'PodDisruptionBudget', 'Service']);
      expect((await cluster.pods(selector)).filter((p) => p.ready)).toHaveLength(2);

      expect(await callTool(`${deployment.url}/mcp`, 'evaluate', { expression: '6 * 7' })).toContain('"result":42');

      // the pods' own lines, each with the pod it came from
      const pods = new Set((await cluster.pods(selector)).map((p) => p.name));
      const logs = await waitFor(
        'log lines from the pods',
        async () => {
          const answer = await call(state.url, 'GET', `/v1/deploy/${deployment.deployment_id}/logs?limit=500`, {
            key: state.apiKey,
          });
          const lines = (answer.body.data as { lines: Array<{ instance?: string; message: string }> }).lines;
          return lines.some((line) => line.instance !== undefined && pods.has(line.instance)) ? lines : undefined;
        },
        60_000,
      );
      expect(logs.length).toBeGreaterThan(0);

      // kill -9 of the engine: the workload keeps running; a new engine takes it over at the same URL
      killEngineOf(home);
      startDaemon();
      state = await engineState();
      const restored = await waitFor(
        'the deployment restored',
        async () => {
          const answer = await call(state.url, 'GET', `/v1/deploy/${deployment.deployment_id}/status`, {
            key: state.apiKey,
          });
          const data = answer.body.data as { status: string; url: string; instances: Array<{ state: string }> };
          return data.status === 'deployed' && data.instances.some((i) => i.state === 'healthy') ? data : undefined;
        },
        180_000,
      );
      expect(restored.url).toBe(deployment.url);
      expect(await callTool(`${deployment.url}/mcp`, 'evaluate', { expression: '1 + 1' })).toContain('"result":2');
      expect((await cluster.list(selector)).filter((o) => o.kind === 'Deployment')).toHaveLength(1);

      const stopped = await cli(['--json', 'stop', deployment.deployment_id]);
      expect(stopped.code, stopped.stderr).toBe(0);
      await waitFor(
        'every object removed',
        async () => ((await cluster!.list(selector)).length === 0 ? true : undefined),
        120_000,
      );
      await waitFor(
        'every pod gone',
        async () => ((await cluster!.pods(selector)).length === 0 ? true : undefined),
        180_000,
      );
      const engineStop = await cli(['engine', 'stop']);
      expect(engineStop.code, engineStop.stderr).toBe(0);
    },
  );

  it.skipIf(skipReason !== undefined)(
    title('task tools: a task created on one pod is read on another (the claim of the tasks), and goes with a stop'),
    { timeout: 600_000 },
    async () => {
      requireBuilt();
      const temp = await tempHome('mcpctl-k8s-tasks-');
      temps.push(temp);
      const home = temp.dir;
      homes.push(home);
      const storageClass = env.MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS ?? '';
      const cliEnv: Record<string, string> = {
        ...(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>),
        MCPCTL_HOME: home,
        MCPCTL_RATE_LIMIT: '0',
        MCPCTL_RUNNER: 'kubernetes',
      };
      cluster = await connectCluster({
        ...(env.MCPCTL_KUBERNETES_NAMESPACE === undefined ? {} : { namespace: env.MCPCTL_KUBERNETES_NAMESPACE }),
      });
      const kube = cluster;
      const cli = (args: string[]) => runCli(args, cliEnv);
      await loadImage(cli, TASK_TOOLS);
      spawnDaemon(cliEnv, children);
      await waitForDaemon(home);

      // with a ReadWriteMany class: two pods share one claim; without: one pod on a ReadWriteOnce claim
      const environment = storageClass === '' ? 'development' : 'production';
      const deployed = await cli(['--json', 'deploy', TASK_TOOLS, '--env', environment, '--timeout', '400']);
      expect(deployed.code, deployed.stderr).toBe(0);
      const deployment = JSON.parse(deployed.stdout) as { deployment_id: string; status: string };
      expect(deployment.status).toBe('deployed');

      const selector = labelSelector({ [ENGINE_LABELS.engine]: engineLabel(home) });
      const claims = (await kube.list(selector)).filter((o) => o.kind === 'PersistentVolumeClaim');
      expect(claims).toHaveLength(1);
      const claimSpec = claims[0]!.spec as { accessModes: string[]; storageClassName?: string };
      expect(claimSpec.accessModes).toEqual([storageClass === '' ? 'ReadWriteOnce' : 'ReadWriteMany']);
      if (storageClass !== '') expect(claimSpec.storageClassName).toBe(storageClass);

      const forwards = createPortForwards(
        (pod, socket) => kube.forward(pod, CONTAINER_PORT, socket),
        () => undefined,
      );
      try {
        const readyPods = async () => (await kube.pods(selector)).filter((p) => p.ready).map((p) => p.name);
        const forwarded = new Set<string>();
        const urlOf = async (pod: string) => {
          forwarded.add(pod);
          await forwards.sync([...forwarded]);
          return `http://127.0.0.1:${forwards.port(pod)}/mcp`;
        };
        const first = (await readyPods())[0]!;
        const created = await taskRpc(await urlOf(first), 'tools/call', { name: 'sleep', arguments: { ms: 8000 } });
        expect(created.result?.resultType, JSON.stringify(created)).toBe('task');
        const taskId = created.result!.taskId as string;

        let other: string;
        if (storageClass !== '') {
          other = (await readyPods()).find((pod) => pod !== first)!;
          expect(other).toBeDefined();
          // the other pod sees the task working, then its result: it reads the claim the first one writes
          expect((await taskRpc(await urlOf(other), 'tasks/get', { taskId })).result).toMatchObject({
            status: 'working',
          });
        } else {
          // one pod: the task ends, its pod is replaced, and the new pod reads it from the claim
          await waitFor(
            'the task to end on its pod',
            async () => {
              const answer = await taskRpc(await urlOf(first), 'tasks/get', { taskId });
              return answer.result?.status === 'completed' ? true : undefined;
            },
            60_000,
          );
          await kube.delete('v1', 'Pod', first);
          other = await waitFor(
            'a new pod ready',
            async () => (await readyPods()).find((pod) => pod !== first),
            180_000,
          );
        }
        const otherUrl = await urlOf(other);
        const done = await waitFor(
          'the task completed, read on the other pod',
          async () => {
            const answer = await taskRpc(otherUrl, 'tasks/get', { taskId });
            return answer.result?.status === 'completed' ? answer.result : undefined;
          },
          60_000,
        );
        expect(done).toMatchObject({ result: { content: [{ type: 'text', text: 'slept 8000 ms' }] } });
      } finally {
        await forwards.close();
      }

      const stopped = await cli(['--json', 'stop', deployment.deployment_id]);
      expect(stopped.code, stopped.stderr).toBe(0);
      // the claim goes with the rest
      await waitFor(
        'every object removed',
        async () => ((await kube.list(selector)).length === 0 ? true : undefined),
        180_000,
      );
      const engineStop = await cli(['engine', 'stop']);
      expect(engineStop.code, engineStop.stderr).toBe(0);
    },
  );
});
