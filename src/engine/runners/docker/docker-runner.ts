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
 * SIGKILL after the grace period), health is GET /health on the published port.
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
import { DockerApiError, DockerUnavailableError, readLogLines, type DockerClient } from './engine-api.js';
import { envArchive } from './env-archive.js';
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

/** As the Kubernetes manifests' limits (src/packaging/kubernetes-manifests.ts): 256 MiB, half a CPU. */
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
  const limits: ContainerLimits = {
    ...defaults,
    ...(spec.resources?.memoryMb === undefined ? {} : { memoryBytes: spec.resources.memoryMb * 1024 * 1024 }),
    ...(spec.resources?.cpus === undefined ? {} : { cpus: spec.resources.cpus }),
  };
  // built by prepare() already, unless the image was removed since
  const image = await buildImage(images, spec.bundleDir);
  const deadline = Date.now() + spec.limits.startTimeoutMs;
  const contract = imageContract(image.digest, { logLevel: spec.logLevel, envFile: DOCKER_ENV_FILE });
  const labels: Record<string, string> = {
    [CONTAINER_LABELS.engine]: spec.labels.engine,
    [CONTAINER_LABELS.deployment]: spec.labels.deployment,
    [CONTAINER_LABELS.instance]: spec.labels.instance,
    [LABELS.bundle]: image.digest.slice(0, BUNDLE_LABEL_LENGTH),
  };
  const port = `${contract.port}/tcp`;
  const name =
    `mcpctl-${spec.labels.deployment || 'instance'}-${spec.labels.instance || 'x'}-${randomBytes(3).toString('hex')}`.replace(
      /[^a-zA-Z0-9_.-]/g,
      '-',
    );
  let id: string;
  try {
    ({ Id: id } = await docker.json<{ Id: string }>('POST', '/containers/create', {
      query: { name },
      json: containerConfig(contract, limits, labels, network),
    }));
  } catch (error) {
    throw new RunnerStartError(
      `could not create the container: ${(error as Error).message}`,
      error instanceof DockerUnavailableError,
      { cause: error },
    );
  }

  try {
    await docker.json('PUT', `/containers/${id}/archive`, {
      query: { path: DOCKER_ENV_DIR },
      stream: envArchive(DOCKER_ENV_DIR, DOCKER_ENV_FILE, spec.env, contract.user),
    });
  } catch (error) {
    await removeContainer(docker, id);
    throw new RunnerStartError(
      `could not give the container its values: ${(error as Error).message}`,
      error instanceof DockerUnavailableError,
      {
        cause: error,
      },
    );
  }

  let listening: (port: number) => void = () => {};
  let failedToStart: (message: string) => void = () => {};
  const ready = new Promise<number>((resolve, reject) => {
    listening = resolve;
    failedToStart = (message) => reject(new RunnerStartError(message, false));
  });
  const tail: string[] = [];
  let started = false;
  try {
    await docker.json('POST', `/containers/${id}/start`);
  } catch (error) {
    await removeContainer(docker, id);
    throw new RunnerStartError(
      `could not start the container: ${(error as Error).message}`,
      error instanceof DockerUnavailableError,
      { cause: error },
    );
  }
  // `not-running` after the start: a container that already ended answers at once, with its code
  const exited = waitFor(docker, id);
  void followLogs(docker, id, (line) => {
    if (!started) {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      const event = eventOf(line);
      if (event?.event === 'listening') {
        started = true;
        listening(contract.port);
        return;
      }
      if (event?.event === 'start_failed')
        failedToStart(typeof event.error === 'string' ? event.error : 'the server could not start');
    }
    spec.onLog(line);
  });
  void exited.then((exit) =>
    failedToStart(
      `the container ended before it listened (exit code ${exit.code ?? 'unknown'}): ${tail.slice(-5).join(' | ')}`,
    ),
  );

  const timeout = sleep(Math.max(0, deadline - Date.now()), undefined, { ref: false }).then(() => {
    throw new RunnerStartError(
      `the container did not listen within ${Math.round(spec.limits.startTimeoutMs / 1000)} s`,
      true,
    );
  });
  let hostPort: number;
  try {
    await Promise.race([ready, timeout]);
    hostPort = await publishedPort(docker, id, port);
  } catch (error) {
    await stopContainer(docker, id, 0);
    throw error instanceof RunnerStartError
      ? error
      : new RunnerStartError((error as Error).message, true, { cause: error });
  }
  const healthUrl = `http://127.0.0.1:${hostPort}${contract.healthPath}`;
  return {
    labels: spec.labels,
    pid: undefined,
    host: '127.0.0.1',
    port: hostPort,
    exited: exited.then(async (exit) => {
      await removeContainer(docker, id);
      return exit;
    }),
    stop: (graceMs) => stopContainer(docker, id, graceMs),
    health: (timeoutMs) => probeHealth(healthUrl, timeoutMs),
  };
}

/** The Engine API body of an instance's container: hardened, on its deployment's network, none of the deployment's values in it. */
function containerConfig(
  contract: ImageContract,
  limits: ContainerLimits,
  labels: Record<string, string>,
  network: string,
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
      Mounts: [{ Type: 'volume', Target: DOCKER_ENV_DIR }],
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

function eventOf(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

async function followLogs(docker: DockerClient, id: string, onLine: (line: string) => void): Promise<void> {
  try {
    const stream = await docker.stream('GET', `/containers/${id}/logs`, {
      query: { follow: 1, stdout: 1, stderr: 1 },
      long: true,
    });
    await readLogLines(stream, (line) => onLine(line));
  } catch {
    // the container is gone: its exit says so
  }
}

/** Settles when the container ends, however it ends (a lost daemon counts as an end). */
async function waitFor(docker: DockerClient, id: string): Promise<ExitInfo> {
  try {
    const result = await docker.json<{ StatusCode?: number }>('POST', `/containers/${id}/wait`, {
      query: { condition: 'not-running' },
      long: true,
    });
    const code = typeof result?.StatusCode === 'number' ? result.StatusCode : null;
    // 128 + n: ended by signal n (137: SIGKILL, 143: SIGTERM)
    const signal = code === 137 ? 'SIGKILL' : code === 143 ? 'SIGTERM' : null;
    return { code, signal };
  } catch {
    return { code: null, signal: null };
  }
}

async function publishedPort(docker: DockerClient, id: string, port: string): Promise<number> {
  const info = await docker.json<{
    NetworkSettings?: { Ports?: Record<string, { HostIp: string; HostPort: string }[] | null> };
  }>('GET', `/containers/${id}/json`);
  const binding =
    info.NetworkSettings?.Ports?.[port]?.find((item) => item.HostIp === '127.0.0.1') ??
    info.NetworkSettings?.Ports?.[port]?.[0];
  const hostPort = Number(binding?.HostPort);
  if (!Number.isInteger(hostPort) || hostPort <= 0) throw new Error(`the container's port ${port} is not published`);
  return hostPort;
}

/** SIGTERM, SIGKILL after `graceMs`, then the container is removed; resolves once it is gone. */
async function stopContainer(docker: DockerClient, id: string, graceMs: number): Promise<void> {
  try {
    await docker.json('POST', `/containers/${id}/stop`, { query: { t: Math.ceil(graceMs / 1000) }, long: true });
  } catch (error) {
    // 304: not running; 404: gone
    if (!(error instanceof DockerApiError)) throw error;
  }
  await removeContainer(docker, id);
}

async function removeContainer(docker: DockerClient, id: string): Promise<void> {
  try {
    await docker.json('DELETE', `/containers/${id}`, { query: { force: 1, v: 1 } });
  } catch (error) {
    // already removed, or its removal is under way
    if (!(error instanceof DockerApiError)) throw error;
  }
}
