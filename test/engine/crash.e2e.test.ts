/**
 * Persistence under `kill -9`: a process writing records is killed at random moments, and the
 * background engine is killed while it builds and while it serves a deployment. Afterwards every
 * record a client was told about is there, whole and readable, and the engine comes back with
 * the same deployment ids and URLs. Needs the built daemon (npx tsc -p tsconfig.build.json).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEngine } from '../../src/engine/engine.js';
import { silentLogger } from '../../src/engine/engine-log.js';
import { FileStore } from '../../src/engine/store/file-store.js';
import { isProcessAlive } from '../../src/engine/engine-lock.js';
import { BIN, call, killEngineOf, requireBuilt, ROOT, tempHome, waitFor, weatherDefinition } from '../support/app.js';
import { spawnDaemon, waitForDaemon, type DaemonState } from '../support/daemon.js';

beforeAll(() => requireBuilt());

const homes: Array<{ dir: string; cleanup(): Promise<void> }> = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const home of homes.splice(0)) {
    killEngineOf(home.dir);
    await home.cleanup();
  }
});
afterAll(() => {
  for (const home of homes) killEngineOf(home.dir);
});

async function newHome() {
  const home = await tempHome('mcpctl-crash-');
  homes.push(home);
  return home.dir;
}

/** Writes records as fast as it can; prints "ok <id> <n>" once each write has returned. */
const WRITER = `
const { FileStore } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/engine/store/file-store.js')).href)});
const [dir, startArg] = process.argv.slice(1);
const store = await FileStore.open({ dir });
const payload = 'x'.repeat(20000);
for (let n = Number(startArg); ; n += 1) {
  const id = 'mcp_r' + (n % 16);
  await store.putServer({
    server: { mcp_id: id, name: 'v' + n, status: 'ready', url: 'http://x/v1/servers/' + id, build_time: n, created_at: new Date().toISOString() },
    bundleDir: '/b', digest: 'd' + n, definition: { name: 'v' + n, template: 'basic', description: payload },
  });
  process.stdout.write('ok ' + id + ' ' + n + '\\n');
}`;

describe('the file store under kill -9', () => {
  it('never leaves a torn record, and keeps every write it acknowledged', async () => {
    const dir = join(await newHome(), 'store');
    const acknowledged = new Map<string, number>();
    let next = 0;
    for (let round = 0; round < 6; round += 1) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER, dir, String(next)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      let buffered = '';
      let count = 0;
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          const [, id, n] = line.split(' ');
          acknowledged.set(id!, Number(n));
          next = Math.max(next, Number(n) + 1);
          count += 1;
        }
      });
      // Kill it at a different point of its write loop each round, once it has written something.
      await waitFor('the writer to write', () => (count > 3 + round * 7 ? true : undefined), 20_000);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;

      // Every file is whole JSON; opening removes the unfinished temporary files.
      const store = await FileStore.open({ dir });
      const names = await readdir(join(dir, 'servers'));
      expect(names.every((name) => /^mcp_r\d+\.json$/.test(name))).toBe(true);
      for (const name of names) JSON.parse(await readFile(join(dir, 'servers', name), 'utf8'));
      for (const [id, n] of acknowledged) {
        const record = await store.getServer(id);
        expect(record, id).toBeDefined();
        // the acknowledged version, or one written after it before the kill
        expect(Number(record!.server.name.slice(1)), id).toBeGreaterThanOrEqual(n);
        expect(record!.definition.description).toHaveLength(20_000);
      }
      await store.close();
    }
    expect(acknowledged.size).toBe(16);
  }, 90_000);
});

function startDaemon(home: string): ChildProcess {
  return spawnDaemon({ PATH: process.env.PATH, MCPCTL_HOME: home, MCPCTL_RATE_LIMIT: '0' }, children);
}

function engineState(home: string): Promise<DaemonState> {
  return waitForDaemon(home, 15_000);
}

describe('the background engine under kill -9', () => {
  it('keeps every server it answered for when killed in the middle of builds', async () => {
    const home = await newHome();
    const first = startDaemon(home);
    const state = await engineState(home);
    const built = new Set<string>();
    let stop = false;
    const builder = async (worker: number) => {
      for (let i = 0; !stop; i += 1) {
        const answer = await call(state.url, 'POST', '/v1/build', {
          json: weatherDefinition(`crash-${worker}-${i}`),
          key: state.apiKey,
        }).catch(() => undefined);
        if (answer?.status === 200) built.add(answer.body.data.mcp_id);
      }
    };
    const workers = [0, 1, 2].map(builder);
    await waitFor('a few builds', () => (built.size >= 4 ? true : undefined), 60_000);
    // The daemon leads its process group: the group kill also takes the servers of builds in progress.
    process.kill(-first.pid!, 'SIGKILL');
    stop = true;
    await Promise.all(workers);

    startDaemon(home);
    const again = await engineState(home);
    expect(again.url).toBe(state.url);
    const list = await call(again.url, 'GET', '/v1/servers', { key: again.apiKey });
    const ids = new Set(list.body.data.servers.map((s: { mcp_id: string }) => s.mcp_id));
    for (const id of built) {
      expect(ids.has(id), id).toBe(true);
      const one = await call(again.url, 'GET', `/v1/servers/${id}`, { key: again.apiKey });
      expect(one.status).toBe(200);
      expect(one.body.data.status).toBe('ready');
    }
  }, 90_000);

  it('comes back after kill -9 with any command: same deployment id and URL, the old servers stopped', async () => {
    const home = await newHome();
    const env = { PATH: process.env.PATH!, MCPCTL_HOME: home };
    const cli = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
      });
    expect((await cli(['engine', 'start'])).code).toBe(0);
    const state = await engineState(home);
    const built = await call(state.url, 'POST', '/v1/build', { json: weatherDefinition(), key: state.apiKey });
    const deployed = await call(state.url, 'POST', '/v1/deploy', {
      json: { mcp_id: built.body.data.mcp_id, environment: 'development' },
      key: state.apiKey,
    });
    expect(deployed.status).toBe(200);
    const deployment = deployed.body.data;
    const oldInstancePid = deployment.instances[0].pid as number;

    process.kill(state.pid, 'SIGKILL');
    await waitFor('the engine to die', () => (isProcessAlive(state.pid) ? undefined : true));

    const status = await cli(['engine', 'status', '--json']);
    expect(JSON.parse(status.stdout).running).toBe(false);
    // any command brings it back (its exit code follows the deployment, which may still be restarting)
    const shown = await cli(['--json', 'status', deployment.deployment_id]);
    expect(shown.stderr).toContain('starting the local engine');
    expect(JSON.parse(shown.stdout).deployment_id, shown.stdout).toBe(deployment.deployment_id);
    const again = await engineState(home);
    expect(again.pid).not.toBe(state.pid);
    const restored = await waitFor(
      'the deployment to be restored',
      async () => {
        const answer = await call(again.url, 'GET', `/v1/deploy/${deployment.deployment_id}/status`, {
          key: again.apiKey,
        });
        const data = answer.body?.data as
          { status: string; url: string; instances?: Array<{ state: string }> } | undefined;
        return data?.status === 'deployed' && data.instances?.some((i) => i.state === 'healthy') ? data : undefined;
      },
      60_000,
    );
    expect(restored.url).toBe(deployment.url);
    expect((await fetch(`${deployment.url}/health`)).status).toBe(200);
    // the server process the killed engine left behind was stopped, not leaked
    await waitFor('the orphaned server to stop', () => (isProcessAlive(oldInstancePid) ? undefined : true));
    expect((await cli(['engine', 'stop'])).code).toBe(0);
  }, 90_000);
});

/** POSTs JSON and resolves with the status as soon as the answer's head arrives, body unread. */
function postForStatus(url: string, apiKey: string, body: unknown, onHead: () => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      },
    });
    req.on('response', (res) => {
      onHead();
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(text);
  });
}

describe('acknowledged deployments under kill -9', () => {
  it('keeps every deployment the engine answered 200 deployed for, when killed at that answer', async () => {
    const home = await newHome();
    let daemon = startDaemon(home);
    let state = await engineState(home);
    const trials = 3;
    const ids: string[] = [];
    for (let trial = 0; trial < trials; trial += 1) {
      const built = await call(state.url, 'POST', '/v1/build', {
        json: weatherDefinition(`ack-${trial}`),
        key: state.apiKey,
      });
      expect(built.status, built.text).toBe(200);
      // Killed the moment the answer's head arrives: the record must already be on disk.
      const pid = daemon.pid!;
      const status = await postForStatus(
        `${state.url}/v1/deploy`,
        state.apiKey,
        { mcp_id: built.body.data.mcp_id, environment: 'development' },
        () => process.kill(-pid, 'SIGKILL'),
      );
      expect(status).toBe(200);
      await waitFor('the engine to die', () => (isProcessAlive(pid) ? undefined : true));
      daemon = startDaemon(home);
      state = await engineState(home);
      const list = await call(state.url, 'GET', '/v1/deployments', { key: state.apiKey });
      const newest = list.body.data.deployments.find((d: { mcp_id: string }) => d.mcp_id === built.body.data.mcp_id);
      ids.push(newest.deployment_id);
      expect(newest.status, JSON.stringify(newest)).toBe('deployed');
    }
    expect(new Set(ids).size).toBe(trials);
  }, 120_000);
});

describe('what a crash leaves half-written', () => {
  it('is removed at the next start: temporary state files, store files and unfinished bundles', async () => {
    const home = await newHome();
    const planted = [
      join(home, '.engine.json.4242.0a1b2c3d.tmp'),
      join(home, '.engine-settings.json.4242.0a1b2c3d.tmp'),
      join(home, 'store', '.meta.json.4242.0a1b2c3d.tmp'),
      join(home, 'store', 'deployments', '.deploy_x.json.4242.0a1b2c3d.tmp'),
    ];
    await mkdir(join(home, 'store', 'deployments'), { recursive: true });
    for (const file of planted) await writeFile(file, '');
    await mkdir(join(home, 'bundles', '.tmp-0123456789ab-XyZ123', 'files'), { recursive: true });
    await writeFile(join(home, 'bundles', '.tmp-0123456789ab-XyZ123', 'definition.json'), '{"name":');
    const engine = await startEngine({
      home,
      host: '127.0.0.1',
      port: 0,
      apiKey: 'test-key-0123456789abcdef0123456789',
      version: '0.0.0-test',
      logger: silentLogger,
      env: {},
      deployments: false,
      tests: false,
    });
    try {
      const left = [
        ...(await readdir(home)),
        ...(await readdir(join(home, 'store'))),
        ...(await readdir(join(home, 'store', 'deployments'))),
        ...(await readdir(join(home, 'bundles'))),
      ];
      expect(left.filter((name) => name.endsWith('.tmp') || name.startsWith('.tmp-'))).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});
