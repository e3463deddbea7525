/**
 * The engine's daemon process as the CLI starts it: the guard file that lets one command start it while
 * the others wait, the detached spawn, and its log, rotated at a start and read for why a start failed.
 */
import { closeSync, existsSync, openSync } from 'node:fs';
import { open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { HomePaths } from '../engine/home.js';
import { isProcessAlive } from '../engine/engine-lock.js';
import { UserError } from '../shared/errors.js';
import { packageRoot } from '../shared/package-root.js';
import { SETTINGS } from '../shared/settings.js';

/** How long a new engine has to start answering, while its process runs. */
export const START_TIMEOUT_MS = 60_000;
/** The log is rotated (one old copy kept) when it passes this size at a start. */
const LOG_ROTATE_BYTES = 10 * 1024 * 1024;

/** A file that says one command is starting the engine: the others wait instead of starting more. */
export const START_GUARD = 'engine.starting';

/**
 * Takes the start guard, or says another live command holds it. A guard whose writer is gone, or
 * older than a start may take, is taken over.
 */
export async function claimStart(guard: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(guard, 'wx', 0o600);
      try {
        await handle.writeFile(String(process.pid));
      } finally {
        await handle.close();
      }
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const [text, info] = await Promise.all([
      readFile(guard, 'utf8').catch(() => ''),
      stat(guard).catch(() => undefined),
    ]);
    const holder = Number(text);
    const age = info === undefined ? 0 : Date.now() - info.mtimeMs;
    const fresh =
      text === ''
        ? age < 5_000
        : Number.isInteger(holder) && holder > 0 && isProcessAlive(holder) && age < START_TIMEOUT_MS;
    if (fresh || info === undefined) return false;
    await rm(guard, { force: true });
  }
  return false;
}

/**
 * Starts the daemon detached, in its own folder, with no hold on this process's stdio.
 * node:child_process (and dgram with it) loads only here: a command that finds its engine running never needs it.
 */
export async function spawnDaemon(
  paths: HomePaths,
  env: Record<string, string | undefined>,
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void,
): Promise<void> {
  const { spawn } = await import('node:child_process');
  const entry = daemonEntry();
  const logFd = openSync(paths.logFile, 'a', 0o600);
  try {
    // Detached, with no hold on this process's stdio: the CLI (and a CI job) can exit.
    const child = spawn(process.execPath, [entry], {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      cwd: paths.home,
      env: { ...env, [SETTINGS.home.env]: paths.home },
    });
    child.once('exit', (code, signal) => onExit(code, signal));
    child.once('error', () => onExit(-1, null));
    child.unref();
  } finally {
    closeSync(logFd);
  }
}

/** The daemon's entry: the built engine folder of the package (from a source checkout too). */
export function daemonEntry(): string {
  const built = join(packageRoot(), 'dist', 'engine', 'daemon.js');
  if (existsSync(built)) return built;
  throw new UserError('the engine is not built: dist/engine/daemon.js is missing', {
    hint: 'run `npm run build` first',
  });
}

export async function rotateLog(logFile: string): Promise<void> {
  const size = await stat(logFile).then(
    (s) => s.size,
    () => 0,
  );
  if (size > LOG_ROTATE_BYTES) await rename(logFile, `${logFile}.1`).catch(() => {});
}

/** The message of the last error line of the log, to say why a start failed. */
export async function lastError(logFile: string): Promise<string> {
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
