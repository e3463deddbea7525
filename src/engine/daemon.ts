/**
 * The background engine's process entry (`node dist/engine/daemon.js`), started detached by
 * `mcpctl engine start` with its stdout and stderr on `<MCPCTL_HOME>/engine.log`. It runs the
 * engine through host.ts on loopback (the last port again when free), and on SIGTERM or SIGINT
 * stops cleanly.
 */
import { batchedWrite, createLogger } from './engine-log.js';
import { homePaths, resolveHome } from './home.js';
import { HomeLockedError, runEngineHost } from './host.js';
import { engineLimits } from './engine-limits.js';
import { engineNice, yieldToInstances } from './cpu-priority.js';
import { ensureDir } from './store/atomic.js';
import { EXIT_ALREADY_RUNNING, loadSettings, saveSettings } from './engine-lock.js';
import { VERSION as version } from '../shared/version.js';
import { SETTINGS, settingValueOrDefault } from '../shared/settings.js';
import { readSettingsFile } from '../shared/settings-file.js';

async function runDaemon(env: NodeJS.ProcessEnv): Promise<void> {
  const home = resolveHome(env);
  const paths = homePaths(home);
  const file = await readSettingsFile(paths.settingsFile);
  const logger = createLogger({
    write: batchedWrite((text) => process.stdout.write(text)),
    level: settingValueOrDefault(SETTINGS.logLevel, { env }).value,
  });
  await ensureDir(home);
  process.on('SIGHUP', () => logger.info('SIGHUP: the engine stays up (with HTTPS, it reads its certificates again)'));
  const priority = engineNice({ env, file });
  if (priority.problem !== undefined) logger.warn(priority.problem);
  const outcome = yieldToInstances(priority.nice);
  if (outcome === 'lowered')
    logger.info('on busy cores the engine gives way to its instances', { autogroup_nice: priority.nice });

  let code: number;
  try {
    const settings = await loadSettings(paths);
    const end = await runEngineHost({
      paths,
      mode: 'background',
      logger,
      signals: ['SIGTERM', 'SIGINT'],
      stopOnUncaught: true,
      engine: {
        host: '127.0.0.1',
        port: settings.port ?? 0,
        anyPortIfTaken: true,
        apiKey: settings.apiKey,
        version,
        logger,
        env,
        limits: engineLimits({ env, file }),
      },
      onListening: async (engine) => {
        if (settings.port !== engine.port) await saveSettings(paths, { ...settings, port: engine.port });
      },
    });
    code = end.code;
  } catch (error) {
    if (error instanceof HomeLockedError) {
      logger.info('another engine already runs for this home', { home, pid: error.heldBy });
      process.exitCode = EXIT_ALREADY_RUNNING;
      return;
    }
    logger.error('the engine could not start', { error });
    code = 1;
  }
  process.exitCode = code;
  // Anything still holding the event loop (a stuck child pipe) must not keep a stopped engine alive.
  setTimeout(() => process.exit(code), 2_000).unref();
}

await runDaemon(process.env);
