/**
 * The runtime as its own process (`serve-bundle.js`, from the build output): it reports its port,
 * serves MCP and health, logs JSON lines, drains in-flight requests on SIGTERM and exits 0, and a
 * start that cannot work fails with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { spawnWarmRuntimeProcess, startRuntimeProcess, RuntimeProcessError } from '../../src/runtime/host/process.js';
import { sessionOf } from '../../src/engine/cpu-priority.js';
import { staleSocket } from '../support/http.js';
import { FIXTURES, bundleDefinition, connect, firstText, makeTempDir } from '../support/runtime.js';
import { waitUntil } from '../support/wait.js';
import { findSandbox } from '../../src/runtime/host/sandbox.js';
import { isProcessAlive } from '../../src/engine/engine-lock.js';
import { RUNTIME_NODE_FLAGS } from '../../src/runtime/host/node-flags.js';

const hasBubblewrap = findSandbox('auto', { home: '/nonexistent' }).sandbox !== undefined;

let temp: Awaited<ReturnType<typeof makeTempDir>>;
let bundleDir: string;

beforeAll(async () => {
  temp = await makeTempDir();
  ({ dir: bundleDir } = await bundleDefinition(join(FIXTURES, 'slow', 'server.yaml'), join(temp.path, 'bundles')));
});

afterAll(async () => {
  await temp?.[Symbol.asyncDispose]();
});

/** A process that exited but was not reaped (this machine's pid 1 does not reap orphans). */
function isZombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A GET of `path` over a Unix socket, with the Host header of the port: its status and body. */
function getOverSocket(socketPath: string, port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = get({ socketPath, path, headers: { host: `127.0.0.1:${port}` }, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
}

describe('serve-bundle', () => {
  it('reports its port, serves MCP and health, and logs JSON lines', async () => {
    const lines: string[] = [];
    await using runtime = await startRuntimeProcess({
      bundleDir,
      env: { SLOW_API_KEY: 'key-12345' },
      onLog: (line) => lines.push(line),
    });
    expect(runtime.mcpUrl).toBe(`http://127.0.0.1:${runtime.port}/mcp`);
    expect(runtime.healthUrl).toBe(`http://127.0.0.1:${runtime.port}/health`);
    const health = (await (await fetch(runtime.healthUrl)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', name: 'slow', version: '0.1.0', tools: 2, resources: 0, prompts: 0 });
    // in a session of its own (on Linux its own scheduling group, which the engine's lower priority does not reach)
    if (existsSync('/proc/self/stat'))
      expect(sessionOf(readFileSync(`/proc/${runtime.pid}/stat`, 'utf8'))).toBe(runtime.pid);

    await using client = await connect(runtime.mcpUrl);
    const started = join(temp.path, 'quick.started');
    expect(firstText(await client.callTool({ name: 'wait', arguments: { ms: 1, startedFile: started } }))).toBe(
      'waited 1 ms',
    );
    await waitUntil('the request log line', () => lines.some((line) => line.includes('"rpc":"tools/call"')));
    const entry = JSON.parse(lines.find((line) => line.includes('"rpc":"tools/call"'))!) as Record<string, unknown>;
    expect(entry).toMatchObject({
      level: 'info',
      event: 'request',
      status: 200,
      target: 'wait',
      time: expect.any(String),
    });
    // the health check that passed, before the call, left no line
    expect(lines.filter((line) => line.includes('"path":"/health"'))).toEqual([]);
  });

  it('with --socket, also serves on that Unix socket (a stale file there replaced), and removes it when it stops', async () => {
    const socketPath = join(temp.path, 'cold.sock');
    await staleSocket(socketPath);
    expect(lstatSync(socketPath).isSocket()).toBe(true);
    const runtime = await startRuntimeProcess({ bundleDir, env: { SLOW_API_KEY: 'key-12345' }, socketPath });
    try {
      expect(runtime.socketPath).toBe(socketPath);
      const overSocket = await getOverSocket(socketPath, runtime.port, '/health');
      expect(overSocket.status).toBe(200);
      expect(JSON.parse(overSocket.body)).toMatchObject({ status: 'ok', name: 'slow' });
      // the port serves as before
      expect((await fetch(runtime.healthUrl)).status).toBe(200);
    } finally {
      await runtime.stop();
    }
    expect(await runtime.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(socketPath)).toBe(false);
  });

  it('serves on its port only, and says why, when it cannot listen on the socket it was given', async () => {
    const lines: string[] = [];
    const notASocket = join(temp.path, 'plain-file');
    writeFileSync(notASocket, 'kept');
    for (const socketPath of [join(temp.path, 'no-such-folder', 'x.sock'), notASocket]) {
      await using runtime = await startRuntimeProcess({
        bundleDir,
        env: { SLOW_API_KEY: 'key-12345' },
        socketPath,
        onLog: (line) => lines.push(line),
      });
      expect(runtime.socketPath).toBeUndefined();
      expect((await fetch(runtime.healthUrl)).status).toBe(200);
      await waitUntil('the warning', () =>
        lines.some((line) => line.includes('"event":"socket_failed"') && line.includes(JSON.stringify(socketPath))),
      );
    }
    // a file that is not a socket is left as it was
    expect(readFileSync(notASocket, 'utf8')).toBe('kept');
  });

  it('keeps an idle connection open far longer than the engine keeps its own (4 s)', async () => {
    // The engine's idle timers run late on a busy machine: a connection the instance closed at
    // 5 s could take a request at that very moment, and a tool call sent on it was lost (502).
    await using runtime = await startRuntimeProcess({ bundleDir, env: { SLOW_API_KEY: 'key-12345' } });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const health = (): Promise<{ status: number; reused: boolean; keepAlive: string }> =>
        new Promise((resolve, reject) => {
          const request = get(runtime.healthUrl, { agent }, (response) => {
            response.resume();
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                reused: request.reusedSocket,
                keepAlive: String(response.headers['keep-alive']),
              }),
            );
          });
          request.on('error', reject);
        });
      expect(await health()).toEqual({ status: 200, reused: false, keepAlive: 'timeout=65' });
      // past the 5 s it used to keep one, with time to spare
      await sleep(6_500);
      expect(await health()).toMatchObject({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('finishes in-flight requests on SIGTERM, refuses new ones, and exits 0', async () => {
    const lines: string[] = [];
    const runtime = await startRuntimeProcess({
      bundleDir,
      env: { SLOW_API_KEY: 'key-12345' },
      onLog: (line) => lines.push(line),
    });
    try {
      await using client = await connect(runtime.mcpUrl);
      const startedFile = join(temp.path, 'slow.started');
      const call = client.callTool({ name: 'wait', arguments: { ms: 3000, startedFile } });
      await waitUntil('the tool to start', () => existsSync(startedFile));
      const stopping = runtime.stop(20_000);
      await waitUntil('draining', () => lines.some((line) => line.includes('"event":"draining"')));
      // the listening socket is closed: a new connection is refused, or answered 503 while draining
      const late = await fetch(runtime.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: '{}',
      }).then(
        (response) => response.status,
        () => 'refused',
      );
      expect([503, 'refused']).toContain(late);
      expect(firstText(await call)).toBe('waited 3000 ms');
      await stopping;
      expect(await runtime.exited).toEqual({ code: 0, signal: null });
      expect(lines.map((line) => (JSON.parse(line) as { event?: string }).event)).toContain('stopped');
      expect(lines.find((line) => line.includes('"event":"stopped"'))).toContain('"drained":true');
    } finally {
      await runtime.stop(1000);
    }
  });

  it.skipIf(!hasBubblewrap)(
    'in its sandbox, is gone itself (not only bwrap) once a stop that outlasted its grace resolves',
    async () => {
      const home = join(temp.path, 'sandbox-home');
      const { sandbox } = findSandbox('auto', { home });
      const runtime = await startRuntimeProcess({
        bundleDir,
        env: { SLOW_API_KEY: 'key-12345' },
        isolation: { sandbox: sandbox! },
      });
      try {
        await using client = await connect(runtime.mcpUrl);
        // the call (its file goes to the sandbox's own /tmp) holds the drain open well past the
        // grace, so the stop ends in SIGKILL
        const call = client
          .callTool({ name: 'wait', arguments: { ms: 30_000, startedFile: '/tmp/started' } })
          .catch(() => undefined);
        await sleep(300);
        await runtime.stop(100);
        expect(isProcessAlive(runtime.pid)).toBe(false);
        await call;
      } finally {
        await runtime.stop(100);
      }
    },
  );

  it('exits by itself when its supervisor is killed with SIGKILL', async () => {
    // A stand-in supervisor: starts the server, prints its pid, then waits to be killed.
    const supervisor = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { startRuntimeProcess } = await import(${JSON.stringify(join(import.meta.dirname, '../../dist/runtime/host/process.js'))});
         const child = await startRuntimeProcess({ bundleDir: ${JSON.stringify(bundleDir)}, env: { SLOW_API_KEY: 'key-12345' } });
         process.stdout.write(child.pid + '\\n');
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const pid = Number(
      await new Promise<string>((resolve) => createInterface({ input: supervisor.stdout }).once('line', resolve)),
    );
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    supervisor.kill('SIGKILL');
    try {
      await waitUntil('the orphaned server to exit', () => !alive() || isZombie(pid));
    } finally {
      if (alive() && !isZombie(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('with --lifeline, drains and exits when the end of its standard input closes; without, it keeps serving', async () => {
    const entry = join(import.meta.dirname, '../../dist/serve/serve-bundle.js');
    const start = (lifeline: boolean) => {
      const args = [entry, '--bundle', bundleDir, ...(lifeline ? ['--lifeline'] : [])];
      const child = spawn(process.execPath, args, {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { PATH: process.env.PATH ?? '', SLOW_API_KEY: 'key-12345' },
      });
      const events: { event?: string; signal?: string; port?: number }[] = [];
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const port = new Promise<number>((resolve) =>
        createInterface({ input: child.stdout }).on('line', (line) => {
          const event = JSON.parse(line) as { event?: string; signal?: string; port?: number };
          events.push(event);
          if (event.event === 'listening') resolve(event.port!);
        }),
      );
      return { child, events, exited, port };
    };
    const held = start(true);
    const plain = start(false);
    try {
      const [, plainPort] = await Promise.all([held.port, plain.port]);
      held.child.stdin.end();
      plain.child.stdin.end();
      expect(await held.exited).toBe(0);
      expect(held.events).toContainEqual(expect.objectContaining({ event: 'draining', signal: 'stdin-closed' }));
      // the one started without it still answers once its standard input has ended
      expect((await fetch(`http://127.0.0.1:${plainPort}/health`)).status).toBe(200);
      expect(plain.child.exitCode).toBeNull();
    } finally {
      for (const { child } of [held, plain]) if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('fails to start with the missing variable named', async () => {
    const start = startRuntimeProcess({ bundleDir, env: {} });
    await expect(start).rejects.toBeInstanceOf(RuntimeProcessError);
    await expect(start).rejects.toThrow(
      /SLOW_API_KEY is not set \(used by tools\[1\]\.handler\.headers\.Authorization\)/,
    );
    // the runtime's own report: one line (it becomes a deployment's reason), its problems apart
    const error = (await start.catch((e: unknown) => e)) as RuntimeProcessError;
    expect(error.message).not.toContain('\n');
    expect(error.problems).toEqual([expect.stringMatching(/SLOW_API_KEY is not set/)]);
  });

  it('reports why it cannot start as data: a start_failed line with { path, message } problems', async () => {
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, '../../dist/runtime/serve-bundle.js'), '--bundle', bundleDir],
      {
        env: {},
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
    expect(await exited).toBe(1);
    const event = JSON.parse(line) as { event: string; problems: unknown[] };
    expect(event.event).toBe('start_failed');
    expect(event.problems).toEqual([{ message: expect.stringMatching(/SLOW_API_KEY is not set/) }]);
  });

  it('fails to start from a folder that is not a bundle', async () => {
    await expect(startRuntimeProcess({ bundleDir: temp.path })).rejects.toThrow(/is not a bundle/);
  });
});

/** The Node options a process was started with, before its entry file (Linux: /proc). */
function nodeOptionsOf(pid: number): string[] {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return argv.slice(
    1,
    argv.findIndex((arg) => arg.endsWith('serve-bundle.js')),
  );
}

describe('the Node options of a runtime process', () => {
  it.skipIf(process.platform !== 'linux')("are the runtime's own (node-flags.ts), cold and warm", async () => {
    await using cold = await startRuntimeProcess({ bundleDir, env: { SLOW_API_KEY: 'key-12345' } });
    expect(nodeOptionsOf(cold.pid)).toEqual(RUNTIME_NODE_FLAGS);
    const warm = spawnWarmRuntimeProcess({});
    await warm.ready;
    await using served = await warm.serve({ bundleDir, env: { SLOW_API_KEY: 'key-12345' } });
    expect(nodeOptionsOf(served.pid)).toEqual(RUNTIME_NODE_FLAGS);
  });
});

describe('serve-bundle --warm', () => {
  it('loads, then serves the one bundle it is given with that environment only, and refuses a second', async () => {
    const warm = spawnWarmRuntimeProcess({ env: { WAITING_LABEL: 'only-while-waiting' } });
    await warm.ready;
    await using runtime = await warm.serve({ bundleDir, env: { SLOW_API_KEY: 'key-12345' } });
    expect(runtime.pid).toBe(warm.pid);
    const health = (await (await fetch(runtime.healthUrl)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', name: 'slow', tools: 2 });
    expect(runtime.socketPath).toBeUndefined();
    await expect(warm.serve({ bundleDir, env: { SLOW_API_KEY: 'key-12345' } })).rejects.toThrow(/one bundle only/);
    await runtime.stop();
    expect(await runtime.exited).toEqual({ code: 0, signal: null });
  });

  it('listens on the Unix socket it is given with its bundle, and removes it when it stops', async () => {
    const warm = spawnWarmRuntimeProcess({});
    await warm.ready;
    const socketPath = join(temp.path, 'warm.sock');
    const runtime = await warm.serve({ bundleDir, env: { SLOW_API_KEY: 'key-12345' }, socketPath });
    try {
      expect(runtime.socketPath).toBe(socketPath);
      expect((await getOverSocket(socketPath, runtime.port, '/health')).status).toBe(200);
    } finally {
      await runtime.stop();
    }
    expect(existsSync(socketPath)).toBe(false);
  });

  it('fails with the reasons a cold start gives, from the environment it was given', async () => {
    const warm = spawnWarmRuntimeProcess({ env: { SLOW_API_KEY: 'set-while-waiting' } });
    await warm.ready;
    // the variable of the waiting process is gone once it is given its own environment
    const error = (await warm.serve({ bundleDir, env: {} }).catch((e: unknown) => e)) as RuntimeProcessError;
    expect(error).toBeInstanceOf(RuntimeProcessError);
    expect(error.kind).toBe('refused');
    expect(error.problems).toEqual([expect.stringMatching(/SLOW_API_KEY is not set/)]);
  });

  it('exits when its standard input ends before it was given a bundle, and with its supervisor', async () => {
    const supervisor = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { spawnWarmRuntimeProcess } = await import(${JSON.stringify(join(import.meta.dirname, '../../dist/runtime/host/process.js'))});
         const warm = spawnWarmRuntimeProcess({});
         await warm.ready;
         process.stdout.write(warm.pid + '\\n');
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const pid = Number(
      await new Promise<string>((resolve) => createInterface({ input: supervisor.stdout }).once('line', resolve)),
    );
    const alive = () => {
      try {
        process.kill(pid, 0);
        return !isZombie(pid);
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    supervisor.kill('SIGKILL');
    try {
      await waitUntil('the waiting process to exit', () => !alive());
    } finally {
      if (alive()) process.kill(pid, 'SIGKILL');
    }
  });
});
