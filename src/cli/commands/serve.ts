/**
 * `mcpctl serve [--host] [--port]`: the engine in the foreground, for containers and shared
 * hosts. Logs JSON lines to stdout; the API key comes from MCPCTL_API_KEY or is generated and
 * printed once on stderr. A non-loopback address needs MCPCTL_API_KEY. Stops on Ctrl-C or SIGTERM.
 * `--runner docker` runs deployments as containers on the Docker host of DOCKER_HOST;
 * `--runner kubernetes` as workloads on the cluster of the kubeconfig (docs/kubernetes.md).
 * `--tls-cert`/`--tls-key` (and `--tls-certs-dir`) serve HTTPS on `--tls-port` beside HTTP;
 * `--tls-host` gives HTTPS an address of its own, so it can face the network while HTTP stays on loopback.
 */
import { apiKeyProblem, MAKE_API_KEY_HINT, MIN_API_KEY_LENGTH } from '../../engine/api-key.js';
import { resolve } from 'node:path';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { VERSION } from '../../shared/version.js';
import { ALLOWED_ORIGINS_ENV, parseOrigins } from '../../shared/origins.js';

/** The port `serve` listens on without --port or MCPCTL_PORT. */
export const DEFAULT_SERVE_PORT = 7070;

export interface ServeOptions {
  host?: string;
  port?: number;
  /** process, docker or kubernetes */
  runner?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsPort?: number;
  tlsCertsDir?: string;
  /** the address of HTTPS when not --host's (MCPCTL_TLS_HOST, `"tls": { "host" }`) */
  tlsHost?: string;
}

export async function serveCommand(ctx: CommandContext, options: ServeOptions): Promise<void> {
  const env = ctx.io.env;
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? portFromEnv(env.MCPCTL_PORT) ?? DEFAULT_SERVE_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UserError(`--port must be a port number from 0 to 65535, not ${port}`);
  const givenKey = env.MCPCTL_API_KEY !== undefined && env.MCPCTL_API_KEY !== '' ? env.MCPCTL_API_KEY : undefined;
  const { homePaths, resolveHome } = await import('../../engine/home.js');
  const paths = homePaths(resolveHome(env, ctx.io.cwd));
  const tlsHost = await httpsAddress(options.tlsHost, env, paths.settingsFile);
  const exposedHost = [host, tlsHost?.value].find((address) => address !== undefined && !isLoopback(address));
  if (exposedHost !== undefined && givenKey === undefined) {
    throw new UserError(
      `refusing to listen on ${exposedHost} without MCPCTL_API_KEY: the generated key would be the only thing between the network and your engine`,
      {
        exitCode: EXIT.config,
        hint: 'set MCPCTL_API_KEY to a long random value (for example `openssl rand -hex 32`), or listen on 127.0.0.1',
      },
    );
  }
  const originProblems = parseOrigins(env[ALLOWED_ORIGINS_ENV]).problems;
  if (originProblems.length > 0) {
    throw new UserError(`${ALLOWED_ORIGINS_ENV} cannot be used: ${originProblems.join('; ')}`, {
      exitCode: EXIT.config,
    });
  }
  const keyProblem = givenKey === undefined ? undefined : apiKeyProblem(givenKey);
  if (keyProblem !== undefined) {
    throw new UserError(`MCPCTL_API_KEY cannot be used: ${keyProblem}`, {
      exitCode: EXIT.config,
      hint: `use at least ${MIN_API_KEY_LENGTH} visible characters without spaces: ${MAKE_API_KEY_HINT}`,
    });
  }

  const [
    { ListenError, EngineConfigError },
    { createLogger, parseLogLevel },
    { limitsFromEnv },
    { HomeLockedError, runEngineHost },
    { generateApiKey },
  ] = await Promise.all([
    import('../../engine/engine.js'),
    import('../../engine/engine-log.js'),
    import('../../engine/engine-limits.js'),
    import('../../engine/host.js'),
    import('../../engine/engine-lock.js'),
  ]);
  const logger = createLogger({
    write: (line) => ctx.out.raw(line),
    level: parseLogLevel(env.MCPCTL_LOG_LEVEL) ?? 'info',
  });
  let limits;
  try {
    limits = limitsFromEnv(env);
  } catch (error) {
    throw new UserError((error as Error).message, { exitCode: EXIT.config });
  }

  const { prepareHome } = await import('../local-engine.js');
  await prepareHome(paths.home);
  const apiKey = givenKey ?? generateApiKey();
  const version = VERSION;
  const publicUrl =
    env.MCPCTL_PUBLIC_URL !== undefined && env.MCPCTL_PUBLIC_URL !== '' ? env.MCPCTL_PUBLIC_URL : undefined;

  try {
    await runEngineHost({
      paths,
      mode: 'foreground',
      logger,
      // Ctrl-C comes through ctx.signal
      signals: ['SIGTERM'],
      signal: ctx.signal,
      engine: {
        host,
        port,
        apiKey,
        version,
        logger,
        env,
        limits,
        ...(publicUrl === undefined ? {} : { publicUrl }),
        ...(options.runner === undefined ? {} : { runner: options.runner }),
        tls: {
          ...(options.tlsCert === undefined ? {} : { cert: resolve(ctx.io.cwd, options.tlsCert) }),
          ...(options.tlsKey === undefined ? {} : { key: resolve(ctx.io.cwd, options.tlsKey) }),
          ...(options.tlsCertsDir === undefined ? {} : { certsDir: resolve(ctx.io.cwd, options.tlsCertsDir) }),
          ...(options.tlsPort === undefined ? {} : { port: options.tlsPort }),
          ...(tlsHost === undefined ? {} : { host: tlsHost.value }),
        },
      },
      onListening: (engine) => {
        if (givenKey === undefined) ctx.out.stderr(`API key (shown once, not stored elsewhere): ${apiKey}\n`);
        const https = engine.tls === undefined ? '' : ` and ${engine.tls.url}`;
        ctx.out.stderr(`mcpctl engine listening on ${engine.url}${https} (state in ${paths.home}); Ctrl-C stops it\n`);
        if (engine.tls !== undefined && !isLoopback(host)) {
          logger.warn(
            'plain HTTP is served on a non-loopback address beside HTTPS; to keep it on this machine, give HTTPS its address with --tls-host and leave --host out',
            { host },
          );
        }
      },
    });
  } catch (error) {
    if (error instanceof HomeLockedError) {
      throw new UserError(error.message, {
        exitCode: EXIT.config,
        hint: 'stop it with `mcpctl engine stop`, or give this one its own MCPCTL_HOME',
      });
    }
    if (error instanceof EngineConfigError) throw new UserError(error.message, { exitCode: EXIT.config });
    if (error instanceof ListenError) {
      throw new UserError(`cannot listen: ${error.message}`, {
        exitCode: EXIT.usage,
        hint: 'choose another port with --port (--tls-port for HTTPS)',
      });
    }
    throw error;
  }
}

function portFromEnv(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UserError(`MCPCTL_PORT must be a port number from 0 to 65535, not ${JSON.stringify(value)}`);
  return port;
}

/** `--tls-host`, MCPCTL_TLS_HOST or the settings file's `"tls": { "host" }`; a bad setting is a config error. */
async function httpsAddress(given: string | undefined, env: Record<string, string | undefined>, settingsFile: string) {
  const { tlsHostSetting, TlsConfigError } = await import('../../engine/http/tls-settings.js');
  try {
    return await tlsHostSetting({ given, env, settingsFile });
  } catch (error) {
    if (error instanceof TlsConfigError) throw new UserError(error.message, { exitCode: EXIT.config });
    throw error;
  }
}

/** Loopback addresses: 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
