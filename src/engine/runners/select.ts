/**
 * Which runner an engine uses, chosen per engine: `mcpctl serve --runner`, else MCPCTL_RUNNER,
 * else `runner` in the home's engine-settings.json, else `process`. The Docker runner's modules
 * (and undici's pool on the socket) load only when it is chosen.
 *
 * The Docker runner reads DOCKER_HOST (default /var/run/docker.sock), MCPCTL_DOCKER_BASE_IMAGE
 * (default node:20-slim), MCPCTL_DOCKER_MEMORY_MB and MCPCTL_DOCKER_CPUS (the limits of each container).
 * The kubernetes runner (src/engine/kubernetes/kubernetes-runner.ts) reads the kubeconfig, MCPCTL_KUBERNETES_*
 * and `kubernetes` in the settings file; @kubernetes/client-node loads only then.
 */
import { readFile } from 'node:fs/promises';
import { DEFAULT_BASE_IMAGE } from '../../runtime/image.js';
import type { Logger, StartRuntimeProcess } from '../types.js';
import { createProcessRunner } from './process-runner.js';
import type { Runner } from './runner.js';
import type { Orchestrator } from './orchestrator.js';
import type { DockerClient } from '../docker/engine-api.js';
import type { ImageBuilder } from '../docker/images.js';
import type { ContainerLimits } from './docker-runner.js';

export const RUNNER_KINDS = ['process', 'docker', 'kubernetes'] as const;
export type RunnerKind = (typeof RUNNER_KINDS)[number];

/** The runner cannot be used as configured; the message says what to change. */
export class RunnerConfigError extends Error {
  override readonly name = 'RunnerConfigError';
}

export function isRunnerKind(value: unknown): value is RunnerKind {
  return typeof value === 'string' && (RUNNER_KINDS as readonly string[]).includes(value);
}

/** `runner` of the settings file, when it has one. */
export async function runnerFromSettings(settingsFile: string): Promise<string | undefined> {
  const value = await settingsEntry(settingsFile, 'runner');
  return typeof value === 'string' ? value : undefined;
}

/** One entry of the settings file (undefined when the file or the entry is missing). */
export async function settingsEntry(settingsFile: string, key: string): Promise<unknown> {
  try {
    return (JSON.parse(await readFile(settingsFile, 'utf8')) as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** The first of the given choices that is set, checked. */
export function chooseRunner(choices: { value: string | undefined; from: string }[]): RunnerKind {
  for (const { value, from } of choices) {
    if (value === undefined || value === '') continue;
    if (!isRunnerKind(value)) throw new RunnerConfigError(`${from} must be one of ${RUNNER_KINDS.join(', ')}, not ${JSON.stringify(value)}`);
    return value;
  }
  return 'process';
}

export interface RunnerDeps {
  env: Record<string, string | undefined>;
  startRuntime: StartRuntimeProcess;
  logger: Logger;
  /** the engine's settings file (engine-settings.json), for a runner's own section */
  settingsFile?: string;
}

/** The runner of this kind; for docker, once the daemon answers (RunnerConfigError when it does not). */
export async function createRunner(kind: RunnerKind, deps: RunnerDeps): Promise<Runner> {
  if (kind === 'process') return createProcessRunner(deps.startRuntime);
  if (kind === 'kubernetes') {
    const { createKubernetesRunner, KubernetesUnavailableError } = await import('../kubernetes/kubernetes-runner.js');
    const settings = deps.settingsFile === undefined ? undefined : await settingsEntry(deps.settingsFile, 'kubernetes');
    try {
      return await createKubernetesRunner({ env: deps.env, logger: deps.logger, settings });
    } catch (error) {
      if (error instanceof KubernetesUnavailableError) throw new RunnerConfigError(`the kubernetes runner cannot start: ${error.message}`);
      throw error;
    }
  }
  const [{ createDockerClient, DockerUnavailableError }, { createImageBuilder }, { createDockerRunner }] = await Promise.all([
    import('../docker/engine-api.js'),
    import('../docker/images.js'),
    import('./docker-runner.js'),
  ]);
  const { env } = deps;
  let docker;
  try {
    docker = createDockerClient(env);
    const version = await docker.json<{ Version?: string; ApiVersion?: string }>('GET', '/version');
    deps.logger.info('docker runner', { docker: docker.address, version: version.Version, api: version.ApiVersion });
  } catch (error) {
    await docker?.close().catch(() => undefined);
    if (error instanceof DockerUnavailableError) throw new RunnerConfigError(`the docker runner needs a Docker daemon: ${error.message}`);
    throw new RunnerConfigError(`the docker runner cannot use the Docker daemon: ${(error as Error).message}`);
  }
  const baseImage = env.MCPCTL_DOCKER_BASE_IMAGE !== undefined && env.MCPCTL_DOCKER_BASE_IMAGE !== '' ? env.MCPCTL_DOCKER_BASE_IMAGE : DEFAULT_BASE_IMAGE;
  const memoryMb = positive(env.MCPCTL_DOCKER_MEMORY_MB, 'MCPCTL_DOCKER_MEMORY_MB');
  const cpus = positive(env.MCPCTL_DOCKER_CPUS, 'MCPCTL_DOCKER_CPUS');
  const images = createImageBuilder({ docker, baseImage, onProgress: (line) => deps.logger.debug('image build', { line }) });
  const limits = { ...(memoryMb === undefined ? {} : { memoryBytes: Math.round(memoryMb * 1024 * 1024) }), ...(cpus === undefined ? {} : { cpus }) };
  const runner = createDockerRunner({ docker, images, limits });
  const orchestrator = await swarmOf(env, docker, images, limits, deps.logger);
  if (orchestrator === undefined) return runner;
  return {
    ...runner,
    orchestrator,
    close: async () => {
      await orchestrator.close?.();
      await runner.close?.();
    },
  };
}

/**
 * The Swarm orchestrator when the daemon is a Swarm manager and MCPCTL_SWARM is not `off`: it runs
 * production deployments as services. MCPCTL_SWARM_SPREAD (default node.labels.region),
 * MCPCTL_SWARM_MONITOR_SECONDS and MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS tune it.
 */
async function swarmOf(
  env: Record<string, string | undefined>,
  docker: DockerClient,
  images: ImageBuilder,
  limits: Partial<ContainerLimits>,
  logger: Logger,
): Promise<Orchestrator | undefined> {
  const mode = env.MCPCTL_SWARM ?? 'auto';
  if (mode !== 'auto' && mode !== 'off') throw new RunnerConfigError(`MCPCTL_SWARM must be auto or off, not ${JSON.stringify(mode)}`);
  if (mode === 'off') return undefined;
  const [{ createSwarmOrchestrator, isSwarmManager }, { DEFAULT_CONTAINER_LIMITS }] = await Promise.all([
    import('./swarm-orchestrator.js'),
    import('./docker-runner.js'),
  ]);
  if (!(await isSwarmManager(docker))) return undefined;
  const monitor = positive(env.MCPCTL_SWARM_MONITOR_SECONDS, 'MCPCTL_SWARM_MONITOR_SECONDS');
  const interval = positive(env.MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS, 'MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS');
  const spread = env.MCPCTL_SWARM_SPREAD !== undefined && env.MCPCTL_SWARM_SPREAD !== '' ? env.MCPCTL_SWARM_SPREAD : undefined;
  const settings = {
    ...(spread === undefined ? {} : { spread: spread.includes('.') ? spread : `node.labels.${spread}` }),
    ...(monitor === undefined ? {} : { monitorMs: Math.round(monitor * 1000) }),
    ...(interval === undefined ? {} : { healthIntervalMs: Math.round(interval * 1000), healthStartMs: Math.max(Math.round(interval * 1000) * 10, 5000) }),
  };
  logger.info('docker host is a Swarm manager: production deployments run as Swarm services', { ...settings });
  return createSwarmOrchestrator({ docker, images, limits: { ...DEFAULT_CONTAINER_LIMITS, ...limits }, settings });
}

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new RunnerConfigError(`${name} must be a positive number, not ${JSON.stringify(value)}`);
  return number;
}
