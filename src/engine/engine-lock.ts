/**
 * The files that tie a home to its one running engine: the lock, the state file (address, pid,
 * key; mode 0600) and the settings kept across restarts (key, port). Plus the checks that tell a
 * live engine from a stale record: is the process there, is it ours, does it answer. The state
 * file is trusted only when it is the current user's alone (file-modes.ts).
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { open, readFile, rm, stat } from 'node:fs/promises';
import type { HomePaths } from './home.js';
import { checkPrivatePath, privatePathHint } from './file-modes.js';
import { EXIT, UserError } from '../shared/errors.js';
import { syncDir, writeFileAtomic } from './store/atomic.js';
import { dirname } from 'node:path';
import {
  readIsolation,
  readUnreadable,
  readWarmPool,
  type IsolationHealth,
  type UnreadableHealth,
  type WarmPoolHealth,
} from './health-fields.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** Exit code of a daemon that found another engine already running for its home. */
export const EXIT_ALREADY_RUNNING = 3;

export interface EngineState {
  url: string;
  pid: number;
  port: number;
  host: string;
  apiKey: string;
  version: string;
  startedAt: string;
  home: string;
  /** `background` for `mcpctl engine start`, `foreground` for `mcpctl serve` */
  mode: 'background' | 'foreground';
  /** what runs its deployments' instances: `process` or `docker` */
  runner?: string;
  /** when the runner hands some environments to Docker Swarm: which, and how (`production as Swarm services (spread over …)`) */
  swarm?: string;
  /** its HTTPS address, when it serves HTTPS (the CLI keeps using `url`, plain HTTP on loopback) */
  tlsUrl?: string;
}

export interface EngineSettings {
  apiKey: string;
  /** the port of the last start, taken again when free so URLs stay the same */
  port?: number;
}

// --- state file ------------------------------------------------------------------------------------

export async function readEngineState(paths: HomePaths): Promise<EngineState | undefined> {
  // another user who can write it could point the CLI, and its key, at an engine of theirs
  const check = checkPrivatePath(paths.stateFile, 'file');
  if (check.refuse !== undefined) {
    throw new UserError(`the engine's state file cannot be trusted: ${check.refuse}`, {
      exitCode: EXIT.config,
      code: 'unsafe_home',
      hint: privatePathHint(paths.stateFile, 'file'),
    });
  }
  let parsed: Partial<EngineState>;
  try {
    parsed = JSON.parse(await readFile(paths.stateFile, 'utf8')) as Partial<EngineState>;
  } catch {
    return undefined;
  }
  if (
    typeof parsed.url !== 'string' ||
    typeof parsed.pid !== 'number' ||
    typeof parsed.apiKey !== 'string' ||
    typeof parsed.port !== 'number'
  ) {
    return undefined;
  }
  return {
    url: parsed.url,
    pid: parsed.pid,
    port: parsed.port,
    host: typeof parsed.host === 'string' ? parsed.host : '127.0.0.1',
    apiKey: parsed.apiKey,
    version: typeof parsed.version === 'string' ? parsed.version : 'unknown',
    startedAt: typeof parsed.startedAt === 'string' ? parsed.startedAt : '',
    home: typeof parsed.home === 'string' ? parsed.home : paths.home,
    mode: parsed.mode === 'foreground' ? 'foreground' : 'background',
    ...(typeof parsed.runner === 'string' ? { runner: parsed.runner } : {}),
    ...(typeof parsed.swarm === 'string' ? { swarm: parsed.swarm } : {}),
    ...(typeof parsed.tlsUrl === 'string' ? { tlsUrl: parsed.tlsUrl } : {}),
  };
}

export async function writeEngineState(paths: HomePaths, state: EngineState): Promise<void> {
  await writeFileAtomic(paths.stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** Removes the state file when it still belongs to `pid` (a newer engine may have replaced it). */
export async function removeEngineState(paths: HomePaths, pid: number): Promise<void> {
  const state = await readEngineState(paths);
  if (state !== undefined && state.pid !== pid) return;
  await rm(paths.stateFile, { force: true });
}

// --- settings ----------------------------------------------------------------------------------------

export async function loadSettings(paths: HomePaths): Promise<EngineSettings> {
  try {
    const parsed = JSON.parse(await readFile(paths.settingsFile, 'utf8')) as { apiKey?: unknown; port?: unknown };
    if (typeof parsed.apiKey === 'string' && parsed.apiKey.length >= 32) {
      return {
        apiKey: parsed.apiKey,
        ...(typeof parsed.port === 'number' && Number.isInteger(parsed.port) && parsed.port > 0 && parsed.port < 65536
          ? { port: parsed.port }
          : {}),
      };
    }
  } catch {
    // missing or unreadable: a new key
  }
  const settings: EngineSettings = { apiKey: generateApiKey() };
  await saveSettings(paths, settings);
  return settings;
}

export async function saveSettings(paths: HomePaths, settings: EngineSettings): Promise<void> {
  // what the user put there (runner, tls) stays
  let kept: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(paths.settingsFile, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      kept = parsed as Record<string, unknown>;
  } catch {
    // missing or not JSON: written anew
  }
  await writeFileAtomic(paths.settingsFile, `${JSON.stringify({ ...kept, ...settings }, null, 2)}\n`, { mode: 0o600 });
}

/** 256 random bits, URL-safe, with a recognisable prefix (for secret scanners). */
export function generateApiKey(): string {
  return `mcpctl_${randomBytes(32).toString('base64url')}`;
}

// --- processes -------------------------------------------------------------------------------------

/** True when a process with this pid exists and is not a zombie. */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // Linux: a zombie (exited, not yet reaped) counts as gone.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * True when `pid` is alive and looks like an mcpctl engine. Where the command line can be read
 * (Linux), a recycled pid of another program is not mistaken for the engine, so it is never signalled.
 */
export function isEngineProcess(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true;
  }
  return /daemon\.js|mcpctl|entry\.js/.test(cmdline);
}

/**
 * Stops what a background engine that died without stopping (kill -9, a crash) left running: its
 * deployments' server processes, which stay in its process group. Linux only (it reads /proc);
 * only processes that look like mcpctl's are signalled. Returns their pids.
 */
export function stopOrphans(deadEnginePid: number): number[] {
  if (isProcessAlive(deadEnginePid)) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const stopped: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== deadEnginePid) continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!/serve-bundle|daemon\.js|mcpctl/.test(cmdline)) continue;
      process.kill(pid, 'SIGTERM');
      stopped.push(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return stopped;
}

// --- lock --------------------------------------------------------------------------------------------

export interface EngineLock {
  release(): Promise<void>;
}

export type LockResult = { lock: EngineLock } | { heldBy: number | undefined };

/** A lock file whose writer has not filled it in yet is given this long before it counts as abandoned. */
const FRESH_LOCK_MS = 5_000;

/**
 * Takes the engine lock of a home: a file created exclusively, holding the owner's pid. A lock
 * whose owner is gone is broken, under a second short-lived lock so two starters never both
 * break it and both win.
 */
export async function acquireLock(lockFile: string, pid = process.pid): Promise<LockResult> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    try {
      const handle = await open(lockFile, 'wx', 0o600);
      try {
        await handle.writeFile(JSON.stringify({ pid, at: new Date().toISOString() }));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await syncDir(dirname(lockFile));
      return { lock: { release: () => releaseLock(lockFile, pid) } };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readLockHolder(lockFile);
    if (holder === 'fresh') return { heldBy: undefined };
    if (holder !== 'gone' && holder !== pid && isEngineProcess(holder)) return { heldBy: holder };
    await breakLock(lockFile, holder);
  }
  return { heldBy: undefined };
}

async function releaseLock(lockFile: string, pid: number): Promise<void> {
  const holder = await readLockHolder(lockFile);
  if (holder === pid || holder === 'gone') await rm(lockFile, { force: true });
}

/** The pid in the lock; 'fresh' for a lock being written right now; 'gone' for no lock or an abandoned empty one. */
async function readLockHolder(lockFile: string): Promise<number | 'fresh' | 'gone'> {
  let text: string;
  try {
    text = await readFile(lockFile, 'utf8');
  } catch {
    return 'gone';
  }
  try {
    const pid = (JSON.parse(text) as { pid?: unknown }).pid;
    if (typeof pid === 'number') return pid;
  } catch {
    // being written, or left half-written by a crash
  }
  const age = await stat(lockFile).then(
    (s) => Date.now() - s.mtimeMs,
    () => Number.POSITIVE_INFINITY,
  );
  return age < FRESH_LOCK_MS ? 'fresh' : 'gone';
}

async function breakLock(lockFile: string, staleHolder: number | 'gone'): Promise<void> {
  const guard = `${lockFile}.break`;
  try {
    const handle = await open(guard, 'wx', 0o600);
    await handle.close();
  } catch {
    // Someone else is breaking it; a guard left by a crash expires.
    const age = await stat(guard).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > 10_000) await rm(guard, { force: true });
    await sleep(50);
    return;
  }
  try {
    // Only the lock that was judged stale is removed, not one a new engine took meanwhile.
    if ((await readLockHolder(lockFile)) === staleHolder) await rm(lockFile, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

// --- health --------------------------------------------------------------------------------------

export type { IsolationHealth, UnreadableHealth, WarmPoolHealth } from './health-fields.js';

export type HealthResult =
  | {
      ok: true;
      version: string;
      uptimeSeconds: number;
      warmPool?: WarmPoolHealth;
      isolation?: IsolationHealth;
      unreadable?: UnreadableHealth[];
    }
  | { ok: false; reason: string };

/** Asks the engine's /v1/health with its key. */
export async function checkHealth(url: string, apiKey: string, timeoutMs = 2_000): Promise<HealthResult> {
  try {
    const response = await getJson(
      `${url}/v1/health`,
      { authorization: `Bearer ${apiKey}` },
      AbortSignal.timeout(timeoutMs),
    );
    const body = response.body as
      | {
          data?: {
            version?: unknown;
            uptime_seconds?: unknown;
            warm_pool?: unknown;
            isolation?: unknown;
            unreadable_records?: unknown;
          };
        }
      | undefined;
    if (response.status < 200 || response.status > 299) return { ok: false, reason: `HTTP ${response.status}` };
    const warmPool = readWarmPool(body?.data?.warm_pool);
    const isolation = readIsolation(body?.data?.isolation);
    const unreadable = readUnreadable(body?.data?.unreadable_records);
    return {
      ok: true,
      version: typeof body?.data?.version === 'string' ? body.data.version : 'unknown',
      uptimeSeconds: typeof body?.data?.uptime_seconds === 'number' ? body.data.uptime_seconds : 0,
      ...(warmPool === undefined ? {} : { warmPool }),
      ...(isolation === undefined ? {} : { isolation }),
      ...(unreadable === undefined ? {} : { unreadable }),
    };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * A GET with Node's http(s) and no keep-alive: the answer's status and its body as JSON (undefined
 * when it is not JSON or breaks off). It fails as `fetch` did here before, with the same messages
 * (`fetch failed`, or the signal's reason), and costs a fraction: the first `fetch` of a process
 * loads Node's own copy of undici, about 40 ms of CPU for every command that looks for its engine.
 */
async function getJson(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  const { get } = url.startsWith('https:') ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    let status: number | undefined;
    const chunks: Buffer[] = [];
    const settle = (complete: boolean): void => {
      let body: unknown;
      try {
        body = complete ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      } catch {
        body = undefined;
      }
      resolve({ status: status ?? 0, body });
    };
    // before the answer, a failure is the request's; once it has come, only its body is lost
    const fail = (error: Error): void => {
      if (status !== undefined) settle(false);
      else reject(signal.aborted ? (signal.reason as Error) : new TypeError('fetch failed', { cause: error }));
    };
    const request = get(url, { headers, signal, agent: false }, (response) => {
      status = response.statusCode ?? 0;
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => settle(true));
      response.on('error', fail);
      response.on('aborted', () => settle(false));
    });
    request.on('error', fail);
  });
}
