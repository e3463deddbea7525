/**
 * The Docker runner forgets a removed deployment: its task volume is deleted through the Engine
 * API (a fake client here, answering as the daemon does), a volume that is not there is no error,
 * and one the daemon refuses to remove is named with the command that removes it.
 */
import { describe, expect, it } from 'vitest';
import { createDockerRunner } from '../../../../src/engine/runners/docker/docker-runner.js';
import { DockerApiError, type DockerClient } from '../../../../src/engine/runners/docker/engine-api.js';
import type { ImageBuilder } from '../../../../src/engine/runners/docker/images.js';
import { taskVolumeName } from '../../../../src/engine/runners/docker/task-volume.js';

function fakeDocker(
  answer: (method: string, path: string) => unknown,
): DockerClient & { calls: string[]; filters: unknown[] } {
  const calls: string[] = [];
  const filters: unknown[] = [];
  return {
    address: 'unix:///fake/docker.sock',
    calls,
    filters,
    json: async <T>(method: string, path: string, options?: { query?: Record<string, unknown> }) => {
      calls.push(`${method} ${path}`);
      if (typeof options?.query?.filters === 'string') filters.push(JSON.parse(options.query.filters));
      return answer(method, path) as T;
    },
    stream: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
  };
}

const images: ImageBuilder = {
  ensure: () => Promise.reject(new Error('not used')),
  push: () => Promise.reject(new Error('not used')),
};

describe('the Docker runner, when a deployment is removed', () => {
  it('deletes the deployment’s task volume, and only that one', async () => {
    const docker = fakeDocker(() => undefined);
    await createDockerRunner({ docker, images }).forget!('/home/engine', 'dep-1');
    expect(docker.calls).toEqual([
      'GET /containers/json',
      `DELETE /volumes/${taskVolumeName('/home/engine', 'dep-1')}`,
    ]);
    expect(taskVolumeName('/home/engine', 'dep-1')).not.toBe(taskVolumeName('/home/engine', 'dep-2'));
    expect(taskVolumeName('/home/engine', 'dep-1')).not.toBe(taskVolumeName('/home/other', 'dep-1'));
  });

  it('first removes the ended containers that hold it (tasks a Swarm rollout replaced), none that runs', async () => {
    const volume = taskVolumeName('/home/engine', 'dep-1');
    const docker = fakeDocker((method, path) =>
      method === 'GET' && path === '/containers/json' ? [{ Id: 'old1', State: 'exited' }] : undefined,
    );
    await createDockerRunner({ docker, images }).forget!('/home/engine', 'dep-1');
    expect(docker.filters).toEqual([{ volume: [volume], status: ['exited', 'created', 'dead'] }]);
    expect(docker.calls.slice(1)).toEqual(['DELETE /containers/old1', `DELETE /volumes/${volume}`]);
  });

  it('takes a volume that is not there (a deployment without tasks) as removed', async () => {
    const docker = fakeDocker(() => {
      throw new DockerApiError('get mcpctl-tasks-x: no such volume', 404);
    });
    await expect(createDockerRunner({ docker, images }).forget!('/home/engine', 'dep-1')).resolves.toBeUndefined();
  });

  it('names the volume and how to remove it when the daemon refuses', async () => {
    const volume = taskVolumeName('/home/engine', 'dep-1');
    const docker = fakeDocker(() => {
      throw new DockerApiError('volume is in use', 409);
    });
    await expect(createDockerRunner({ docker, images }).forget!('/home/engine', 'dep-1')).rejects.toThrow(
      `could not remove its tasks volume ${volume} (volume is in use); remove it with \`docker volume rm ${volume}\``,
    );
  });
});
