/**
 * Process entry of a deployed server:
 *
 *   node dist/runtime/serve-bundle.js --bundle DIR [--port 0] [--host 127.0.0.1]
 *        [--log-level info|debug] [--allowed-host NAME]… [--drain-timeout SECONDS] [--env-is-secret]
 *        [--values-file PATH] [--lifeline] [--socket PATH]
 *
 * The first line on stdout is `{"event":"listening","port":N,"url":"http://127.0.0.1:N",…}`,
 * with `"socket":PATH` when it also listens on the Unix socket PATH (`--socket`: the same server
 * as on its port, for a supervisor on the same host; a stale socket file there is replaced, and
 * the file is removed when the server stops; when it cannot listen there, it serves on its port only).
 * then one JSON log line per event. `${VAR}` references resolve from this process's environment
 * (the deployment's env_vars); with `--env-is-secret` every value of the environment but PATH is
 * hidden from the logs and from the error texts of tool calls, not only the referenced ones (the
 * variables any container has, such as HOME or NODE_VERSION, are not values of the deployment: they
 * stay visible). `--values-file PATH` loads the deployment's values from a JSON file into the
 * environment first (env-file.ts), each a secret, and deletes the file.
 * SIGTERM (or SIGINT) stops accepting, drains in-flight requests (and open sessions, served until
 * they end), then exits 0. The process lives until it is signalled, or until its parent (the
 * supervisor) goes away: with `--lifeline` its supervisor holds its standard input, whose end says
 * so at once; without, the parent's pid is looked at every second.
 *
 *   node dist/runtime/serve-bundle.js --warm
 *
 * A warm process (the engine's pool): Node, the MCP SDK and every module of the runtime are loaded,
 * and their request path compiled by a throwaway exchange (src/runtime/host/warm-up.ts; `--no-warm-up`
 * skips it, for measuring), when it writes `{"event":"warm","pid":N}`; it then reads one JSON line on standard input,
 * `{"args":[…the options above…],"env":{…}}`, replaces its whole environment with `env` and serves
 * as if it had been started with those options and that environment. It serves that one bundle
 * only, and exits when its standard input ends (its engine went away) or on SIGTERM.
 */
import { createServer, type Server } from 'node:http';
import { isIP } from 'node:net';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { AUDIENCES_ENV, LOCAL_JWKS_ENV } from './server/auth.js';
import { readBundle } from './host/bundle.js';
import { loadEnvFile } from './host/env-file.js';
import { createJsonLogger } from './server/logger.js';
import { RUNTIME_SERVER_OPTIONS } from './server/http-front.js';
import { problemText, type Problem } from '../shared/errors.js';
import { removeSocketFile } from '../shared/socket-file.js';
import { createRuntime, RuntimeStartError, type Runtime } from './server/server.js';
import { prepareSchemaChecks } from './server/validate-args.js';
import { warmUp } from './host/warm-up.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
/**
 * How long an idle connection is kept, on the port and on the socket. Far longer than the engine
 * keeps its own (4 s): a request the engine sends on a connection this process is closing at that
 * moment is lost, and the engine's idle timers run late on a busy machine (undici counts them in
 * ticks of its own clock), so a margin of a second was not enough.
 */
const KEEP_ALIVE_MS = 65_000;

function writeLine(line: string): void {
  flushLog();
  process.stdout.write(`${line}\n`);
}

// Log lines are written together once per turn of the event loop: under load that is one write
// (stdout is a pipe, written synchronously) for many requests instead of one each. In order, and
// flushed before any other line and when the process exits.
let logLines: string[] = [];
function logLine(line: string): void {
  logLines.push(line);
  if (logLines.length === 1) setImmediate(flushLog);
}
function flushLog(): void {
  if (logLines.length === 0) return;
  const text = `${logLines.join('\n')}\n`;
  logLines = [];
  process.stdout.write(text);
}
process.on('exit', flushLog);

/** Says why the server cannot start: as data on stdout (`problems` are `{ path, message }`), in words on stderr. */
function fail(message: string, problems: Problem[] = []): number {
  writeLine(
    JSON.stringify({ time: new Date().toISOString(), level: 'error', event: 'start_failed', error: message, problems }),
  );
  process.stderr.write(`error: ${message}\n${problems.map((p) => `  ${problemText(p)}\n`).join('')}`);
  return 1;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * Variables a process is given besides the deployment's own: not secrets (auth's are URLs and public
 * keys; the rest are what a container, its base image or Kubernetes set, whatever the deployment).
 */
const SYSTEM_VARIABLES = new Set([
  'PATH',
  'SystemRoot',
  AUDIENCES_ENV,
  LOCAL_JWKS_ENV,
  'HOME',
  'HOSTNAME',
  'NODE_ENV',
  'NODE_VERSION',
  'YARN_VERSION',
  'TERM',
  'LANG',
  'PWD',
  'SHLVL',
]);
/** Kubernetes' own (KUBERNETES_SERVICE_HOST, KUBERNETES_PORT_443_TCP...): addresses of the cluster's API. */
const SYSTEM_PREFIX = 'KUBERNETES_';

function environmentValues(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        !SYSTEM_VARIABLES.has(name) && !name.startsWith(SYSTEM_PREFIX) && value !== undefined && value !== '',
    )
    .map(([, value]) => value!);
}

async function main(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        bundle: { type: 'string' },
        port: { type: 'string', default: '0' },
        host: { type: 'string', default: '127.0.0.1' },
        'log-level': { type: 'string', default: 'info' },
        'allowed-host': { type: 'string', multiple: true },
        'drain-timeout': { type: 'string', default: '30' },
        'env-is-secret': { type: 'boolean', default: false },
        // not --env-file: Node 20 takes that flag as its own even after the script name, and reads the file as dotenv
        'values-file': { type: 'string' },
        lifeline: { type: 'boolean', default: false },
        socket: { type: 'string' },
      },
      strict: true,
    }));
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const port = Number(values.port);
  const lifeline = warm || values.lifeline === true;
  const drainSeconds = Number(values['drain-timeout']);
  if (values.bundle === undefined) return fail('--bundle DIR is required');
  if (!Number.isInteger(port) || port < 0 || port > 65535) return fail('--port must be a whole number from 0 to 65535');
  if (!Number.isFinite(drainSeconds) || drainSeconds < 0) return fail('--drain-timeout must be a number of seconds');
  if (values['log-level'] !== 'info' && values['log-level'] !== 'debug')
    return fail('--log-level must be info or debug');
  const host = values.host;

  // Loopback: only local host names (DNS rebinding). Elsewhere a proxy sets Host: check only what is listed.
  const extra = values['allowed-host'] ?? [];
  const allowedHosts = extra.includes('*')
    ? false
    : LOOPBACK.has(host) || extra.length > 0
      ? ['localhost', '127.0.0.1', '[::1]', ...extra]
      : false;
  // pages of other origins: only those MCPCTL_ALLOWED_ORIGINS lists (createRuntime reads it)
  const allowedOrigins = extra.includes('*') ? (false as const) : undefined;

  const logger = createJsonLogger(logLine, { debug: values['log-level'] === 'debug' });
  let runtime: Runtime;
  try {
    const fromFile = values['values-file'] === undefined ? [] : loadEnvFile(values['values-file'], process.env);
    const bundle = await readBundle(values.bundle);
    const secrets = [...fromFile, ...(values['env-is-secret'] === true ? environmentValues(process.env) : [])];
    runtime = await createRuntime(bundle.definition, {
      dir: bundle.filesDir,
      env: process.env,
      logger,
      allowedHosts,
      allowedOrigins,
      secrets,
    });
  } catch (error) {
    if (error instanceof RuntimeStartError) return fail(error.message, error.details);
    // a BundleError's problems are lines of text that name their own place
    const problems = (error as { problems?: string[] }).problems ?? [];
    return fail(
      error instanceof Error ? error.message : String(error),
      problems.map((message) => ({ message })),
    );
  }

  const server = createServer(RUNTIME_SERVER_OPTIONS, runtime.handler);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return fail(
      code === 'EADDRINUSE'
        ? `port ${port} on ${host} is in use`
        : `cannot listen on ${host}:${port}: ${String(error)}`,
    );
  }
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const url = `http://${urlHost(host)}:${boundPort}`;
  const socketPath = values.socket === undefined || values.socket === '' ? undefined : values.socket;
  const onSocket = socketPath === undefined ? undefined : await listenOnSocket(runtime, socketPath);
  const socketServer = onSocket instanceof Error ? undefined : onSocket;
  const servers = socketServer === undefined ? [server] : [server, socketServer];
  writeLine(
    JSON.stringify({
      event: 'listening',
      port: boundPort,
      url,
      ...(socketServer === undefined ? {} : { socket: socketPath }),
      name: runtime.name,
      version: runtime.version,
      pid: process.pid,
      ...runtime.counts,
    }),
  );
  if (onSocket instanceof Error)
    logger.log({ level: 'warn', event: 'socket_failed', socket: socketPath, error: onSocket.message });

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.log({ level: 'info', event: 'draining', signal, in_flight: runtime.inFlight });
    // open sessions are still served while they drain, on new connections too
    if (!runtime.sessions) {
      for (const each of servers) {
        each.close();
        each.closeIdleConnections();
      }
    }
    const drained = await runtime.drain(drainSeconds * 1000);
    for (const each of servers) {
      each.close();
      each.closeAllConnections();
    }
    if (socketServer !== undefined) removeSocketFile(socketPath!);
    await runtime.close();
    logger.log({ level: drained ? 'info' : 'warn', event: 'stopped', drained });
    if (lifeline) process.stdin.destroy();
    process.exitCode = 0;
    // nothing should be left; if a handle lingers (a stuck subprocess pipe), do not wait for it
    setTimeout(() => process.exit(0), 2_000).unref();
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  // An instance never outlives its supervisor: if the engine dies (even by SIGKILL) its stdout pipe
  // breaks, and the process drains and exits instead of lingering. A warm process, or one started
  // with --lifeline, reads the supervisor's end of its standard input: that end closes the moment
  // the supervisor is gone, and nothing wakes the process up until then (a hundred idle instances
  // polling once a second each cost the machine about 0.75 ms of CPU per wake-up). Otherwise
  // the process looks whether it was re-parented, every second; not when it started as the child
  // of init (a container's entry point), which no parent can leave.
  if (lifeline) {
    process.stdin.once('end', () => void stop('stdin-closed'));
    process.stdin.resume();
  } else if (process.ppid > 1) {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) void stop('parent-exited');
    }, 1_000).unref();
  }
  process.stdout.on('error', () => void stop('stdout-closed'));
  return 0;
}

/**
 * The same server on a Unix socket too; the error when it cannot listen there (the port still serves). A socket file left at `path` (a process that was killed) is removed first.
 */
async function listenOnSocket(runtime: Runtime, path: string): Promise<Server | Error> {
  const server = createServer(RUNTIME_SERVER_OPTIONS, runtime.handler);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  try {
    removeSocketFile(path);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** What a warm process is told to serve: the options of a cold start, and its whole environment. */
interface ServeRequest {
  args: string[];
  env: Record<string, string>;
}

/** Waits (loaded, listening to nothing) for the one request on standard input. */
async function waitForRequest(): Promise<ServeRequest | undefined> {
  const parent = process.ppid;
  const orphaned = setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1_000);
  orphaned.unref();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  const first = new Promise<string | undefined>((resolve) => {
    lines.once('line', resolve);
    lines.once('close', () => resolve(undefined));
  });
  // what the first definition would otherwise pay for: the meta-schema of its schemas, and the
  // compiling of the request path (a throwaway definition served once; nothing of it is kept)
  prepareSchemaChecks();
  if (!process.argv.includes('--no-warm-up')) await warmUp();
  writeLine(JSON.stringify({ event: 'warm', pid: process.pid }));
  const line = await first;
  clearInterval(orphaned);
  // the rest of standard input is not read; its end still stops the server
  lines.removeAllListeners('close');
  lines.close();
  process.stdin.resume();
  if (line === undefined) return undefined;
  const request = JSON.parse(line) as Partial<ServeRequest>;
  if (!Array.isArray(request.args) || typeof request.env !== 'object' || request.env === null)
    throw new Error('a serve request needs args and env');
  return { args: request.args.map(String), env: request.env };
}

/** Makes the environment exactly `env`: nothing of the warm process's own is left. */
function replaceEnvironment(env: Record<string, string>): void {
  for (const name of Object.keys(process.env)) delete process.env[name];
  for (const [name, value] of Object.entries(env)) process.env[name] = String(value);
}

const warm = process.argv.slice(2).includes('--warm');
if (!warm) process.exitCode = await main(process.argv.slice(2));
else {
  let request: ServeRequest | undefined;
  try {
    request = await waitForRequest();
  } catch (error) {
    process.exitCode = fail(
      `the serve request cannot be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (request === undefined) {
    // standard input ended before any request: the pool (or the engine) let it go
    if (process.exitCode === undefined) process.exitCode = 0;
    process.stdin.destroy();
  } else {
    replaceEnvironment(request.env);
    process.exitCode = await main(request.args);
    if (process.exitCode !== 0) process.stdin.destroy();
  }
}
