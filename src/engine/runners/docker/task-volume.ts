/**
 * The task state of a deployment's containers (tools marked `task:`): a named volume of that
 * deployment, mounted in each of its containers (plain ones, or the tasks of its Swarm service) and
 * in no other, removed with the deployment. The image has the mount point empty and owned by its
 * user (src/packaging/image.ts, TASKS_MOUNT), and Docker gives a new volume the owner of the folder
 * it is first mounted on, so the runtime (that user) can write there with no step of the runner's.
 * MCPCTL_TASKS_DIR names a folder in it named after the volume: deployments whose volumes are one
 * share (a Swarm setting with an NFS export) keep apart.
 */
import { createHash } from 'node:crypto';
import { TASKS_MOUNT } from '../../../packaging/image.js';
import { TASKS_DIR_ENV } from '../../../runtime/constants.js';
import { DockerApiError, type DockerClient } from './engine-api.js';

/** Label keys of a task volume. */
export const VOLUME_LABELS = { engine: 'mcpctl/engine', deployment: 'mcpctl/deployment' } as const;

/** How Swarm makes the volume on each node (the `local` driver and no options unless told). */
export interface TaskVolumeDriver {
  driver?: string;
  options?: Record<string, string>;
}

/** One volume per engine and deployment: two engines on one daemon never share one. */
export function taskVolumeName(engine: string, deployment: string): string {
  const digest = createHash('sha256').update(`${engine}\0${deployment}`).digest('hex').slice(0, 16);
  return `mcpctl-tasks-${digest}`;
}

/** The mount of the deployment's volume (Engine API `Mount`), with the labels and driver Docker makes it with. */
export function taskVolumeMount(
  engine: string,
  deployment: string,
  driver: TaskVolumeDriver = {},
): Record<string, unknown> & { Source: string } {
  const labels = { [VOLUME_LABELS.engine]: engine, [VOLUME_LABELS.deployment]: deployment };
  const config =
    driver.driver === undefined && driver.options === undefined
      ? {}
      : { DriverConfig: { Name: driver.driver ?? 'local', Options: driver.options ?? {} } };
  return {
    Type: 'volume',
    Source: taskVolumeName(engine, deployment),
    Target: TASKS_MOUNT,
    VolumeOptions: { Labels: labels, ...config },
  };
}

/** The folder of the deployment's tasks in its container: MCPCTL_TASKS_DIR. */
export function tasksDirIn(volume: string): string {
  return `${TASKS_MOUNT}/${volume}`;
}

/** The container's values, with the folder of its tasks. */
export function withTasksDir(env: Record<string, string>, volume: string): Record<string, string> {
  return { ...env, [TASKS_DIR_ENV]: tasksDirIn(volume) };
}

/**
 * Removes the deployment's volume, if it has one (a deployment without tasks has none). Containers
 * that ended and still hold it go first: the tasks Swarm replaced in a rollout, which it keeps as
 * history (the volume is this deployment's, so they are too).
 */
export async function removeTaskVolume(docker: DockerClient, engine: string, deployment: string): Promise<void> {
  const volume = taskVolumeName(engine, deployment);
  try {
    const holders = await docker.json<Array<{ Id: string; State: string }> | undefined>('GET', '/containers/json', {
      query: { all: 1, filters: JSON.stringify({ volume: [volume], status: ['exited', 'created', 'dead'] }) },
    });
    for (const holder of holders ?? [])
      await docker.json('DELETE', `/containers/${holder.Id}`, { query: { v: 0 } }).catch(() => undefined);
    await docker.json('DELETE', `/volumes/${volume}`);
  } catch (error) {
    if (error instanceof DockerApiError && error.status === 404) return;
    throw new Error(
      `could not remove its tasks volume ${volume} (${(error as Error).message}); remove it with \`docker volume rm ${volume}\``,
      { cause: error },
    );
  }
}
