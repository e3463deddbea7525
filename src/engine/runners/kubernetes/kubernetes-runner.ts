/**
 * The `kubernetes` runner (`mcpctl serve --runner kubernetes`): every deployment, in every
 * environment, is a workload on the cluster of the kubeconfig, run through the orchestrator seam
 * (orchestrator.ts). It never starts single instances itself.
 *
 * The image: the cluster pulls `[registry/]mcpctl-server:<bundle digest>`. When the engine has a
 * Docker host (DOCKER_HOST, or /var/run/docker.sock), it builds the image there before the first
 * rollout of a build (outside the start time-out) and, with a registry set, pushes it there. Without
 * a Docker host it builds nothing: the image must already be where the cluster finds it
 * (`mcpctl export image --registry`, or `kind load docker-image`), or the rollout fails saying
 * which image it could not pull.
 */
import { existsSync } from 'node:fs';
import { DEFAULT_BASE_IMAGE } from '../../../packaging/image.js';
import type { Logger } from '../../engine-log.js';
import { RunnerStartError, type Runner } from '../runner.js';
import { connectCluster, KubernetesUnavailableError } from './cluster.js';
import { createKubernetesOrchestrator, type ImagePublisher } from './kubernetes-orchestrator.js';
import { kubernetesSettings } from './plan.js';
import { SETTINGS, settingValue } from '../../../shared/settings.js';

export { KubernetesUnavailableError };

export interface KubernetesRunnerDeps {
  env: Record<string, string | undefined>;
  logger: Logger;
  /** `kubernetes` of engine-settings.json */
  settings: unknown;
  /** the settings file, for messages */
  settingsFile?: string | undefined;
}

export async function createKubernetesRunner(deps: KubernetesRunnerDeps): Promise<Runner> {
  const { settings, problems } = kubernetesSettings(deps.env, deps.settings, deps.settingsFile);
  if (problems.length > 0) throw new KubernetesUnavailableError(problems.join('; '));
  const cluster = await connectCluster({
    ...(settings.namespace === undefined ? {} : { namespace: settings.namespace }),
    ...(settings.context === undefined ? {} : { context: settings.context }),
    ...(deps.env.KUBECONFIG === undefined ? {} : { kubeconfig: deps.env.KUBECONFIG }),
  });
  deps.logger.info('kubernetes runner', {
    server: cluster.server,
    version: cluster.version,
    namespace: cluster.namespace,
    address: settings.address,
  });
  const publisher = await imagePublisher(deps);
  if (publisher === undefined)
    deps.logger.warn(
      'no Docker host answers: images are not built or pushed; the cluster must already have each build’s image',
      {
        registry: settings.registry ?? '(none)',
      },
    );
  const orchestrator = createKubernetesOrchestrator({
    cluster,
    settings,
    logger: deps.logger,
    ...(publisher === undefined ? {} : { images: publisher.images }),
  });
  return {
    kind: 'kubernetes',
    orchestrator,
    start: () =>
      Promise.reject(
        new RunnerStartError(
          'the kubernetes runner runs whole deployments on the cluster, not single instances',
          false,
        ),
      ),
    find: async () => [],
    async close() {
      await orchestrator.close?.();
      await publisher?.close();
    },
  };
}

/** The Docker host's image builder, when one answers. */
async function imagePublisher(
  deps: KubernetesRunnerDeps,
): Promise<{ images: ImagePublisher; close(): Promise<void> } | undefined> {
  const { env } = deps;
  const { DEFAULT_DOCKER_SOCKET, createDockerClient } = await import('../docker/engine-api.js');
  if ((env.DOCKER_HOST === undefined || env.DOCKER_HOST === '') && !existsSync(DEFAULT_DOCKER_SOCKET)) return undefined;
  let docker;
  try {
    docker = createDockerClient(env);
    await docker.json('GET', '/version');
  } catch (error) {
    await docker?.close().catch(() => undefined);
    deps.logger.warn('the Docker host does not answer', { error: (error as Error).message });
    return undefined;
  }
  const [{ createImageBuilder }, { registryAuth }] = await Promise.all([
    import('../docker/images.js'),
    import('../docker/registry-auth.js'),
  ]);
  const baseImage = settingValue(SETTINGS.dockerBaseImage, { env }) ?? DEFAULT_BASE_IMAGE;
  const builder = createImageBuilder({
    docker,
    baseImage,
    onProgress: (line) => deps.logger.debug('image build', { line }),
  });
  const client = docker;
  return {
    images: {
      ensure: (bundleDir) => builder.ensure(bundleDir),
      push: async (digest, registry) => builder.push(digest, registry, await registryAuth(registry, env)),
    },
    close: () => client.close(),
  };
}
