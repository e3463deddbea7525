/**
 * `mcpctl serve [--host] [--port]`: the engine in the foreground, for containers and shared
 * hosts. Logs JSON lines to stdout; the API key comes from MCPCTL_API_KEY or is generated and
 * printed once on stderr. A non-loopback address needs MCPCTL_API_KEY. Stops on Ctrl-C or SIGTERM.
 * `--runner docker` runs deployments as containers on the Docker host of DOCKER_HOST;
 * `--runner kubernetes` as workloads on the cluster of the kubeconfig (docs/kubernetes.md).
 * `--tls-cert`/`--tls-key` (and `--tls-certs-dir`) serve HTTPS on `--tls-port` beside HTTP;
 * `--tls-host` gives HTTPS an address of its own, so it can face the network while HTTP stays on loopback.
 */
import { resolve } from 'node:path';
import { apiKeyProblem, MAKE_API_KEY_HINT, MIN_API_KEY_LENGTH } from '../../engine/api-key.js';
import type { engineLimits } from '../../engine/engine-limits.js';
import type { Logger } from '../../engine/engine-log.js';
import type { RunningEngine } from '../../engine/engine.js';
import type { HomePaths } from '../../engine/home.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { VERSION } from '../../shared/version.js';
import { parseOrigins } from '../../shared/origins.js';
import { SETTINGS, settingValue, settingValueOrDefault } from '../../shared/settings.js';
import { readSettingsFile } from '../../shared/settings-file.js';
import type { ServeOptions } from '../specs/engine.js';

type Env = Record<string, string | undefined>;

/** What the engine is started with, once every setting has been checked. */
interface ServePlan {
  host: string;
  port: number;
  /** MCPCTL_API_KEY; none: a key is generated and shown once */
  givenKey: string | undefined;
  paths: HomePaths;
  tlsHost: string | undefined;
}

export async function serveCommand(ctx: CommandContext, options: ServeOptions): Promise<void> {
  const plan = await planServe(ctx, options);
  const [engine, log, limitsModule, host, lock] = await Promise.all([
    import('../../engine/engine.js'),
    import('../../engine/engine-log.js'),
    import('../../engine/engine-limits.js'),
    import('../../engine/host.js'),
    import('../../engine/engine-lock.js'),
  ]);
  const env = ctx.io.env;
  const logger = log.createLogger({
    write: (line) => ctx.out.raw(line),
    // a wrong level must not stop the engine: it logs at the default
    level: settingValueOrDefault(SETTINGS.logLevel, { env }).value,
  });
  const limits = await limitsOf(env, plan.paths, limitsModule.engineLimits);

  const { prepareHome } = await import('../local-engine.js');
  await prepareHome(plan.paths.home);
  const apiKey = plan.givenKey ?? lock.generateApiKey();
  const publicUrl = settingValue(SETTINGS.publicUrl, { env });
  try {
    await host.runEngineHost({
      paths: plan.paths,
      mode: 'foreground',
      logger,
      // Ctrl-C comes through ctx.signal
      signals: ['SIGTERM'],
      signal: ctx.signal,
      engine: {
        host: plan.host,
        port: plan.port,
        apiKey,
        version: VERSION,
        logger,
        env,
        limits,
        ...(publicUrl === undefined ? {} : { publicUrl }),
        ...(options.runner === undefined ? {} : { runner: options.runner }),
        tls: tlsOptions(ctx.io.cwd, options, plan.tlsHost),
      },
      onListening: announce(ctx, plan, apiKey, logger),
    });
  } catch (error) {
    throw hostError(error, {
      HomeLockedError: host.HomeLockedError,
      EngineConfigError: engine.EngineConfigError,
      ListenError: engine.ListenError,
    });
  }
}

/** The engine's limits: the environment, else the `tuning` section of its settings file (docs/tuning.md). */
async function limitsOf(env: Env, paths: HomePaths, limitsFrom: typeof engineLimits) {
  const file = await readSettingsFile(paths.settingsFile);
  try {
    return limitsFrom({ env, file });
  } catch (error) {
    throw new UserError((error as Error).message, { exitCode: EXIT.config });
  }
}

/** Once the engine listens: the generated key (shown once), where it listens, and a warning when HTTP faces the network. */
function announce(ctx: CommandContext, plan: ServePlan, apiKey: string, logger: Logger) {
  return (running: RunningEngine): void => {
    if (plan.givenKey === undefined) ctx.out.stderr(`API key (shown once, not stored elsewhere): ${apiKey}\n`);
    const https = running.tls === undefined ? '' : ` and ${running.tls.url}`;
    ctx.out.stderr(
      `mcpctl engine listening on ${running.url}${https} (state in ${plan.paths.home}); Ctrl-C stops it\n`,
    );
    if (running.tls !== undefined && !isLoopback(plan.host)) {
      logger.warn(
        'plain HTTP is served on a non-loopback address beside HTTPS; to keep it on this machine, give HTTPS its address with --tls-host and leave --host out',
        { host: plan.host },
      );
    }
  };
}

/** The address, the key and the home, each checked before anything is loaded or bound. */
async function planServe(ctx: CommandContext, options: ServeOptions): Promise<ServePlan> {
  const env = ctx.io.env;
  const host = options.host ?? '127.0.0.1';
  const port = settingValue(SETTINGS.port, { env, flag: options.port }, (message) => new UserError(message));
  // A key of white space is a mistake to refuse, never a reason to generate one.
  const givenKey = settingValue(SETTINGS.apiKey, { env, whiteSpace: 'value' });
  const { homePaths, resolveHome } = await import('../../engine/home.js');
  const paths = homePaths(resolveHome(env, ctx.io.cwd));
  const tlsHost = (await httpsAddress(options.tlsHost, env, paths.settingsFile))?.value;
  checkExposure([host, tlsHost], givenKey);
  checkOrigins(env);
  checkApiKey(givenKey);
  return { host, port, givenKey, paths, tlsHost };
}

/** An address other than loopback needs a key of the user's own. */
function checkExposure(addresses: Array<string | undefined>, givenKey: string | undefined): void {
  const exposedHost = addresses.find((address) => address !== undefined && !isLoopback(address));
  if (exposedHost === undefined || givenKey !== undefined) return;
  const name = SETTINGS.apiKey.env;
  throw new UserError(
    `refusing to listen on ${exposedHost} without ${name}: the generated key would be the only thing between the network and your engine`,
    {
      exitCode: EXIT.config,
      hint: `set ${name} to a long random value (for example \`openssl rand -hex 32\`), or listen on 127.0.0.1`,
    },
  );
}

function checkOrigins(env: Env): void {
  const problems = parseOrigins(settingValue(SETTINGS.allowedOrigins, { env })).problems;
  if (problems.length === 0) return;
  throw new UserError(`${SETTINGS.allowedOrigins.env} cannot be used: ${problems.join('; ')}`, {
    exitCode: EXIT.config,
  });
}

function checkApiKey(givenKey: string | undefined): void {
  const problem = givenKey === undefined ? undefined : apiKeyProblem(givenKey);
  if (problem === undefined) return;
  throw new UserError(`${SETTINGS.apiKey.env} cannot be used: ${problem}`, {
    exitCode: EXIT.config,
    hint: `use at least ${MIN_API_KEY_LENGTH} visible characters without spaces: ${MAKE_API_KEY_HINT}`,
  });
}

/** The HTTPS options given on the command line; the engine adds what the environment and settings file set. */
function tlsOptions(cwd: string, options: ServeOptions, tlsHost: string | undefined) {
  return {
    ...(options.tlsCert === undefined ? {} : { cert: resolve(cwd, options.tlsCert) }),
    ...(options.tlsKey === undefined ? {} : { key: resolve(cwd, options.tlsKey) }),
    ...(options.tlsCertsDir === undefined ? {} : { certsDir: resolve(cwd, options.tlsCertsDir) }),
    ...(options.tlsPort === undefined ? {} : { port: options.tlsPort }),
    ...(tlsHost === undefined ? {} : { host: tlsHost }),
  };
}

/** Why the engine could not run, as the user is told it; anything else is rethrown as it is. */
function hostError(
  error: unknown,
  kinds: {
    HomeLockedError: new (...args: never[]) => Error;
    EngineConfigError: new (...args: never[]) => Error;
    ListenError: new (...args: never[]) => Error;
  },
): unknown {
  if (error instanceof kinds.HomeLockedError) {
    return new UserError(error.message, {
      exitCode: EXIT.config,
      hint: `stop it with \`mcpctl engine stop\`, or give this one its own ${SETTINGS.home.env}`,
    });
  }
  if (error instanceof kinds.EngineConfigError) return new UserError(error.message, { exitCode: EXIT.config });
  if (error instanceof kinds.ListenError) {
    return new UserError(`cannot listen: ${error.message}`, {
      exitCode: EXIT.usage,
      hint: 'choose another port with --port (--tls-port for HTTPS)',
    });
  }
  return error;
}

/** `--tls-host`, MCPCTL_TLS_HOST or the settings file's `"tls": { "host" }`; a bad setting is a config error. */
async function httpsAddress(given: string | undefined, env: Env, settingsFile: string) {
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
