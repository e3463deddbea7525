/**
 * `mcpctl serve [--host] [--port]`: the engine in the foreground, for containers and shared
 * hosts. Logs JSON lines to stdout; the API key comes from MCPCTL_API_KEY or is generated and
 * printed once on stderr. A non-loopback address needs MCPCTL_API_KEY. Stops on Ctrl-C or SIGTERM.
 */
import { createRequire } from 'node:module';
import { apiKeyProblem } from '../../engine/api-key.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../errors.js';

/** The port `serve` listens on without --port or MCPCTL_PORT. */
export const DEFAULT_SERVE_PORT = 7070;

export interface ServeOptions {
  host?: string;
  port?: number;
}

export async function serveCommand(ctx: CommandContext, options: ServeOptions): Promise<void> {
  const env = ctx.io.env;
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? portFromEnv(env.MCPCTL_PORT) ?? DEFAULT_SERVE_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UserError(`--port must be a port number from 0 to 65535, not ${port}`);
  const givenKey = env.MCPCTL_API_KEY !== undefined && env.MCPCTL_API_KEY !== '' ? env.MCPCTL_API_KEY : undefined;
  if (!isLoopback(host) && givenKey === undefined) {
    throw new UserError(`refusing to listen on ${host} without MCPCTL_API_KEY: the generated key would be the only thing between the network and your engine`, {
      exitCode: EXIT.config,
      hint: 'set MCPCTL_API_KEY to a long random value (for example `openssl rand -base64 32`), or listen on 127.0.0.1',
    });
  }
  const keyProblem = givenKey === undefined ? undefined : apiKeyProblem(givenKey);
  if (keyProblem !== undefined) {
    throw new UserError(`MCPCTL_API_KEY cannot be used: ${keyProblem}`, {
      exitCode: EXIT.config,
      hint: 'use at least 16 visible characters without spaces (32 random bytes is better: `openssl rand -base64 32`)',
    });
  }

  const [{ homePaths, resolveHome }, { startEngine, ListenError, urlHost }, { createLogger, parseLogLevel }, { limitsFromEnv }, state] = await Promise.all([
    import('../../engine/home.js'),
    import('../../engine/engine.js'),
    import('../../engine/logger.js'),
    import('../../engine/limits.js'),
    import('../../engine/state.js'),
  ]);
  const paths = homePaths(resolveHome(env, ctx.io.cwd));
  const logger = createLogger({ write: (line) => ctx.out.raw(line), level: parseLogLevel(env.MCPCTL_LOG_LEVEL) ?? 'info' });
  let limits;
  try {
    limits = limitsFromEnv(env);
  } catch (error) {
    throw new UserError((error as Error).message, { exitCode: EXIT.config });
  }

  const { prepareHome } = await import('../../engine/local.js');
  await prepareHome(paths.home);
  const taken = await state.acquireLock(paths.lockFile);
  if (!('lock' in taken)) {
    throw new UserError(`another engine runs for ${paths.home}${taken.heldBy === undefined ? '' : ` (pid ${taken.heldBy})`}`, {
      exitCode: EXIT.config,
      hint: 'stop it with `mcpctl engine stop`, or give this one its own MCPCTL_HOME',
    });
  }
  const lock = taken.lock;
  const apiKey = givenKey ?? state.generateApiKey();
  const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };
  const publicUrl = env.MCPCTL_PUBLIC_URL !== undefined && env.MCPCTL_PUBLIC_URL !== '' ? env.MCPCTL_PUBLIC_URL : undefined;

  let engine;
  try {
    engine = await startEngine({ home: paths.home, host, port, apiKey, version, logger, env, limits, ...(publicUrl === undefined ? {} : { publicUrl }) });
  } catch (error) {
    await lock.release();
    if (error instanceof ListenError) {
      throw new UserError(`cannot listen on ${host}:${port}: ${error.message}`, { exitCode: EXIT.usage, hint: 'choose another port with --port' });
    }
    throw error;
  }
  const startedAt = new Date().toISOString();
  // The local CLI finds this engine like a background one (the state file is 0600).
  const local = `http://${urlHost(host)}:${engine.port}`;
  await state.writeEngineState(paths, {
    url: local,
    pid: process.pid,
    port: engine.port,
    host,
    apiKey,
    version,
    startedAt,
    home: paths.home,
    mode: 'foreground',
  });
  if (givenKey === undefined) ctx.out.stderr(`API key (shown once, not stored elsewhere): ${apiKey}\n`);
  ctx.out.stderr(`mcpctl engine listening on ${engine.url} (state in ${paths.home}); Ctrl-C stops it\n`);

  // A long-running service logs a stray rejection and keeps serving, as the background engine does.
  const onRejection = (error: unknown) => logger.error('unhandled promise rejection', { error });
  process.on('unhandledRejection', onRejection);
  await new Promise<void>((resolve) => {
    const onTerm = () => resolve();
    process.once('SIGTERM', onTerm);
    if (ctx.signal.aborted) resolve();
    ctx.signal.addEventListener(
      'abort',
      () => {
        process.off('SIGTERM', onTerm);
        resolve();
      },
      { once: true },
    );
  });
  process.off('unhandledRejection', onRejection);
  await engine.close();
  await state.removeEngineState(paths, process.pid);
  await lock.release();
}

function portFromEnv(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UserError(`MCPCTL_PORT must be a port number from 0 to 65535, not ${JSON.stringify(value)}`);
  return port;
}

/** Loopback addresses: 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
