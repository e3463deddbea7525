/**
 * Process entry of a deployed server:
 *
 *   node dist/runtime/serve-bundle.js --bundle DIR [--port 0] [--host 127.0.0.1]
 *        [--log-level info|debug] [--allowed-host NAME]… [--drain-timeout SECONDS] [--env-is-secret]
 *        [--values-file PATH] [--lifeline] [--socket PATH] [--metrics-port N [--environment NAME]]
 *
 * The first line on stdout is `{"event":"listening","port":N,"url":"http://127.0.0.1:N",…}`,
 * with `"socket":PATH` when it also listens on the Unix socket PATH (`--socket`: the same server
 * as on its port, for a supervisor on the same host; a stale socket file there is replaced, and
 * the file is removed when the server stops; when it cannot listen there, it serves on its port only),
 * and `"metrics_port":N` with `--metrics-port` (GET /metrics there, on the same host: server/metrics.ts;
 * `--environment` names the environment in its labels).
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
import { readBundle } from './host/bundle.js';
import { loadEnvFile } from './host/env-file.js';
import { environmentValues } from './host/environment-secrets.js';
import { parseServeOptions, type ServeOptions } from './host/serve-options.js';
import { takeRequestStateKey } from './host/request-state-key.js';
import { createJsonLogger, type RuntimeLogger } from './server/logger.js';
import { RUNTIME_SERVER_OPTIONS } from './server/http-front.js';
import { problemText, type Problem } from '../shared/errors.js';
import { removeSocketFile } from '../shared/socket-file.js';
import { createRuntime, RuntimeStartError, type Runtime } from './server/server.js';
import type { FinishedRequest, RuntimeMetrics } from './server/metrics.js';
import { replaceEnvironment, waitForRequest, type ServeRequest } from './host/serve-request.js';

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

/** Why the server cannot start, as one of its start steps found it; `main` reports it (fail). */
class StartFailed extends Error {
  constructor(
    message: string,
    readonly problems: Problem[] = [],
  ) {
    super(message);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Where the server listens: its port, and its Unix socket when it was given one and could listen there. */
interface Listening {
  servers: Server[];
  port: number;
  url: string;
  socketPath: string | undefined;
  /** why it does not listen on the socket it was given */
  socketError: Error | undefined;
}

/** A server that is up, and what its stop needs. */
interface Serving {
  runtime: Runtime;
  listening: Listening;
  options: ServeOptions;
  logger: RuntimeLogger;
  /** its supervisor holds its standard input, whose end says the supervisor is gone */
  lifeline: boolean;
  metrics: RuntimeMetrics | undefined;
}

/** Serves the bundle the options name until it is signalled; 1 (with the reason reported) when it cannot start. */
async function main(args: string[]): Promise<number> {
  try {
    const options = readOptions(args);
    const logger = createJsonLogger(logLine, { debug: options.debug });
    // the metrics listen once the runtime has started (they are labelled with its name); it tells them of requests
    const counted: { metrics?: RuntimeMetrics | undefined } = {};
    const observe = options.metricsPort === undefined ? undefined : (r: FinishedRequest) => counted.metrics?.observe(r);
    const runtime = await startRuntime(options, logger, observe);
    const listening = await listen(runtime, options);
    const metrics = (counted.metrics = await listenForMetrics(runtime, options, listening));
    reportListening(runtime, listening, options, logger, metrics);
    stopWhenAsked({ runtime, listening, options, logger, lifeline: warm || options.lifeline, metrics });
    return 0;
  } catch (error) {
    if (error instanceof StartFailed) return fail(error.message, error.problems);
    throw error;
  }
}

function readOptions(args: string[]): ServeOptions {
  try {
    return parseServeOptions(args);
  } catch (error) {
    throw new StartFailed(messageOf(error));
  }
}

/**
 * The runtime of the bundle, its values loaded first; a definition it cannot serve is a StartFailed
 * with its problems.
 */
async function startRuntime(
  options: ServeOptions,
  logger: RuntimeLogger,
  observeRequest: ((request: FinishedRequest) => void) | undefined,
): Promise<Runtime> {
  try {
    const secrets = readValues(options);
    const requestStateKey = takeRequestStateKey(process.env);
    const bundle = await readBundle(options.bundleDir);
    return await createRuntime(bundle.definition, {
      dir: bundle.filesDir,
      env: process.env,
      logger,
      allowedHosts: options.allowedHosts,
      allowedOrigins: options.allowedOrigins,
      secrets: requestStateKey === undefined ? secrets : [...secrets, requestStateKey],
      ...(requestStateKey === undefined ? {} : { requestStateKey }),
      ...(observeRequest === undefined ? {} : { observeRequest }),
    });
  } catch (error) {
    if (error instanceof RuntimeStartError) throw new StartFailed(error.message, error.details);
    // a BundleError's problems are lines of text that name their own place
    const problems = (error as { problems?: string[] }).problems ?? [];
    throw new StartFailed(
      messageOf(error),
      problems.map((message) => ({ message })),
    );
  }
}

/**
 * Loads the values file into the environment, and says which values are secrets: the file's, and
 * with --env-is-secret every one of the deployment's.
 */
function readValues(options: ServeOptions): string[] {
  const fromFile = options.valuesFile === undefined ? [] : loadEnvFile(options.valuesFile, process.env);
  return [...fromFile, ...(options.envIsSecret ? environmentValues(process.env) : [])];
}

function runtimeServer(runtime: Runtime): Server {
  const server = createServer(RUNTIME_SERVER_OPTIONS, runtime.handler);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  return server;
}

/** Resolves once `server` listens where `start` asked it to; rejects with the error that kept it from it. */
function whenListening(server: Server, start: (onListening: () => void) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    start(() => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Listens on the port (a StartFailed when it cannot), then on the socket (the port still serves when that fails). */
async function listen(runtime: Runtime, options: ServeOptions): Promise<Listening> {
  const { host } = options;
  const server = runtimeServer(runtime);
  try {
    await whenListening(server, (done) => server.listen(options.port, host, done));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new StartFailed(
      code === 'EADDRINUSE'
        ? `port ${options.port} on ${host} is in use`
        : `cannot listen on ${host}:${options.port}: ${String(error)}`,
    );
  }
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const socketPath = options.socketPath;
  const onSocket = socketPath === undefined ? undefined : await listenOnSocket(runtime, socketPath);
  const socketServer = onSocket instanceof Error ? undefined : onSocket;
  return {
    servers: socketServer === undefined ? [server] : [server, socketServer],
    port,
    url: `http://${urlHost(host)}:${port}`,
    socketPath: socketServer === undefined ? undefined : socketPath,
    socketError: onSocket instanceof Error ? onSocket : undefined,
  };
}

/** GET /metrics on its own port, when asked for (a StartFailed when it cannot listen there). */
async function listenForMetrics(
  runtime: Runtime,
  options: ServeOptions,
  listening: Listening,
): Promise<RuntimeMetrics | undefined> {
  if (options.metricsPort === undefined) return undefined;
  const { startRuntimeMetrics } = await import('./server/metrics.js');
  try {
    return await startRuntimeMetrics({
      port: options.metricsPort,
      host: options.host,
      server: runtime.name,
      environment: options.environment,
    });
  } catch (error) {
    for (const server of listening.servers) {
      server.close();
      server.closeAllConnections();
    }
    if (listening.socketPath !== undefined) removeSocketFile(listening.socketPath);
    await runtime.close();
    throw new StartFailed(`cannot listen for metrics on ${options.host}:${options.metricsPort}: ${messageOf(error)}`);
  }
}

/**
 * The same server on a Unix socket too; the error when it cannot listen there (the port still
 * serves). A socket file left at `path` (a process that was killed) is removed first.
 */
async function listenOnSocket(runtime: Runtime, path: string): Promise<Server | Error> {
  const server = runtimeServer(runtime);
  try {
    removeSocketFile(path);
    await whenListening(server, (done) => server.listen(path, done));
    return server;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** The first line on stdout: where it listens, and what it serves. */
function reportListening(
  runtime: Runtime,
  listening: Listening,
  options: ServeOptions,
  logger: RuntimeLogger,
  metrics: RuntimeMetrics | undefined,
): void {
  const { port, url, socketPath, socketError } = listening;
  writeLine(
    JSON.stringify({
      event: 'listening',
      port,
      url,
      ...(socketPath === undefined ? {} : { socket: socketPath }),
      ...(metrics === undefined ? {} : { metrics_port: metrics.port }),
      name: runtime.name,
      version: runtime.version,
      pid: process.pid,
      ...runtime.counts,
    }),
  );
  if (socketError !== undefined)
    logger.log({ level: 'warn', event: 'socket_failed', socket: options.socketPath, error: socketError.message });
}

/** Drains and stops the server on SIGTERM or SIGINT, when its supervisor is gone, or when its stdout breaks. */
function stopWhenAsked(serving: Serving): void {
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await drainAndStop(serving, signal);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  watchSupervisor(stop, serving.lifeline);
  process.stdout.on('error', () => void stop('stdout-closed'));
}

/**
 * An instance never outlives its supervisor: if the engine dies (even by SIGKILL) its stdout pipe
 * breaks, and the process drains and exits instead of lingering. A warm process, or one started
 * with --lifeline, reads the supervisor's end of its standard input: that end closes the moment
 * the supervisor is gone, and nothing wakes the process up until then (a hundred idle instances
 * polling once a second each cost the machine about 0.75 ms of CPU per wake-up). Otherwise
 * the process looks whether it was re-parented, every second; not when it started as the child
 * of init (a container's entry point), which no parent can leave.
 */
function watchSupervisor(stop: (reason: string) => Promise<void>, lifeline: boolean): void {
  if (lifeline) {
    process.stdin.once('end', () => void stop('stdin-closed'));
    process.stdin.resume();
  } else if (process.ppid > 1) {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) void stop('parent-exited');
    }, 1_000).unref();
  }
}

/** Stops accepting, drains in-flight requests (and open sessions), closes the runtime, and lets the process end. */
async function drainAndStop(serving: Serving, signal: string): Promise<void> {
  const { runtime, listening, options, logger } = serving;
  const { servers } = listening;
  logger.log({ level: 'info', event: 'draining', signal, in_flight: runtime.inFlight });
  // open sessions are still served while they drain, on new connections too
  if (!runtime.sessions) {
    for (const each of servers) {
      each.close();
      each.closeIdleConnections();
    }
  }
  const drained = await runtime.drain(options.drainMs);
  for (const each of servers) {
    each.close();
    each.closeAllConnections();
  }
  if (listening.socketPath !== undefined) removeSocketFile(listening.socketPath);
  await serving.metrics?.close();
  await runtime.close();
  logger.log({ level: drained ? 'info' : 'warn', event: 'stopped', drained });
  if (serving.lifeline) process.stdin.destroy();
  process.exitCode = 0;
  // nothing should be left; if a handle lingers (a stuck subprocess pipe), do not wait for it
  setTimeout(() => process.exit(0), 2_000).unref();
}

/**
 * A warm process: waits for its serve request, then serves it as a cold start with those options
 * and that environment would. Its standard input ending first (the pool, or the engine, let it go) ends it.
 */
async function serveWhenAsked(): Promise<number> {
  let request: ServeRequest | undefined;
  try {
    request = await waitForRequest(writeLine);
  } catch (error) {
    const code = fail(`the serve request cannot be read: ${messageOf(error)}`);
    process.stdin.destroy();
    return code;
  }
  if (request === undefined) {
    process.stdin.destroy();
    return 0;
  }
  replaceEnvironment(request.env);
  const code = await main(request.args);
  if (code !== 0) process.stdin.destroy();
  return code;
}

const warm = process.argv.slice(2).includes('--warm');
process.exitCode = warm ? await serveWhenAsked() : await main(process.argv.slice(2));
