/**
 * End to end: the built `bin/mcpctl.cjs` manages a real background engine in a temp MCPCTL_HOME
 * (`engine start|status|logs|stop`, the start on demand of any command) and runs one in the
 * foreground (`serve`). Every test stops the engines it started; the state file's pid is killed
 * as a last resort. Needs `npm run build` first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, runBin, type BinResult, type Sandbox } from '../support/cli.js';
import { BIN, call, killEngineOf, requireBuilt, waitFor, weatherDefinition } from '../support/app.js';

beforeAll(() => requireBuilt());

const sandboxes: Sandbox[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const box of sandboxes.splice(0)) {
    killEngineOf(box.env.MCPCTL_HOME!);
    await box.cleanup();
  }
});
afterAll(() => {
  for (const box of sandboxes) killEngineOf(box.env.MCPCTL_HOME!);
});

async function sandbox(extra: Record<string, string> = {}): Promise<Sandbox> {
  const box = await createSandbox(extra);
  sandboxes.push(box);
  return box;
}

type Run = BinResult;

function mcpctl(box: Sandbox, args: string[], cwd = box.dir): Promise<Run> {
  // resolves on 'close', not 'exit': the CLI must not leave its streams to the daemon (a CI job would hang)
  return runBin(BIN, args, { env: box.env, cwd });
}

async function stateOf(box: Sandbox) {
  return JSON.parse(await readFile(join(box.env.MCPCTL_HOME!, 'engine.json'), 'utf8')) as {
    url: string;
    pid: number;
    port: number;
    apiKey: string;
    host: string;
  };
}

describe('mcpctl engine', () => {
  it('starts once, reports without the key, logs, and stops cleanly', async () => {
    const box = await sandbox();
    const home = box.env.MCPCTL_HOME!;
    const started = await mcpctl(box, ['engine', 'start', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const first = JSON.parse(started.stdout);
    expect(first).toMatchObject({ running: true, started: true, home });
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // idempotent: the same engine
    const again = JSON.parse((await mcpctl(box, ['engine', 'start', '--json'])).stdout);
    expect(again).toMatchObject({ started: false, pid: first.pid, url: first.url });

    const state = await stateOf(box);
    // it leads its own session, so it gives way to its instances on busy cores (Linux autogroups)
    if (existsSync('/proc/self/autogroup')) {
      expect(readFileSync(`/proc/${first.pid}/autogroup`, 'utf8')).toMatch(/ nice 5\n?$/);
      await waitFor('the priority line', async () =>
        (await readFile(join(home, 'engine.log'), 'utf8')).includes(
          'on busy cores the engine gives way to its instances',
        )
          ? true
          : undefined,
      );
    }
    expect((await stat(join(home, 'engine.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, 'engine-settings.json'))).mode & 0o777).toBe(0o600);
    expect(state.host).toBe('127.0.0.1');

    const status = await mcpctl(box, ['engine', 'status', '--json']);
    const shown = JSON.parse(status.stdout);
    expect(shown).toMatchObject({
      running: true,
      pid: first.pid,
      url: first.url,
      home,
      mode: 'background',
      version: expect.any(String),
    });
    expect(typeof shown.uptime_seconds).toBe('number');
    const human = await mcpctl(box, ['engine', 'status']);
    for (const output of [status.stdout, status.stderr, human.stdout, human.stderr])
      expect(output).not.toContain(state.apiKey);
    expect(human.stdout).toContain(first.url);

    expect((await call(state.url, 'GET', '/v1/servers', { key: null })).status).toBe(401);
    expect((await call(state.url, 'GET', '/v1/servers', { key: state.apiKey })).status).toBe(200);

    const logs = await mcpctl(box, ['engine', 'logs', '--json']);
    expect(JSON.parse(logs.stdout).lines.some((l: { msg?: string }) => l.msg === 'engine listening')).toBe(true);

    const stopped = await mcpctl(box, ['engine', 'stop', '--json']);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ stopped: true, pid: first.pid });
    expect(existsSync(join(home, 'engine.json'))).toBe(false);
    expect(existsSync(join(home, 'engine.lock'))).toBe(false);
    expect(JSON.parse((await mcpctl(box, ['engine', 'status', '--json'])).stdout).running).toBe(false);
    expect(JSON.parse((await mcpctl(box, ['engine', 'stop', '--json'])).stdout).stopped).toBe(false);

    // the next start keeps the port (and the key), so URLs stay the same
    const restarted = JSON.parse((await mcpctl(box, ['engine', 'start', '--json'])).stdout);
    expect(restarted.url).toBe(first.url);
    expect((await stateOf(box)).apiKey).toBe(state.apiKey);
    expect((await mcpctl(box, ['engine', 'stop'])).code).toBe(0);
  }, 60_000);

  it('follows its log until Ctrl-C', async () => {
    const box = await sandbox();
    expect((await mcpctl(box, ['engine', 'start'])).code).toBe(0);
    const state = await stateOf(box);
    const child = spawn(process.execPath, [BIN, 'engine', 'logs', '--follow', '--lines', '5'], {
      env: box.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    await waitFor('the first lines', () => (stdout.includes('engine listening') ? true : undefined));
    const answer = await call(state.url, 'GET', '/v1/servers', { key: state.apiKey });
    await waitFor('the new request line', () =>
      stdout.includes(answer.body.meta.request_id as string) ? true : undefined,
    );
    expect(stdout).toMatch(/info\s+request\s+.*path=\/v1\/servers/);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect((await mcpctl(box, ['engine', 'stop'])).code).toBe(0);
  }, 60_000);

  it('listens on loopback only', async () => {
    const box = await sandbox();
    expect((await mcpctl(box, ['engine', 'start'])).code).toBe(0);
    const state = await stateOf(box);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal);
    if (external !== undefined) {
      const outcome = await new Promise<string>((resolve) => {
        const socket = connect({ host: external.address, port: state.port });
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(outcome).toBe('ECONNREFUSED');
    } else {
      // no other interface here: the kernel's socket table says which address it is bound to
      const table = await readFile('/proc/net/tcp', 'utf8');
      const port = state.port.toString(16).toUpperCase().padStart(4, '0');
      expect(table).toContain(`0100007F:${port}`);
      expect(table).not.toContain(`00000000:${port}`);
    }
    expect((await mcpctl(box, ['engine', 'stop'])).code).toBe(0);
  }, 60_000);

  it('replaces a stale state file whose process is gone', async () => {
    const box = await sandbox();
    const home = box.env.MCPCTL_HOME!;
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('exit', resolve));
    await mcpctl(box, ['engine', 'status']); // creates nothing, must not fail
    const { mkdir } = await import('node:fs/promises');
    await mkdir(home, { recursive: true });
    await writeFile(
      join(home, 'engine.json'),
      JSON.stringify({
        url: 'http://127.0.0.1:9',
        pid: dead.pid,
        port: 9,
        apiKey: 'old',
        version: '0.0.1',
        startedAt: '',
        home,
        mode: 'background',
      }),
      { mode: 0o600 },
    );
    await writeFile(join(home, 'engine.lock'), JSON.stringify({ pid: dead.pid, at: '' }));
    expect(JSON.parse((await mcpctl(box, ['engine', 'status', '--json'])).stdout).running).toBe(false);
    const started = await mcpctl(box, ['engine', 'start', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const state = await stateOf(box);
    expect(state.pid).not.toBe(dead.pid);
    expect(state.apiKey).not.toBe('old');
    expect((await mcpctl(box, ['engine', 'stop'])).code).toBe(0);
  }, 60_000);

  it('is started on demand by a command that needs it, with a notice on stderr only', async () => {
    const box = await sandbox();
    const yaml = [
      'name: weather',
      'template: basic',
      'tools:',
      '  - name: get_forecast',
      '    description: Get the forecast for a city',
      '    inputSchema: { type: object, properties: { city: { type: string } }, required: [city] }',
      '    handler: { type: static, content: [{ type: text, text: "Sunny in {{args.city}}" }] }',
      '',
    ].join('\n');
    await writeFile(join(box.dir, 'weather.yaml'), yaml);
    const built = await mcpctl(box, ['build', 'weather.yaml', '--json']);
    expect(built.code, built.stderr).toBe(0);
    const server = JSON.parse(built.stdout);
    expect(server.mcp_id).toMatch(/^mcp_[a-z0-9]+$/);
    expect(server.status).toBe('ready');
    expect(built.stderr).toContain('starting the local engine');
    expect(built.stdout).not.toContain('starting the local engine');
    const status = JSON.parse((await mcpctl(box, ['engine', 'status', '--json'])).stdout);
    expect(status.running).toBe(true);
    // the second command finds it running: no notice
    const second = await mcpctl(box, ['build', 'weather.yaml', '--json']);
    expect(JSON.parse(second.stdout).mcp_id).toBe(server.mcp_id);
    expect(second.stderr).not.toContain('starting the local engine');
    expect((await mcpctl(box, ['engine', 'stop'])).code).toBe(0);
  }, 60_000);
});

describe('a state folder that cannot be one', () => {
  it('is a user error naming the path, for a command that starts the engine and for serve', async () => {
    const box = await sandbox();
    const file = join(box.dir, 'not-a-folder');
    await writeFile(file, 'x');
    for (const [home, why] of [
      [file, 'it is a file'],
      [join(file, 'home'), 'a part of its path is a file'],
    ] as const) {
      const env = { ...box.env, MCPCTL_HOME: home };
      for (const args of [['ls'], ['serve', '--port', '0']]) {
        const result = await mcpctl({ ...box, env }, args);
        // configuration: MCPCTL_HOME, not the command, is what to fix
        expect(result.code, result.stderr).toBe(3);
        expect(result.stderr).toContain(`error: cannot keep the engine's state in ${home}: ${why}`);
        expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
      }
    }
  }, 60_000);
});

/** `mcpctl serve --port 0` in the foreground, its output collected as it comes. */
function startServe(box: { env: Record<string, string | undefined> }) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env: box.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => (out.stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  /** the engine's URL, once it logs that it listens */
  const listening = async () => {
    const line = await waitFor('the listening line', () =>
      out.stdout.split('\n').find((l) => l.includes('"engine listening"')),
    );
    return (JSON.parse(line) as { url: string }).url;
  };
  return { child, out, exited, listening };
}

describe('mcpctl serve', () => {
  it('runs in the foreground: key printed once on stderr, JSON log lines on stdout, stops on SIGTERM', async () => {
    const box = await sandbox();
    const serve = startServe(box);
    const { child, out } = serve;
    const key = await waitFor('the key', () => /API key[^:]*: (\S+)/.exec(out.stderr)?.[1]);
    const url = await serve.listening();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // in the terminal's session: its scheduling group is the terminal's, and is left alone
    if (existsSync('/proc/self/autogroup'))
      expect(readFileSync(`/proc/${child.pid}/autogroup`, 'utf8')).toBe(readFileSync('/proc/self/autogroup', 'utf8'));
    expect((await call(url, 'GET', '/v1/health', { key: null })).status).toBe(401);
    const built = await call(url, 'POST', '/v1/build', { json: weatherDefinition(), key });
    expect(built.status).toBe(200);
    // the request is in the log, with its id
    await waitFor('the request log line', () => (out.stdout.includes(built.body.meta.request_id) ? true : undefined));
    expect(out.stderr.split(key).length - 1).toBe(1);
    // the local CLI finds this engine through the state file
    expect((await stateOf(box)).url).toBe(url);
    child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(existsSync(join(box.env.MCPCTL_HOME!, 'engine.json'))).toBe(false);
    for (const line of out.stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line) as unknown).not.toThrow();
  }, 60_000);

  it('takes the key from MCPCTL_API_KEY and does not print it', async () => {
    const key = 'serve-key-0123456789abcdefghijklmnop';
    const box = await sandbox({ MCPCTL_API_KEY: key });
    const serve = startServe(box);
    const { child, out } = serve;
    const url = await serve.listening();
    expect((await call(url, 'GET', '/v1/servers', { key })).status).toBe(200);
    expect(out.stderr).not.toContain(key);
    expect(out.stdout).not.toContain(key);
    child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  }, 60_000);

  it('stops cleanly, without a crash, when the reader of its log goes away (serve | head)', async () => {
    const key = 'serve-key-0123456789abcdefghijklmnop';
    const box = await sandbox({ MCPCTL_API_KEY: key });
    const serve = startServe(box);
    const { child, out } = serve;
    const url = await serve.listening();
    child.stdout.destroy();
    // the next log line meets a closed pipe
    await call(url, 'GET', '/v1/servers', { key }).catch(() => undefined);
    expect(await serve.exited).toBe(0);
    expect(out.stderr).not.toMatch(/EPIPE|Unhandled 'error' event/);
    expect(existsSync(join(box.env.MCPCTL_HOME!, 'engine.json'))).toBe(false);
  }, 60_000);

  it('refuses a non-loopback address without MCPCTL_API_KEY, a key of white space, and a home whose engine runs', async () => {
    const box = await sandbox();
    // configuration (the environment and MCPCTL_HOME), not the command: exit 3
    const refused = await mcpctl(box, ['serve', '--host', '0.0.0.0', '--port', '0']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('MCPCTL_API_KEY');
    const blank = await mcpctl(await sandbox({ MCPCTL_API_KEY: ' '.repeat(16) }), ['serve', '--port', '0']);
    expect(blank.code).toBe(3);
    expect(blank.stderr).toMatch(/MCPCTL_API_KEY cannot be used: it is empty or only white space/);
    expect((await mcpctl(box, ['engine', 'start'])).code).toBe(0);
    const busy = await mcpctl(box, ['serve', '--port', '0']);
    expect(busy.code).toBe(3);
    expect(busy.stderr).toMatch(/another engine runs/);
    expect((await mcpctl(box, ['engine', 'stop'])).code).toBe(0);
  }, 60_000);
});
