/**
 * One container through the Docker Engine API, as the Docker runner uses it: created, given the
 * deployment's values as a file in its own volume (env-archive.ts), started, its logs followed, its
 * end awaited, its published port read, stopped and removed. A failure to create, fill or start a
 * container is a RunnerStartError that says whether trying again may help (the daemon was not there).
 */
import { DOCKER_ENV_DIR, DOCKER_ENV_FILE } from '../../../packaging/image.js';
import { RunnerStartError, type ExitInfo } from '../runner.js';
import { DockerApiError, DockerUnavailableError, readLogLines, type DockerClient } from './engine-api.js';
import { envArchive } from './env-archive.js';

function startError(what: string, error: unknown): RunnerStartError {
  return new RunnerStartError(`${what}: ${(error as Error).message}`, error instanceof DockerUnavailableError, {
    cause: error,
  });
}

/** Creates the container of `config`; resolves with its id. */
export async function createContainer(
  docker: DockerClient,
  name: string,
  config: Record<string, unknown>,
): Promise<string> {
  try {
    const { Id } = await docker.json<{ Id: string }>('POST', '/containers/create', { query: { name }, json: config });
    return Id;
  } catch (error) {
    throw startError('could not create the container', error);
  }
}

/** Copies the deployment's values into the created container as the runtime's values file. */
export async function copyValues(
  docker: DockerClient,
  id: string,
  values: Record<string, string>,
  owner: { uid: number; gid: number },
): Promise<void> {
  try {
    await docker.json('PUT', `/containers/${id}/archive`, {
      query: { path: DOCKER_ENV_DIR },
      stream: envArchive(DOCKER_ENV_DIR, DOCKER_ENV_FILE, values, owner),
    });
  } catch (error) {
    await removeContainer(docker, id);
    throw startError('could not give the container its values', error);
  }
}

/** Starts a created container; one that cannot start is removed. */
export async function startCreated(docker: DockerClient, id: string): Promise<void> {
  try {
    await docker.json('POST', `/containers/${id}/start`);
  } catch (error) {
    await removeContainer(docker, id);
    throw startError('could not start the container', error);
  }
}

/** Follows the container's log lines into `onLine` until it ends. */
export async function followLogs(docker: DockerClient, id: string, onLine: (line: string) => void): Promise<void> {
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
export async function waitFor(docker: DockerClient, id: string): Promise<ExitInfo> {
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

/** The port on 127.0.0.1 that Docker published the container's `port` (`8080/tcp`) at. */
export async function publishedPort(docker: DockerClient, id: string, port: string): Promise<number> {
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
export async function stopContainer(docker: DockerClient, id: string, graceMs: number): Promise<void> {
  try {
    await docker.json('POST', `/containers/${id}/stop`, { query: { t: Math.ceil(graceMs / 1000) }, long: true });
  } catch (error) {
    // 304: not running; 404: gone
    if (!(error instanceof DockerApiError)) throw error;
  }
  await removeContainer(docker, id);
}

/** Removes the container with its volumes, running or not. */
export async function removeContainer(docker: DockerClient, id: string): Promise<void> {
  try {
    await docker.json('DELETE', `/containers/${id}`, { query: { force: 1, v: 1 } });
  } catch (error) {
    // already removed, or its removal is under way
    if (!(error instanceof DockerApiError)) throw error;
  }
}
