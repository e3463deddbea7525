/**
 * The task state of a deployment's containers (tools marked `task:`): a named volume of that
 * deployment, mounted in each of its containers and in no other, removed with the deployment.
 * The runtime runs as the image's user, so a folder of that user's is made in the volume before
 * the container starts (a volume is root's when Docker makes it), and MCPCTL_TASKS_DIR names it.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pack as createPack } from 'tar-stream';
import { TASKS_DIR_ENV } from '../../../runtime/constants.js';
import { RunnerStartError } from '../runner.js';
import { DockerApiError, type DockerClient } from './engine-api.js';

/** Where the volume is mounted inside a container. */
export const DOCKER_TASKS_MOUNT = '/var/lib/mcpctl-tasks';
const DOCKER_TASKS_DIR = `${DOCKER_TASKS_MOUNT}/tasks`;

/** One volume per engine and deployment: two engines on one daemon never share one. */
export function taskVolumeName(engine: string, deployment: string): string {
  const digest = createHash('sha256').update(`${engine}\0${deployment}`).digest('hex').slice(0, 16);
  return `mcpctl-tasks-${digest}`;
}

export function taskVolumeMount(volume: string): Record<string, unknown> {
  return { Type: 'volume', Source: volume, Target: DOCKER_TASKS_MOUNT };
}

/** The container's values, with the folder of its tasks. */
export function withTasksDir(env: Record<string, string>): Record<string, string> {
  return { ...env, [TASKS_DIR_ENV]: DOCKER_TASKS_DIR };
}

/** Makes the tasks folder in the volume, the runtime's user's, in a created container. */
export async function prepareTaskVolume(
  docker: DockerClient,
  id: string,
  owner: { uid: number; gid: number },
): Promise<void> {
  const pack = createPack();
  pack.entry({ uid: owner.uid, gid: owner.gid, mtime: new Date(0), name: 'tasks/', type: 'directory', mode: 0o700 });
  pack.finalize();
  try {
    await docker.json('PUT', `/containers/${id}/archive`, {
      query: { path: DOCKER_TASKS_MOUNT },
      stream: pack as unknown as Readable,
    });
  } catch (error) {
    throw new RunnerStartError(`could not prepare the tasks volume: ${(error as Error).message}`, false, {
      cause: error,
    });
  }
}

/** Removes the deployment's volume, if it has one (a deployment without tasks has none). */
export async function removeTaskVolume(docker: DockerClient, engine: string, deployment: string): Promise<void> {
  const volume = taskVolumeName(engine, deployment);
  try {
    await docker.json('DELETE', `/volumes/${volume}`);
  } catch (error) {
    if (error instanceof DockerApiError && error.status === 404) return;
    throw new Error(
      `could not remove its tasks volume ${volume} (${(error as Error).message}); remove it with \`docker volume rm ${volume}\``,
      { cause: error },
    );
  }
}
