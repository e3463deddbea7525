/**
 * Which runner an engine uses, chosen per engine: `mcpctl serve --runner`, else MCPCTL_RUNNER,
 * else `runner` in the home's engine-settings.json, else `process`. The Docker runner's modules
 * (and undici's pool on the socket) load only when it is chosen.
 *
 * The Docker runner reads DOCKER_HOST (default /var/run/docker.sock), MCPCTL_DOCKER_BASE_IMAGE
 * (default node:20-slim), MCPCTL_DOCKER_MEMORY_MB and MCPCTL_DOCKER_CPUS (the limits of each container);
 * on a Swarm manager, MCPCTL_SWARM_* and `swarm` in the settings file (swarm-config.ts).
 * The kubernetes runner (src/engine/runners/kubernetes/kubernetes-runner.ts) reads the kubeconfig, MCPCTL_KUBERNETES_*
 * and `kubernetes` in the settings file; @kubernetes/client-node loads only then.
 */
import { DEFAULT_BASE_IMAGE } from '../../packaging/image.js';
import type { Logger } from '../engine-log.js';
import type { StartRuntimeProcess } from '../services.js';
import { createProcessRunner } from './process/process-runner.js';
import { RunnerConfigError, type Runner } from './runner.js';
import type { Orchestrator } from './orchestrator.js';
import type { DockerClient } from './docker/engine-api.js';
import type { ImageBuilder } from './docker/images.js';
import type { ContainerLimits } from './docker/docker-runner.js';
import type { SwarmSettings } from './docker/service-spec.js';
import { swarmConfig } from './docker/swarm-config.js';
import { readSettingsFile } from '../../shared/settings-file.js';
import { SETTINGS, settingValue, type SettingSources } from '../../shared/settings.js';
import { RUNNER_KINDS } from '../../shared/settings-engine.js';

export type RunnerKind = (typeof RUNNER_KINDS)[number];

export { RUNNER_KINDS, RunnerConfigError };

export function isRunnerKind(value: unknown): value is RunnerKind {
  return typeof value === 'string' && (RUNNER_KINDS as readonly string[]).includes(value);
}

const runnerError = (message: string) => new RunnerConfigError(message);

/** The runner of `--runner`, else MCPCTL_RUNNER, else `runner` of the settings file, else `process`. */
export function runnerKind(sources: SettingSources): RunnerKind {
  return settingValue(SETTINGS.runner, sources, runnerError);
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
    const { createKubernetesRunner, KubernetesUnavailableError } = await import('./kubernetes/kubernetes-runner.js');
    const file = deps.settingsFile === undefined ? undefined : await readSettingsFile(deps.settingsFile);
    try {
      return await createKubernetesRunner({
        env: deps.env,
        logger: deps.logger,
        settings: file?.values.kubernetes,
        settingsFile: deps.settingsFile,
      });
    } catch (error) {
      if (error instanceof KubernetesUnavailableError)
        throw new RunnerConfigError(`the kubernetes runner cannot start: ${error.message}`);
      throw error;
    }
  }
  const [{ createDockerClient, DockerUnavailableError }, { createImageBuilder }, { createDockerRunner }] =
    await Promise.all([
      import('./docker/engine-api.js'),
      import('./docker/images.js'),
      import('./docker/docker-runner.js'),
    ]);
  const { env } = deps;
  let docker;
  try {
    docker = createDockerClient(env);
    const version = await docker.json<{ Version?: string; ApiVersion?: string }>('GET', '/version');
    deps.logger.info('docker runner', { docker: docker.address, version: version.Version, api: version.ApiVersion });
  } catch (error) {
    await docker?.close().catch(() => undefined);
    if (error instanceof DockerUnavailableError)
      throw new RunnerConfigError(`the docker runner needs a Docker daemon: ${error.message}`);
    throw new RunnerConfigError(`the docker runner cannot use the Docker daemon: ${(error as Error).message}`);
  }
  const file = deps.settingsFile === undefined ? undefined : await readSettingsFile(deps.settingsFile);
  const baseImage = settingValue(SETTINGS.dockerBaseImage, { env }) ?? DEFAULT_BASE_IMAGE;
  const memoryMb = settingValue(SETTINGS.dockerMemoryMb, { env }, runnerError);
  const cpus = settingValue(SETTINGS.dockerCpus, { env }, runnerError);
  const images = createImageBuilder({
    docker,
    baseImage,
    onProgress: (line) => deps.logger.debug('image build', { line }),
  });
  const limits = {
    ...(memoryMb === undefined ? {} : { memoryBytes: Math.round(memoryMb * 1024 * 1024) }),
    ...(cpus === undefined ? {} : { cpus }),
  };
  const runner = createDockerRunner({ docker, images, limits });
  const swarm = swarmConfig(env, file?.values.swarm, deps.settingsFile);
  const orchestrator = swarm.enabled ? await swarmOf(swarm.settings, docker, images, limits, deps.logger) : undefined;
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
 * The Swarm orchestrator when the daemon is a Swarm manager (and Swarm is not turned off, swarm-config.ts):
 * it runs production deployments as services.
 */
async function swarmOf(
  settings: Partial<SwarmSettings>,
  docker: DockerClient,
  images: ImageBuilder,
  limits: Partial<ContainerLimits>,
  logger: Logger,
): Promise<Orchestrator | undefined> {
  const [{ createSwarmOrchestrator, isSwarmManager }, { DEFAULT_CONTAINER_LIMITS }] = await Promise.all([
    import('./docker/swarm-orchestrator.js'),
    import('./docker/docker-runner.js'),
  ]);
  if (!(await isSwarmManager(docker))) return undefined;
  logger.info('docker host is a Swarm manager: production deployments run as Swarm services', { ...settings });
  return createSwarmOrchestrator({ docker, images, limits: { ...DEFAULT_CONTAINER_LIMITS, ...limits }, settings });
}
