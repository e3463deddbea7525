/**
 * The local engine, seen from the CLI: find the engine of this MCPCTL_HOME, start it in the
 * background when it is not running, stop it, report on it.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXIT, UserError } from '../shared/errors.js';
import { homePaths, resolveHome, type HomePaths } from '../engine/home.js';
import { ensureDir } from '../engine/store/atomic.js';
import {
  checkHealth,
  EXIT_ALREADY_RUNNING,
  isEngineProcess,
  readEngineState,
  removeEngineState,
  stopOrphans,
  type EngineState,
  type HealthResult,
  type UnreadableHealth,
} from '../engine/engine-lock.js';
import { SETTINGS } from '../shared/settings.js';
import { formatSeconds } from './render/format.js';
import { VERSION as cliVersion } from '../shared/version.js';
import { claimStart, lastError, rotateLog, spawnDaemon, START_GUARD, START_TIMEOUT_MS } from './engine-daemon.js';

export interface EnsureLocalEngineOptions {
  env: Record<string, string | undefined>;
  /** a short notice for the user (stderr), such as "starting the local engine…" */
  notice: (text: string) => void;
  /**
   * How long a running engine may take to answer before it counts as hung (default 30 s, the
   * request timeout). A loaded engine is waited for this long; a dead one is found at once.
   */
  patienceMs?: number;
}

export interface LocalEngine {
  url: string;
  apiKey: string;
  pid: number;
  /** true when this call started the engine */
  started: boolean;
  /** true while the engine's process runs */
  isAlive: () => boolean;
}

const STOP_TIMEOUT_MS = 15_000;
const DEFAULT_PATIENCE_MS = 30_000;

/** Returns the URL and key of the local engine, starting it in the background when it is not running. */
export async function ensureLocalEngine(options: EnsureLocalEngineOptions): Promise<LocalEngine> {
  const paths = homePaths(resolveHome(options.env));
  const patience = { patienceMs: options.patienceMs ?? DEFAULT_PATIENCE_MS, notice: options.notice };
  const running = await findRunningEngine(paths, patience);
  if (running !== undefined) {
    if (running.version !== cliVersion) {
      options.notice(
        `the local engine runs mcpctl ${running.version}, this is ${cliVersion}; restart it with \`mcpctl engine stop\``,
      );
    }
    return local(running, false);
  }
  options.notice('starting the local engine…');
  const started = await startBackgroundEngine(paths, options.env, patience);
  return local(started.state, started.started);
}

function local(state: EngineState, started: boolean): LocalEngine {
  return { url: state.url, apiKey: state.apiKey, pid: state.pid, started, isAlive: () => isEngineProcess(state.pid) };
}

export interface PatienceOptions {
  /** how long a running engine may take to answer */
  patienceMs?: number;
  /** said once, when the engine is slow to answer */
  notice?: (text: string) => void;
}

/**
 * The engine of this home when it runs and answers; a state file left by an engine that is gone
 * is removed. An engine whose process runs is given `patienceMs` to answer (it may be busy: a
 * loaded machine, many commands at once); one that runs but never answers is an error (never a
 * second engine).
 */
export async function findRunningEngine(
  paths: HomePaths,
  options: PatienceOptions = {},
): Promise<EngineState | undefined> {
  const state = await readEngineState(paths);
  if (state === undefined) return undefined;
  if (!isEngineProcess(state.pid)) {
    await forgetDeadEngine(paths, state);
    return undefined;
  }
  const health = await waitForHealth(state, options.patienceMs ?? DEFAULT_PATIENCE_MS, () => {
    options.notice?.(`the local engine (pid ${state.pid}) is slow to answer; waiting for it`);
  });
  if (health.ok) return state;
  if (!isEngineProcess(state.pid)) {
    await forgetDeadEngine(paths, state);
    return undefined;
  }
  throw unresponsive(state, health.reason, options.patienceMs ?? DEFAULT_PATIENCE_MS, paths);
}

/**
 * Asks the engine's health until it answers, its process ends, or `patienceMs` is over. Each try
 * waits longer than the one before, and none runs past the end.
 */
async function waitForHealth(state: EngineState, patienceMs: number, onSlow: () => void): Promise<HealthResult> {
  const deadline = Date.now() + patienceMs;
  let tryMs = 3_000;
  for (let attempt = 0; ; attempt += 1) {
    const result = await checkHealth(state.url, state.apiKey, Math.max(100, Math.min(tryMs, deadline - Date.now())));
    if (result.ok || !isEngineProcess(state.pid) || Date.now() >= deadline) return result;
    if (attempt === 0) onSlow();
    tryMs = Math.min(tryMs * 2, 15_000);
    await sleep(Math.min(300, Math.max(0, deadline - Date.now())));
  }
}

/** A wait in whole seconds, as durations are said everywhere: `2 s`, `1 min 30 s`. */
function waited(ms: number): string {
  return formatSeconds(Math.round(ms / 1000)) ?? '';
}

function unresponsive(state: EngineState, reason: string, patienceMs: number, paths: HomePaths): UserError {
  return new UserError(
    `the local engine (pid ${state.pid}) runs but did not answer at ${state.url} within ${waited(patienceMs)}: ${reason}`,
    {
      exitCode: EXIT.transient,
      code: 'engine_unresponsive',
      hint: `if it is only busy, wait longer with --request-timeout <seconds>; if it hangs, restart it with \`mcpctl engine stop\`; its log is ${paths.logFile}`,
    },
  );
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
      code === 'EEXIST'
        ? 'it is a file'
        : code === 'ENOTDIR'
          ? 'a part of its path is a file'
          : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
            ? 'it cannot be written'
            : (error as Error).message;
    throw new UserError(`cannot keep the engine's state in ${home}: ${why}`, {
      exitCode: EXIT.config,
      code: 'bad_home',
      hint: `set ${SETTINGS.home.env} to a folder you can write (or unset it for the default)`,
      cause: error,
    });
  }
}

/**
 * Starts the background engine of this home (idempotent) and waits until it answers. When many
 * commands find no engine at once, one of them starts it and the others wait for that one.
 */
export async function startBackgroundEngine(
  paths: HomePaths,
  env: Record<string, string | undefined>,
  options: PatienceOptions = {},
): Promise<StartResult> {
  const running = await findRunningEngine(paths, options);
  if (running !== undefined) return { state: running, started: false };
  await prepareHome(paths.home);
  const waitMs = Math.max(START_TIMEOUT_MS, options.patienceMs ?? 0);
  const deadline = Date.now() + waitMs;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawned = false;
  const guard = join(paths.home, START_GUARD);
  try {
    while (Date.now() < deadline) {
      const state = await readEngineState(paths);
      if (state !== undefined && isEngineProcess(state.pid)) {
        const health = await checkHealth(
          state.url,
          state.apiKey,
          Math.max(100, Math.min(5_000, deadline - Date.now())),
        );
        if (health.ok) return { state, started: spawned };
      }
      // Exit code 3: another start won the lock; keep waiting for that engine.
      if (exit !== undefined && exit.code !== EXIT_ALREADY_RUNNING) {
        const why =
          exit.signal === null ? `it exited with code ${String(exit.code)}` : `it was killed by ${exit.signal}`;
        throw new UserError(`the local engine did not start: ${why}${await lastError(paths.logFile)}`, {
          exitCode: EXIT.transient,
          code: 'engine_start_failed',
          hint: `read its log with \`mcpctl engine logs\` (${paths.logFile})`,
        });
      }
      if (!spawned && (await claimStart(guard))) {
        spawned = true;
        await rotateLog(paths.logFile);
        await spawnDaemon(paths, env, (code, signal) => {
          exit = { code, signal };
        });
      }
      await sleep(100);
    }
  } finally {
    if (spawned) await rm(guard, { force: true });
  }
  throw new UserError(`the local engine did not answer within ${waited(waitMs)} of starting`, {
    exitCode: EXIT.transient,
    code: 'engine_start_timeout',
    hint: `read its log with \`mcpctl engine logs\` (${paths.logFile}); on a busy machine, wait longer with --request-timeout <seconds>`,
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
  /** its HTTPS address, when it serves HTTPS */
  https_url?: string;
  pid?: number;
  version?: string;
  mode?: 'background' | 'foreground';
  /** what runs its deployments' instances */
  runner?: string;
  /** which environments run as Docker Swarm services, when the runner's host is a Swarm manager */
  swarm?: string;
  started_at?: string;
  uptime_seconds?: number;
  /** runtime processes loaded and waiting for a bundle */
  warm_pool?: { size: number; ready: number; warming: number };
  /** what its runtime processes run under: the sandbox, how resources are enforced, why either is missing */
  isolation?: { sandbox: string; limits: string; reasons: string[] };
  /** the store's files it could not read and moved aside, with where each goes back */
  unreadable_records?: UnreadableHealth[];
}

/** What `mcpctl engine status` shows: never the key. A running engine is given `patienceMs` to answer. */
export async function localEngineStatus(paths: HomePaths, options: PatienceOptions = {}): Promise<EngineStatus> {
  const base = { home: paths.home, log_file: paths.logFile };
  const state = await readEngineState(paths);
  if (state === undefined || !isEngineProcess(state.pid)) return { running: false, ...base };
  const patienceMs = options.patienceMs ?? DEFAULT_PATIENCE_MS;
  const health = await waitForHealth(state, patienceMs, () =>
    options.notice?.(`the local engine (pid ${state.pid}) is slow to answer; waiting for it`),
  );
  if (!health.ok) {
    if (!isEngineProcess(state.pid)) return { running: false, ...base };
    throw unresponsive(state, health.reason, patienceMs, paths);
  }
  return {
    running: true,
    ...base,
    url: state.url,
    ...(state.tlsUrl === undefined ? {} : { https_url: state.tlsUrl }),
    pid: state.pid,
    version: health.version,
    mode: state.mode,
    runner: state.runner ?? 'process',
    ...(state.swarm === undefined ? {} : { swarm: state.swarm }),
    started_at: state.startedAt,
    uptime_seconds: health.uptimeSeconds,
    ...(health.warmPool === undefined ? {} : { warm_pool: health.warmPool }),
    ...(health.isolation === undefined ? {} : { isolation: health.isolation }),
    ...(health.unreadable === undefined ? {} : { unreadable_records: health.unreadable }),
  };
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
