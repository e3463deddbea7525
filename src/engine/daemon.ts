/**
 * The background engine's process entry (`node dist/engine/daemon.js`), started detached by
 * `mcpctl engine start` with its stdout and stderr on `<MCPCTL_HOME>/engine.log`. It takes the
 * home's lock, starts the engine on loopback (the last port again when free), writes the state
 * file, and on SIGTERM or SIGINT stops cleanly and removes it.
 */
import { createRequire } from 'node:module';
import { startEngine, type RunningEngine } from './engine.js';
import { homePaths, resolveHome } from './home.js';
import { limitsFromEnv } from './limits.js';
import { createLogger, parseLogLevel } from './logger.js';
import { ensureDir } from './store/atomic.js';
import {
  acquireLock,
  EXIT_ALREADY_RUNNING,
  loadSettings,
  readEngineState,
  removeEngineState,
  saveSettings,
  stopOrphans,
  writeEngineState,
  type EngineLock,
} from './state.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

async function runDaemon(env: NodeJS.ProcessEnv): Promise<void> {
  const home = resolveHome(env);
  const paths = homePaths(home);
  const logger = createLogger({ write: (line) => process.stdout.write(line), level: parseLogLevel(env.MCPCTL_LOG_LEVEL) ?? 'info' });
  await ensureDir(home);

  const taken = await acquireLock(paths.lockFile);
  if (!('lock' in taken)) {
    logger.info('another engine already runs for this home', { home, pid: taken.heldBy });
    process.exitCode = EXIT_ALREADY_RUNNING;
    return;
  }
  const lock: EngineLock = taken.lock;
  let starting: Promise<RunningEngine> | undefined;
  let stopping: Promise<void> | undefined;

  const stop = (reason: string, code: number): Promise<void> => {
    stopping ??= (async () => {
      logger.info('shutting down', { reason });
      try {
        // A stop during the start waits for the start, then undoes it.
        const engine = await starting?.catch(() => undefined);
        await engine?.close();
      } catch (error) {
        logger.error('stopping the engine failed', { error });
      }
      await removeEngineState(paths, process.pid).catch(() => {});
      await lock.release().catch(() => {});
      process.exitCode = code;
      // Anything still holding the event loop (a stuck child pipe) must not keep a stopped engine alive.
      setTimeout(() => process.exit(code), 2_000).unref();
    })();
    return stopping;
  };

  process.on('SIGTERM', () => void stop('SIGTERM', 0));
  process.on('SIGINT', () => void stop('SIGINT', 0));
  process.on('SIGHUP', () => logger.info('SIGHUP ignored'));
  process.on('unhandledRejection', (error) => logger.error('unhandled promise rejection', { error }));
  process.on('uncaughtException', (error) => {
    logger.error('uncaught exception; stopping', { error });
    void stop('uncaught exception', 1);
  });

  try {
    const previous = await readEngineState(paths);
    if (previous !== undefined && previous.mode === 'background' && previous.pid !== process.pid) {
      const orphans = stopOrphans(previous.pid);
      if (orphans.length > 0) logger.warn('stopped processes left by an engine that did not stop cleanly', { engine_pid: previous.pid, pids: orphans });
    }
    const settings = await loadSettings(paths);
    starting = startEngine({
      home,
      host: '127.0.0.1',
      port: settings.port ?? 0,
      anyPortIfTaken: true,
      apiKey: settings.apiKey,
      version,
      logger,
      env,
      limits: limitsFromEnv(env),
    });
    const engine = await starting;
    if (stopping !== undefined) return;
    if (settings.port !== engine.port) await saveSettings(paths, { ...settings, port: engine.port });
    await writeEngineState(paths, {
      url: engine.url,
      pid: process.pid,
      port: engine.port,
      host: engine.host,
      apiKey: settings.apiKey,
      version,
      startedAt: new Date().toISOString(),
      home,
      mode: 'background',
    });
    // A stop that came while the state was written must not leave it behind.
    if (stopping !== undefined) await removeEngineState(paths, process.pid);
  } catch (error) {
    logger.error('the engine could not start', { error });
    await stop('start failed', 1);
  }
}

await runDaemon(process.env);
