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

function fakeDocker(answer: (method: string, path: string) => unknown): DockerClient & { calls: string[] } {
  const calls: string[] = [];
  return {
    address: 'unix:///fake/docker.sock',
    calls,
    json: async <T>(method: string, path: string) => {
      calls.push(`${method} ${path}`);
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
    expect(docker.calls).toEqual([`DELETE /volumes/${taskVolumeName('/home/engine', 'dep-1')}`]);
    expect(taskVolumeName('/home/engine', 'dep-1')).not.toBe(taskVolumeName('/home/engine', 'dep-2'));
    expect(taskVolumeName('/home/engine', 'dep-1')).not.toBe(taskVolumeName('/home/other', 'dep-1'));
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
