/**
 * A Docker daemon for the tests of the Docker runner and the image builder, and a base image with
 * `node` in it (no registry is reachable, so node:20-slim cannot be pulled).
 *
 * - DOCKER_HOST set (CI: .ci/run starts a daemon for the suite): that daemon is used, and the test
 *   removes what it created there.
 * - else, as root with dockerd installed: a daemon of the test file's own, with its data, exec root,
 *   socket and pid file in a temp folder and its own bridge (two daemons on one host must not share
 *   docker0), stopped by its pid at the end.
 * - else the tests are skipped with the reason in their name; in CI (CI=true) they run, and fail.
 *
 * The base image is this machine's node binary (process.execPath) and the libraries `ldd` lists,
 * imported as an image through the Engine API.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDockerClient, readProgress, type DockerClient } from '../../src/engine/runners/docker/engine-api.js';
import { tarStream } from '../../src/engine/runners/docker/tar.js';

const DOCKERD_CANDIDATES = ['/usr/sbin/dockerd', '/usr/bin/dockerd', '/usr/local/bin/dockerd'];
const dockerd = DOCKERD_CANDIDATES.find((path) => existsSync(path));
const givenHost =
  process.env.DOCKER_HOST !== undefined && process.env.DOCKER_HOST !== '' ? process.env.DOCKER_HOST : undefined;

/** Why the Docker tests cannot run here, or undefined when they can (always undefined in CI: there they must run). */
export const dockerSkipReason: string | undefined =
  process.env.CI === 'true' || givenHost !== undefined
    ? undefined
    : dockerd === undefined
      ? 'no Docker daemon: set DOCKER_HOST, or install dockerd (Debian: apt-get install docker.io) and run the tests as root'
      : process.getuid?.() !== 0
        ? 'no Docker daemon: set DOCKER_HOST, or run the tests as root so they can start dockerd'
        : undefined;

export interface TestDocker {
  /** the DOCKER_HOST value of the daemon */
  host: string;
  /** an environment with DOCKER_HOST */
  env: Record<string, string>;
  client: DockerClient;
  /** true when this file started the daemon (all it holds goes with it) */
  owned: boolean;
  /** stops the daemon when the test started it; closes the client */
  stop(): Promise<void>;
}

/** The daemon of DOCKER_HOST, or one started for this test file. */
export async function startTestDocker(): Promise<TestDocker> {
  if (givenHost !== undefined) {
    const client = createDockerClient({ DOCKER_HOST: givenHost });
    await waitForDaemon(client, 10_000, () => undefined);
    return { host: givenHost, env: { DOCKER_HOST: givenHost }, client, owned: false, stop: () => client.close() };
  }
  if (dockerd === undefined)
    throw new Error(dockerSkipReason ?? 'dockerd is not installed (Debian: apt-get install docker.io)');
  // short: the daemon's sockets live under it, and a socket path has at most 107 bytes
  const dir = await mkdtemp('/tmp/mcd-');
  const bridge = claimBridge();
  const socket = join(dir, 'docker.sock');
  const child = spawn(
    dockerd,
    [
      '--data-root',
      join(dir, 'data'),
      '--exec-root',
      join(dir, 'exec'),
      '--host',
      `unix://${socket}`,
      '--pidfile',
      join(dir, 'docker.pid'),
      `--bridge=${bridge.name}`,
      // no NAT for outbound traffic: nothing here needs it, and the host's iptables stay as they were
      '--iptables=false',
      '--ip-masq=false',
      '--ip-forward=false',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: false },
  );
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const host = `unix://${socket}`;
  const client = createDockerClient({ DOCKER_HOST: host });
  const stop = async () => {
    await client.close().catch(() => undefined);
    if (child.pid !== undefined && child.exitCode === null) {
      child.kill('SIGTERM');
      const gone = await Promise.race([exited.then(() => true), sleep(30_000, false)]);
      if (!gone) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    bridge.remove();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
  };
  try {
    await waitForDaemon(client, 30_000, () =>
      child.exitCode !== null ? `dockerd exited (${child.exitCode}): ${output.slice(-1500)}` : undefined,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { host, env: { DOCKER_HOST: host }, client, owned: true, stop };
}

async function waitForDaemon(client: DockerClient, timeoutMs: number, failed: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const reason = failed();
    if (reason !== undefined) throw new Error(reason);
    try {
      await client.json('GET', '/_ping');
      return;
    } catch (error) {
      last = error;
    }
    await sleep(200);
  }
  throw new Error(`the Docker daemon did not answer within ${timeoutMs / 1000} s: ${String(last)}`);
}

/** A bridge of its own (mcd<N>, 10.231.<N>.1/24): `ip link add` fails when another test took the name. */
function claimBridge(): { name: string; remove(): void } {
  const used = execFileSync('ip', ['-4', '-o', 'addr', 'show'], { encoding: 'utf8' });
  for (let n = 1; n < 250; n += 1) {
    const name = `mcd${n}`;
    if (used.includes(`10.231.${n}.`)) continue;
    try {
      execFileSync('ip', ['link', 'add', name, 'type', 'bridge'], { stdio: 'ignore' });
    } catch {
      continue;
    }
    execFileSync('ip', ['addr', 'add', `10.231.${n}.1/24`, 'dev', name]);
    execFileSync('ip', ['link', 'set', name, 'up']);
    return {
      name,
      remove: () => {
        try {
          execFileSync('ip', ['link', 'del', name], { stdio: 'ignore' });
        } catch {
          // gone already
        }
      },
    };
  }
  throw new Error('no free bridge name mcd1..mcd249 for a test Docker daemon');
}

/**
 * An image with this machine's node at /usr/local/bin/node and the libraries it links, tagged by
 * their content: a stand-in for node:20-slim. Resolves with its name.
 */
export async function ensureNodeBaseImage(client: DockerClient): Promise<string> {
  const files = [process.execPath, ...linkedLibraries(process.execPath)];
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file} ${readFileSync(file).length}\n`);
  hash.update(process.version);
  const image = `mcpctl-test-node:${hash.digest('hex').slice(0, 16)}`;
  try {
    await client.json('GET', `/images/${encodeURIComponent(image)}/json`);
    return image;
  } catch {
    // not there yet
  }
  const [repo, tag] = image.split(':');
  const stream = tarStream([
    { name: 'usr/local/bin/node', path: process.execPath },
    ...files.slice(1).map((file) => ({ name: file.replace(/^\//, ''), path: realFile(file) })),
  ]);
  const progress = await client.stream('POST', '/images/create', {
    query: { fromSrc: '-', repo, tag, changes: 'ENV PATH=/usr/local/bin:/usr/bin:/bin' },
    stream,
    long: true,
  });
  await readProgress(progress);
  return image;
}

function realFile(path: string): string {
  return execFileSync('readlink', ['-f', path], { encoding: 'utf8' }).trim();
}

/** The absolute paths `ldd` lists for a binary (the loader included). */
function linkedLibraries(binary: string): string[] {
  const output = execFileSync('ldd', [binary], { encoding: 'utf8' });
  const paths = new Set<string>();
  for (const line of output.split('\n')) {
    const match = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s*\(/.exec(line);
    if (match?.[1] !== undefined) paths.add(match[1]);
  }
  return [...paths];
}

/** Removes the containers whose labels match, and the images given; for a daemon the test did not start. */
export async function removeContainers(client: DockerClient, label: string): Promise<void> {
  const containers = await client.json<{ Id: string }[]>('GET', '/containers/json', {
    query: { all: 1, filters: JSON.stringify({ label: [label] }) },
  });
  for (const container of containers)
    await client.json('DELETE', `/containers/${container.Id}`, { query: { force: 1 } }).catch(() => undefined);
}

/**
 * Makes the daemon a single-node Swarm manager advertising 127.0.0.1 (`docker swarm init
 * --advertise-addr 127.0.0.1`), unless it already is one. `leave()` leaves the swarm only if this
 * call made it, so a daemon that was given (DOCKER_HOST) is left as it was found. Its networks come
 * from 10.232.0.0/16, away from the test daemons' bridges (10.231.N.0/24).
 */
export async function ensureSwarm(client: DockerClient): Promise<{ initialised: boolean; leave(): Promise<void> }> {
  const info = await client.json<{ Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } }>('GET', '/info');
  if (info.Swarm?.LocalNodeState === 'active') {
    if (info.Swarm.ControlAvailable !== true)
      throw new Error('the Docker daemon is a Swarm worker, not a manager: the Swarm tests need a manager');
    return { initialised: false, leave: () => Promise.resolve() };
  }
  // The tasks' gateway bridge, of this daemon's own and removed on leave. Made before the swarm:
  // otherwise Docker makes a `docker_gwbridge` link with 172.17.0.0/16, which every daemon shares.
  const tag = randomBytes(2).toString('hex');
  const existing = await client.json<{ Name: string }[]>('GET', '/networks', {
    query: { filters: JSON.stringify({ name: ['docker_gwbridge'] }) },
  });
  const ownBridge = existing.length === 0;
  if (ownBridge)
    await client.json('POST', '/networks/create', {
      json: {
        Name: 'docker_gwbridge',
        Driver: 'bridge',
        IPAM: { Config: [{ Subnet: `10.233.${1 + (parseInt(tag, 16) % 250)}.0/24` }] },
        Options: {
          'com.docker.network.bridge.name': `mcg${tag}`,
          'com.docker.network.bridge.enable_icc': 'false',
          'com.docker.network.bridge.enable_ip_masquerade': 'false',
        },
      },
    });
  const port = await freePort();
  await client.json('POST', '/swarm/init', {
    json: {
      ListenAddr: `127.0.0.1:${port}`,
      AdvertiseAddr: '127.0.0.1',
      DefaultAddrPool: ['10.232.0.0/16'],
      SubnetSize: 24,
    },
  });
  return {
    initialised: true,
    leave: async () => {
      await client.json('POST', '/swarm/leave', { query: { force: 1 } }).catch(() => undefined);
      if (ownBridge) await client.json('DELETE', '/networks/docker_gwbridge').catch(() => undefined);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
