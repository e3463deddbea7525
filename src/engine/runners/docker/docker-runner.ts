/**
 * The Docker runner: each instance is a container of the bundle's image (`mcpctl-server:<digest>`,
 * built on the Docker host at its first start and kept: the tag is its content), hardened:
 * user 10001, read-only root filesystem with a tmpfs /tmp, no new privileges, every capability
 * dropped, memory, CPU and process limits, an init that reaps what tools spawn. Each deployment's
 * containers are on a network of its own (docker/networks.ts), not on the default bridge. The
 * deployment's values are not in the container's `Env` (`docker inspect` would show them): they are
 * copied as a file into the container's own volume before it starts (docker/env-archive.ts), and
 * the runtime loads and deletes it. Its port 8080 is
 * published on 127.0.0.1 at a port Docker picks; the gateway routes there. Logs are followed from
 * the container, its end is awaited with the wait endpoint, a stop is Docker's (SIGTERM, then
 * SIGKILL after the grace period), health is GET /health on the published port. A deployment with
 * task tools has a volume of its own mounted in each of its containers (docker/task-volume.ts).
 *
 * Labels on each container name the engine's home, the deployment and the instance (plus the image
 * contract's), so a restarted engine finds the containers it left: they are stopped and removed, and
 * the deployment starts new ones, as the process runner does.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BUNDLE_LABEL_LENGTH,
  DOCKER_ENV_DIR,
  DOCKER_ENV_FILE,
  LABELS,
  imageContract,
  type ImageContract,
} from '../../../packaging/image.js';
import { DockerUnavailableError, type DockerClient } from './engine-api.js';
import {
  copyValues,
  createContainer,
  followLogs,
  publishedPort,
  removeContainer,
  startCreated,
  stopContainer,
  waitFor,
} from './containers.js';
import { DeploymentNetworks } from './networks.js';
import type { ImageBuilder } from './images.js';
import { probeHealth } from '../process/process-runner.js';
import {
  RunnerStartError,
  type ExitInfo,
  type FoundInstance,
  type InstanceLabels,
  type Runner,
  type RunnerInstance,
  type StartInstanceSpec,
} from '../runner.js';
import { removeTaskVolume, taskVolumeMount, withTasksDir } from './task-volume.js';

/** Label keys of what a container belongs to. */
export const CONTAINER_LABELS = {
  engine: 'mcpctl/engine',
  deployment: 'mcpctl/deployment',
  instance: 'mcpctl/instance',
} as const;

export interface ContainerLimits {
  /** bytes of memory (and memory + swap: no swap) */
  memoryBytes: number;
  /** CPUs, such as 0.5 */
  cpus: number;
  /** processes and threads in the container */
  pids: number;
  /** size of the /tmp tmpfs */
  tmpBytes: number;
}

/** As the Kubernetes manifests' limits (src/packaging/kubernetes-objects.ts): 256 MiB, half a CPU. */
export const DEFAULT_CONTAINER_LIMITS: ContainerLimits = {
  memoryBytes: 256 * 1024 * 1024,
  cpus: 0.5,
  pids: 256,
  tmpBytes: 64 * 1024 * 1024,
};

export interface DockerRunnerOptions {
  docker: DockerClient;
  images: ImageBuilder;
  limits?: Partial<ContainerLimits>;
}

export function createDockerRunner(options: DockerRunnerOptions): Runner & { readonly docker: DockerClient } {
  const { docker, images } = options;
  const limits = { ...DEFAULT_CONTAINER_LIMITS, ...options.limits };
  const networks = new DeploymentNetworks(docker);
  return {
    kind: 'docker',
    docker,
    close: () => docker.close(),
    prepare: async (bundleDir) => {
      await buildImage(images, bundleDir);
    },
    start: (spec) => startOnNetwork(docker, images, limits, spec, networks),
    forget: (engine, deployment) => removeTaskVolume(docker, engine, deployment),
    find: async (engine) => {
      const containers = await docker.json<ContainerSummary[]>('GET', '/containers/json', {
        query: { all: 1, filters: JSON.stringify({ label: [`${CONTAINER_LABELS.engine}=${engine}`] }) },
      });
      return containers.map((container): FoundInstance => {
        const labels = labelsOf(container.Labels);
        return {
          labels,
          pid: undefined,
          // re-attaching would need the deployment to take running instances over; it starts new ones
          adopt: () => Promise.resolve(undefined),
          stop: async (graceMs) => {
            await stopContainer(docker, container.Id, graceMs);
            if (labels.deployment !== '') await networks.removeLeftover(engine, labels.deployment);
          },
        };
      });
    },
  };
}

interface ContainerSummary {
  Id: string;
  Labels: Record<string, string>;
  State: string;
}

function labelsOf(labels: Record<string, string>): InstanceLabels {
  return {
    engine: labels[CONTAINER_LABELS.engine] ?? '',
    deployment: labels[CONTAINER_LABELS.deployment] ?? '',
    instance: labels[CONTAINER_LABELS.instance] ?? '',
  };
}

/** Starts the container on its deployment's network, held while the container lives. */
async function startOnNetwork(
  docker: DockerClient,
  images: ImageBuilder,
  limits: ContainerLimits,
  spec: StartInstanceSpec,
  networks: DeploymentNetworks,
): Promise<RunnerInstance> {
  const { engine, deployment } = spec.labels;
  let network: string;
  try {
    network = await networks.acquire(engine, deployment || spec.labels.instance);
  } catch (error) {
    throw new RunnerStartError(`could not make the deployment's network: ${(error as Error).message}`, true, {
      cause: error,
    });
  }
  const release = () => networks.release(engine, deployment || spec.labels.instance).catch(() => undefined);
  try {
    const instance = await startContainer(docker, images, limits, spec, network);
    return { ...instance, exited: instance.exited.then(async (exit) => (await release(), exit)) };
  } catch (error) {
    await release();
    throw error;
  }
}

async function startContainer(
  docker: DockerClient,
  images: ImageBuilder,
  defaults: ContainerLimits,
  spec: StartInstanceSpec,
  network: string,
): Promise<RunnerInstance> {
  // built by prepare() already, unless the image was removed since
  const image = await buildImage(images, spec.bundleDir);
  const deadline = Date.now() + spec.limits.startTimeoutMs;
  const contract = imageContract(image.digest, { logLevel: spec.logLevel, envFile: DOCKER_ENV_FILE });
  const labels = containerLabels(spec.labels, image.digest);
  const tasks = spec.tasksDir === undefined ? undefined : taskVolumeMount(spec.labels.engine, spec.labels.deployment);
  const config = containerConfig(contract, containerLimits(defaults, spec), labels, network, tasks);
  const id = await createContainer(docker, containerName(spec.labels), config);
  await copyValues(docker, id, tasks === undefined ? spec.env : withTasksDir(spec.env, tasks.Source), contract.user);
  await startCreated(docker, id);
  // `not-running` after the start: a container that already ended answers at once, with its code
  const exited = waitFor(docker, id);
  const listening = watchStart(docker, id, (line) => spec.onLog(line), exited);
  const hostPort = await untilListening(docker, id, listening, deadline, spec.limits.startTimeoutMs, contract.port);
  const healthUrl = `http://127.0.0.1:${hostPort}${contract.healthPath}`;
  return {
    labels: spec.labels,
    pid: undefined,
    host: '127.0.0.1',
    port: hostPort,
    exited: exited.then(async (exit) => {
      // a daemon out of reach (or the engine's client closed) leaves it to the next start's sweep by label
      await removeContainer(docker, id).catch(() => undefined);
      return exit;
    }),
    stop: (graceMs) => stopContainer(docker, id, graceMs),
    health: (timeoutMs) => probeHealth(healthUrl, timeoutMs),
  };
}

/** The runner's limits, with the deployment's own `resources` over them. */
function containerLimits(defaults: ContainerLimits, spec: StartInstanceSpec): ContainerLimits {
  return {
    ...defaults,
    ...(spec.resources?.memoryMb === undefined ? {} : { memoryBytes: spec.resources.memoryMb * 1024 * 1024 }),
    ...(spec.resources?.cpus === undefined ? {} : { cpus: spec.resources.cpus }),
  };
}

function containerLabels(instance: InstanceLabels, digest: string): Record<string, string> {
  return {
    [CONTAINER_LABELS.engine]: instance.engine,
    [CONTAINER_LABELS.deployment]: instance.deployment,
    [CONTAINER_LABELS.instance]: instance.instance,
    [LABELS.bundle]: digest.slice(0, BUNDLE_LABEL_LENGTH),
  };
}

/** A container name Docker takes, unique by a random suffix. */
function containerName(instance: InstanceLabels): string {
  const suffix = randomBytes(3).toString('hex');
  return `mcpctl-${instance.deployment || 'instance'}-${instance.instance || 'x'}-${suffix}`.replace(
    /[^a-zA-Z0-9_.-]/g,
    '-',
  );
}

/**
 * Resolves once the runtime logs that it listens; rejects when it logs that it cannot start, or the
 * container ends first (with the last lines it wrote). Every line goes on to `onLog`.
 */
function watchStart(
  docker: DockerClient,
  id: string,
  onLog: (line: string) => void,
  exited: Promise<ExitInfo>,
): Promise<void> {
  let listening: () => void = () => {};
  let failedToStart: (message: string) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    listening = resolve;
    failedToStart = (message) => reject(new RunnerStartError(message, false));
  });
  const tail: string[] = [];
  let started = false;
  void followLogs(docker, id, (line) => {
    if (!started) {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      const event = eventOf(line);
      if (event?.event === 'listening') {
        started = true;
        listening();
        return;
      }
      if (event?.event === 'start_failed')
        failedToStart(typeof event.error === 'string' ? event.error : 'the server could not start');
    }
    onLog(line);
  });
  void exited.then((exit) =>
    failedToStart(
      `the container ended before it listened (exit code ${exit.code ?? 'unknown'}): ${tail.slice(-5).join(' | ')}`,
    ),
  );
  return ready;
}

/** The host port of a container that listens in time; otherwise it is stopped and the start fails. */
async function untilListening(
  docker: DockerClient,
  id: string,
  listening: Promise<void>,
  deadline: number,
  startTimeoutMs: number,
  containerPort: number,
): Promise<number> {
  const timeout = sleep(Math.max(0, deadline - Date.now()), undefined, { ref: false }).then(() => {
    throw new RunnerStartError(`the container did not listen within ${Math.round(startTimeoutMs / 1000)} s`, true);
  });
  try {
    await Promise.race([listening, timeout]);
    return await publishedPort(docker, id, `${containerPort}/tcp`);
  } catch (error) {
    await stopContainer(docker, id, 0);
    throw error instanceof RunnerStartError
      ? error
      : new RunnerStartError((error as Error).message, true, { cause: error });
  }
}

/** The Engine API body of an instance's container: hardened, on its deployment's network, none of the deployment's values in it. */
function containerConfig(
  contract: ImageContract,
  limits: ContainerLimits,
  labels: Record<string, string>,
  network: string,
  /** the mount of the deployment's task volume, when its tools run as tasks */
  tasksMount?: Record<string, unknown>,
): Record<string, unknown> {
  const port = `${contract.port}/tcp`;
  return {
    Image: contract.image,
    Cmd: contract.command,
    // the deployment's values are copied in as a file once it exists: nothing of them here, where inspect shows it
    Env: Object.entries(contract.env).map(([key, value]) => `${key}=${value}`),
    User: `${contract.user.uid}:${contract.user.gid}`,
    WorkingDir: contract.bundleDir,
    Labels: labels,
    ExposedPorts: { [port]: {} },
    HostConfig: {
      PortBindings: { [port]: [{ HostIp: '127.0.0.1', HostPort: '' }] },
      NetworkMode: network,
      // a volume of its own for the values file: the root filesystem is read-only
      Mounts: [{ Type: 'volume', Target: DOCKER_ENV_DIR }, ...(tasksMount === undefined ? [] : [tasksMount])],
      ReadonlyRootfs: true,
      Tmpfs: { [contract.scratchDir]: `rw,noexec,nosuid,nodev,size=${limits.tmpBytes}` },
      SecurityOpt: ['no-new-privileges'],
      CapDrop: ['ALL'],
      Memory: limits.memoryBytes,
      MemorySwap: limits.memoryBytes,
      NanoCpus: Math.round(limits.cpus * 1e9),
      PidsLimit: limits.pids,
      Init: true,
      RestartPolicy: { Name: 'no' },
      LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '2' } },
    },
  };
}

async function buildImage(images: ImageBuilder, bundleDir: string) {
  try {
    return await images.ensure(bundleDir);
  } catch (error) {
    throw new RunnerStartError(
      `could not build the image: ${(error as Error).message}`,
      error instanceof DockerUnavailableError,
      { cause: error },
    );
  }
}

/** A line of the runtime's log as its JSON event, when it is one. */
function eventOf(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
