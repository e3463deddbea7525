/**
 * Hosting one engine for a home, for as long as its process lives: the home's lock, the start,
 * the state file the CLI finds it by, the signals that stop it, and the clean stop (engine
 * closed, state file removed, lock released). The background daemon (daemon.ts) and `mcpctl
 * serve` (foreground) both run an engine through this.
 */
import { startEngine, urlHost, type RunningEngine, type StartEngineOptions } from './engine.js';
import type { HomePaths } from './home.js';
import {
  acquireLock,
  readEngineState,
  removeEngineState,
  stopOrphans,
  writeEngineState,
  type EngineState,
} from './engine-lock.js';
import type { Logger } from './engine-log.js';

/** Another engine holds the home's lock. */
export class HomeLockedError extends Error {
  override readonly name = 'HomeLockedError';
  constructor(
    readonly home: string,
    readonly heldBy: number | undefined,
  ) {
    super(`another engine runs for ${home}${heldBy === undefined ? '' : ` (pid ${heldBy})`}`);
  }
}

export interface EngineHostOptions {
  paths: HomePaths;
  /** `background` for the daemon, `foreground` for `mcpctl serve`; written to the state file */
  mode: EngineState['mode'];
  /** how the engine starts (its home is `paths.home`) */
  engine: Omit<StartEngineOptions, 'home'>;
  logger: Logger;
  /** process signals that stop the engine */
  signals: NodeJS.Signals[];
  /** stops the engine too when it aborts (Ctrl-C seen by the CLI) */
  signal?: AbortSignal;
  /** an uncaught exception stops the engine (exit code 1) instead of ending the process at once */
  stopOnUncaught?: boolean;
  /** once the engine listens and its state file is written */
  onListening?(engine: RunningEngine, state: EngineState): void | Promise<void>;
}

export interface HostEnd {
  reason: string;
  /** the exit code the process should end with */
  code: number;
}

/**
 * Runs an engine for `paths.home` until a signal stops it, then stops it cleanly. Throws
 * HomeLockedError when another engine holds the home, and what the start threw when it could not
 * start (with the lock released and no state file left). A stop asked for during the start waits
 * for the start, then undoes it.
 */
export async function runEngineHost(options: EngineHostOptions): Promise<HostEnd> {
  const { paths, logger } = options;
  const taken = await acquireLock(paths.lockFile);
  if (!('lock' in taken)) throw new HomeLockedError(paths.home, taken.heldBy);
  const lock = taken.lock;

  let end: HostEnd | undefined;
  let wake: () => void = () => {};
  const stopRequested = new Promise<void>((resolve) => (wake = resolve));
  const requestStop = (reason: string, code: number) => {
    if (end !== undefined) return;
    end = { reason, code };
    logger.info('shutting down', { reason });
    wake();
  };
  const onSignal = (signal: NodeJS.Signals) => requestStop(signal, 0);
  const onAbort = () => requestStop('interrupted', 0);
  const onRejection = (error: unknown) => logger.error('unhandled promise rejection', { error });
  const onUncaught = (error: Error) => {
    logger.error('uncaught exception; stopping', { error });
    requestStop('uncaught exception', 1);
  };
  for (const signal of options.signals) process.on(signal, onSignal);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted === true) onAbort();
  // A long-running service logs a stray rejection and keeps serving.
  process.on('unhandledRejection', onRejection);
  if (options.stopOnUncaught === true) process.on('uncaughtException', onUncaught);
  const unlisten = () => {
    process.off('SIGHUP', onHangUp);
    for (const signal of options.signals) process.off(signal, onSignal);
    options.signal?.removeEventListener('abort', onAbort);
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onUncaught);
  };

  let engine: RunningEngine | undefined;
  // SIGHUP reads the certificates again (the usual signal after a renewal); connections stay open
  const onHangUp = () => void engine?.tls?.listener.reload('SIGHUP');
  process.on('SIGHUP', onHangUp);
  try {
    if (options.mode === 'background') await stopLeftovers(paths, logger);
    engine = await startEngine({ ...options.engine, home: paths.home });
    if (end === undefined) {
      const state: EngineState = {
        // the local address: the CLI on this machine finds the engine there (the state file is 0600)
        url: `http://${urlHost(engine.host)}:${engine.port}`,
        pid: process.pid,
        port: engine.port,
        host: engine.host,
        apiKey: options.engine.apiKey,
        version: options.engine.version,
        startedAt: new Date().toISOString(),
        home: paths.home,
        mode: options.mode,
        runner: engine.runner,
        ...(engine.swarm === undefined ? {} : { swarm: engine.swarm }),
        ...(engine.tls === undefined ? {} : { tlsUrl: engine.tls.url }),
      };
      await writeEngineState(paths, state);
      await options.onListening?.(engine, state);
      await stopRequested;
    }
  } catch (error) {
    unlisten();
    await engine
      ?.close()
      .catch((closeError: unknown) => logger.error('stopping the engine failed', { error: closeError }));
    await removeEngineState(paths, process.pid).catch(() => {});
    await lock.release().catch(() => {});
    throw error;
  }
  try {
    await engine.close();
  } catch (error) {
    logger.error('stopping the engine failed', { error });
  }
  // A stop that came while the state was written must not leave it behind.
  await removeEngineState(paths, process.pid).catch(() => {});
  await lock.release().catch(() => {});
  unlisten();
  return end ?? { reason: 'stopped', code: 0 };
}

/** What a background engine that died without stopping (kill -9) left running: its servers. */
async function stopLeftovers(paths: HomePaths, logger: Logger): Promise<void> {
  const previous = await readEngineState(paths);
  if (previous === undefined || previous.mode !== 'background' || previous.pid === process.pid) return;
  const orphans = stopOrphans(previous.pid);
  if (orphans.length > 0)
    logger.warn('stopped processes left by an engine that did not stop cleanly', {
      engine_pid: previous.pid,
      pids: orphans,
    });
}
