/**
 * The local engine, seen from the CLI: find the engine of this MCPCTL_HOME, start it in the
 * background when it is not running, stop it, report on it.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { EXIT, UserError } from '../cli/errors.js';
import { homePaths, resolveHome, type HomePaths } from './home.js';
import { ensureDir } from './store/atomic.js';
import { checkHealth, EXIT_ALREADY_RUNNING, isEngineProcess, readEngineState, removeEngineState, stopOrphans, type EngineState } from './state.js';

export interface EnsureLocalEngineOptions {
  env: Record<string, string | undefined>;
  /** a short notice for the user (stderr), such as "starting the local engine…" */
  notice: (text: string) => void;
}

export interface LocalEngine {
  url: string;
  apiKey: string;
  /** true when this call started the engine */
  started: boolean;
}

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;
/** The log is rotated (one old copy kept) when it passes this size at a start. */
const LOG_ROTATE_BYTES = 10 * 1024 * 1024;

const { version: cliVersion } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** Returns the URL and key of the local engine, starting it in the background when it is not running. */
export async function ensureLocalEngine(options: EnsureLocalEngineOptions): Promise<LocalEngine> {
  const paths = homePaths(resolveHome(options.env));
  const running = await findRunningEngine(paths);
  if (running !== undefined) {
    if (running.version !== cliVersion) {
      options.notice(`the local engine runs mcpctl ${running.version}, this is ${cliVersion}; restart it with \`mcpctl engine stop\``);
    }
    return { url: running.url, apiKey: running.apiKey, started: false };
  }
  options.notice('starting the local engine…');
  const started = await startBackgroundEngine(paths, options.env);
  return { url: started.state.url, apiKey: started.state.apiKey, started: started.started };
}

/**
 * The engine of this home when it runs and answers; a state file left by an engine that is gone
 * is removed. An engine that runs but does not answer is an error (never a second engine).
 */
export async function findRunningEngine(paths: HomePaths): Promise<EngineState | undefined> {
  const state = await readEngineState(paths);
  if (state === undefined) return undefined;
  if (!isEngineProcess(state.pid)) {
    await forgetDeadEngine(paths, state);
    return undefined;
  }
  // A busy engine may be slow to answer once: a few tries before it counts as hung.
  let reason = '';
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const health = await checkHealth(state.url, state.apiKey, 3_000);
    if (health.ok) return state;
    reason = health.reason;
    if (!isEngineProcess(state.pid)) {
      await forgetDeadEngine(paths, state);
      return undefined;
    }
    await sleep(300);
  }
  throw new UserError(`the local engine (pid ${state.pid}) runs but does not answer at ${state.url}: ${reason}`, {
    exitCode: EXIT.transient,
    code: 'engine_unresponsive',
    hint: `restart it with \`mcpctl engine stop\` and retry; its log is ${paths.logFile}`,
  });
}

export interface StartResult {
  state: EngineState;
  /** false when it was already running */
  started: boolean;
}

/** Creates the state folder; a path that cannot be one is the user's to fix, not a bug. */
export async function prepareHome(home: string): Promise<void> {
  try {
    await ensureDir(home);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST' ? 'it is a file' : code === 'ENOTDIR' ? 'a part of its path is a file' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'it cannot be written' : (error as Error).message;
    throw new UserError(`cannot keep the engine's state in ${home}: ${why}`, {
      code: 'bad_home',
      hint: 'set MCPCTL_HOME to a folder you can write (or unset it for the default)',
      cause: error,
    });
  }
}

/** Starts the background engine of this home (idempotent) and waits until it answers. */
export async function startBackgroundEngine(paths: HomePaths, env: Record<string, string | undefined>): Promise<StartResult> {
  const running = await findRunningEngine(paths);
  if (running !== undefined) return { state: running, started: false };
  await prepareHome(paths.home);
  await rotateLog(paths.logFile);
  const entry = daemonEntry();
  const logFd = openSync(paths.logFile, 'a', 0o600);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  try {
    // Detached, in its own folder, with no hold on this process's stdio: the CLI (and a CI job) can exit.
    const child = spawn(process.execPath, [entry], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      cwd: paths.home,
      env: { ...env, MCPCTL_HOME: paths.home },
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
    });
    child.once('error', (error) => {
      exit = { code: -1, signal: null };
      void error;
    });
    child.unref();
  } finally {
    closeSync(logFd);
  }

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const state = await readEngineState(paths);
    if (state !== undefined && isEngineProcess(state.pid)) {
      const health = await checkHealth(state.url, state.apiKey, 2_000);
      if (health.ok) return { state, started: true };
    }
    // Exit code 3: another start won the lock; keep waiting for that engine.
    if (exit !== undefined && exit.code !== EXIT_ALREADY_RUNNING) {
      const why = exit.signal === null ? `it exited with code ${String(exit.code)}` : `it was killed by ${exit.signal}`;
      throw new UserError(`the local engine did not start: ${why}${await lastError(paths.logFile)}`, {
        exitCode: EXIT.transient,
        code: 'engine_start_failed',
        hint: `read its log with \`mcpctl engine logs\` (${paths.logFile})`,
      });
    }
    await sleep(100);
  }
  throw new UserError(`the local engine did not answer within ${START_TIMEOUT_MS / 1000} s`, {
    exitCode: EXIT.transient,
    code: 'engine_start_timeout',
    hint: `read its log with \`mcpctl engine logs\` (${paths.logFile})`,
  });
}

export interface StopResult {
  /** false when no engine was running */
  stopped: boolean;
  pid?: number;
  /** true when it had to be killed after not stopping in time */
  forced?: boolean;
}

/** Asks the engine to stop (SIGTERM: it stops its deployments' processes and keeps their records), waits, cleans up. */
export async function stopLocalEngine(paths: HomePaths, timeoutMs = STOP_TIMEOUT_MS): Promise<StopResult> {
  const state = await readEngineState(paths);
  if (state === undefined) return { stopped: false };
  if (!isEngineProcess(state.pid)) {
    await forgetDeadEngine(paths, state);
    return { stopped: false };
  }
  process.kill(state.pid, 'SIGTERM');
  let forced = false;
  if (!(await waitForExit(state.pid, timeoutMs))) {
    forced = true;
    try {
      process.kill(state.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
    await waitForExit(state.pid, 5_000);
  }
  // A killed engine leaves its files; they belong to a dead pid now.
  await removeEngineState(paths, state.pid);
  const lock = await readFile(paths.lockFile, 'utf8').catch(() => '');
  if (lock.includes(`"pid":${state.pid}`)) await rm(paths.lockFile, { force: true });
  return { stopped: true, pid: state.pid, forced };
}

export interface EngineStatus {
  running: boolean;
  home: string;
  log_file: string;
  url?: string;
  pid?: number;
  version?: string;
  mode?: 'background' | 'foreground';
  started_at?: string;
  uptime_seconds?: number;
}

/** What `mcpctl engine status` shows: never the key. */
export async function localEngineStatus(paths: HomePaths): Promise<EngineStatus> {
  const base = { home: paths.home, log_file: paths.logFile };
  const state = await readEngineState(paths);
  if (state === undefined || !isEngineProcess(state.pid)) return { running: false, ...base };
  const health = await checkHealth(state.url, state.apiKey, 3_000);
  if (!health.ok) {
    throw new UserError(`the local engine (pid ${state.pid}) runs but does not answer at ${state.url}: ${health.reason}`, {
      exitCode: EXIT.transient,
      code: 'engine_unresponsive',
      hint: 'restart it with `mcpctl engine stop` and `mcpctl engine start`',
    });
  }
  return {
    running: true,
    ...base,
    url: state.url,
    pid: state.pid,
    version: health.version,
    mode: state.mode,
    started_at: state.startedAt,
    uptime_seconds: health.uptimeSeconds,
  };
}

/** The daemon's entry: beside this file when built; from a source checkout, the built copy. */
export function daemonEntry(): string {
  const beside = fileURLToPath(new URL('./daemon.js', import.meta.url));
  if (existsSync(beside)) return beside;
  const built = fileURLToPath(new URL('../../dist/engine/daemon.js', import.meta.url));
  if (existsSync(built)) return built;
  throw new UserError('the engine is not built: dist/engine/daemon.js is missing', { hint: 'run `npm run build` first' });
}

/** An engine that died without stopping (kill -9): stop the servers it left, remove its state file. */
async function forgetDeadEngine(paths: HomePaths, state: EngineState): Promise<void> {
  if (state.mode === 'background') stopOrphans(state.pid);
  await removeEngineState(paths, state.pid);
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isEngineProcess(pid)) return true;
    await sleep(100);
  }
  return !isEngineProcess(pid);
}

async function rotateLog(logFile: string): Promise<void> {
  const size = await stat(logFile).then(
    (s) => s.size,
    () => 0,
  );
  if (size > LOG_ROTATE_BYTES) await rename(logFile, `${logFile}.1`).catch(() => {});
}

/** The message of the last error line of the log, to say why a start failed. */
async function lastError(logFile: string): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const lines = text.trimEnd().split('\n').slice(-50).reverse();
  for (const line of lines) {
    try {
      const entry = JSON.parse(line) as { level?: unknown; msg?: unknown; error?: { message?: unknown } };
      if (entry.level === 'error') {
        const detail = typeof entry.error?.message === 'string' ? `: ${entry.error.message}` : '';
        return ` (${String(entry.msg)}${detail})`;
      }
    } catch {
      if (line.trim() !== '') return ` (${line.trim().slice(0, 300)})`;
    }
  }
  return '';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
