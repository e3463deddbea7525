/**
 * The local engine seen from the CLI, with the real binary: a busy engine is waited for, a hung
 * one fails clearly after the request timeout, many commands at once start one engine, and
 * `engine status` says by its exit code whether the engine runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, runBin, type BinResult, type Sandbox } from '../support/cli.js';
import { BIN, killEngineOf, requireBuilt, ROOT } from '../support/app.js';

beforeAll(() => requireBuilt());

const sandboxes: Sandbox[] = [];
const daemons: ChildProcess[] = [];
afterEach(async () => {
  for (const daemon of daemons.splice(0))
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
  for (const box of sandboxes.splice(0)) {
    killEngineOf(box.env.MCPCTL_HOME!);
    await box.cleanup();
  }
});

async function sandbox(extra: Record<string, string> = {}): Promise<Sandbox> {
  const box = await createSandbox(extra);
  sandboxes.push(box);
  await mkdir(box.env.MCPCTL_HOME!, { recursive: true });
  return box;
}

function mcpctl(box: Sandbox, args: string[], env: Record<string, string> = {}): Promise<BinResult> {
  return runBin(BIN, args, { env: { ...box.env, ...env }, cwd: box.dir });
}

/** Starts the stand-in engine for the sandbox's home and waits until its state file is written. */
async function slowEngine(box: Sandbox, healthDelayMs: number): Promise<ChildProcess> {
  // the argument is for the CLI's check that a pid is an engine (it reads the command line)
  const daemon = spawn(
    process.execPath,
    [join(ROOT, 'test', 'fixtures', 'local-engine', 'slow-daemon.mjs'), 'mcpctl-stand-in'],
    {
      env: { ...box.env, HEALTH_DELAY_MS: String(healthDelayMs) },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  daemons.push(daemon);
  await new Promise<void>((resolve, reject) => {
    daemon.stdout.once('data', () => resolve());
    daemon.once('exit', (code) => reject(new Error(`the stand-in engine exited with ${String(code)}`)));
  });
  return daemon;
}

describe('the local engine, from the CLI', () => {
  it('waits for an engine that runs but is slow to answer, instead of calling it unresponsive', async () => {
    const box = await sandbox();
    // slower than one health check waits at first, well within the request timeout
    await slowEngine(box, 4_000);
    const result = await mcpctl(box, ['ls', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ servers: [], deployments: [] });
    expect(result.stderr).toMatch(/the local engine \(pid \d+\) is slow to answer; waiting for it/);
  }, 60_000);

  it('an engine that runs but never answers fails once the request timeout is over, naming it', async () => {
    const box = await sandbox();
    await slowEngine(box, 600_000);
    const result = await mcpctl(box, ['ls', '--json'], { MCPCTL_REQUEST_TIMEOUT: '2' });
    expect(result.code).toBe(4);
    const { error } = JSON.parse(result.stdout);
    expect(error.code).toBe('engine_unresponsive');
    expect(error.message).toMatch(/runs but did not answer at http:\/\/127\.0\.0\.1:\d+ within 2 s/);
    expect(error.hint).toContain('--request-timeout');
  }, 60_000);

  it('engine status exits 4 when the engine does not run, 0 when it does', async () => {
    const box = await sandbox();
    const stopped = await mcpctl(box, ['engine', 'status', '--json']);
    expect(stopped.code).toBe(4);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ running: false });
    expect((await mcpctl(box, ['engine', 'status', '-q'])).stdout).toBe('stopped\n');

    await slowEngine(box, 0);
    const running = await mcpctl(box, ['engine', 'status', '-q']);
    expect(running.code).toBe(0);
    expect(running.stdout).toBe('running\n');
  }, 60_000);

  it('many commands at once with no engine running start one engine, and all of them use it', async () => {
    const box = await sandbox();
    const runs = await Promise.all(Array.from({ length: 8 }, () => mcpctl(box, ['ls', '--json'])));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const log = await readFile(join(box.env.MCPCTL_HOME!, 'engine.log'), 'utf8');
    // a second daemon would find the lock taken and say so in the log
    expect(log).not.toContain('another engine already runs');
    expect(log.split('\n').filter((line) => line.includes('"engine listening"'))).toHaveLength(1);
    expect((await mcpctl(box, ['engine', 'stop'])).code).toBe(0);
  }, 120_000);
});
