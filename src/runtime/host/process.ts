/**
 * Starts a bundle in its own Node process (`serve-bundle.js`) and waits until it reports the port
 * it listens on. The child gets PATH and the given environment (a deployment's env_vars), never
 * the parent's whole environment. `spawnWarmRuntimeProcess` starts one ahead of time, loaded and
 * waiting for its bundle (the engine's warm pool).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { problemText, type Problem } from '../../shared/errors.js';
import { packageRoot } from '../../shared/package-root.js';
import type { ResourceLimits } from './cgroup-limits.js';
import { HEALTH_PATH, MCP_PATH } from '../constants.js';
import { parseListening, parseStartFailed, parseWarm, type Listening } from './process-lines.js';
import {
  heapLimitArgs,
  isolate,
  readReportedPid,
  signalOf,
  signalPid,
  type Isolated,
  type Isolation,
} from './isolation.js';

export interface StartRuntimeOptions {
  bundleDir: string;
  /** 0 (the default) lets the system choose */
  port?: number;
  /** default 127.0.0.1 */
  host?: string;
  /** the runtime's environment: `${VAR}` references resolve from it */
  env?: Record<string, string>;
  logLevel?: 'info' | 'debug';
  /** every line the process writes after it is listening (JSON log lines, and stderr as it is) */
  onLog?: (line: string) => void;
  /** extra Host header names to accept (a gateway's domain); `*` accepts any */
  allowedHosts?: string[];
  /** how long to wait for the listening line; default 30 s */
  startTimeoutMs?: number;
  /** a Unix socket to listen on as well (`--socket`); the start goes on without it when it cannot */
  socketPath?: string;
  /** the sandbox and the limits it runs under (the engine's process runner); none by default */
  isolation?: Isolation;
  /** memory and CPU limits (the deployment's `resources`), enforced as `isolation` allows */
  resources?: ResourceLimits;
}

export interface RuntimeProcess {
  pid: number;
  port: number;
  /** http://host:port */
  url: string;
  /** url + '/mcp' */
  mcpUrl: string;
  /** url + '/health' */
  healthUrl: string;
  /** the Unix socket it listens on as well, when it was given one and could listen there */
  socketPath?: string;
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** SIGTERM (the runtime drains in-flight requests), then SIGKILL after graceMs (default 10 s) */
  stop(graceMs?: number): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * How a start failed: `refused` (the runtime said why: the definition cannot be served),
 * `exited` (it ended with an exit code before listening), `killed` (by a signal), `timeout` (no
 * listening line in time), `spawn` (the process could not be created), `missing` (no entry file).
 * `timeout`, `killed` and `spawn` may go away by themselves (a busy machine); the others will not.
 */
export type StartFailureKind = 'refused' | 'exited' | 'killed' | 'timeout' | 'spawn' | 'missing';

/**
 * The process did not come up; `output` holds its last lines. When the runtime said why itself
 * (a definition it cannot serve), `problems` are its reasons, such as `tools[0].handler: …`, and
 * the message is one line.
 */
export class RuntimeProcessError extends Error {
  override readonly name = 'RuntimeProcessError';
  /** the runtime's reasons as lines of text (`tools[0].handler: …`), for people */
  readonly problems: string[];
  constructor(
    message: string,
    readonly output: string[],
    /** the runtime's reasons, each at its field of the definition */
    readonly details: Problem[] = [],
    readonly kind: StartFailureKind = 'exited',
  ) {
    super(output.length === 0 ? message : `${message}\n${output.map((line) => `  ${line}`).join('\n')}`);
    this.problems = details.map(problemText);
  }
}

/** The runtime's own report of a start that cannot work, as one error. */
function startFailure(report: { error: string; problems: Problem[] }): RuntimeProcessError {
  const { error, problems } = report;
  const unsaid = problems.map(problemText).filter((problem) => !error.includes(problem));
  const message = unsaid.length === 0 ? error : `${error.replace(/: \d+ problems$/, '')}: ${unsaid.join('; ')}`;
  return new RuntimeProcessError(message, [], problems, 'refused');
}

const KEPT_LINES = 20;
/** The documented start time-out (docs/deployments.md): the process has this long to report its port. */
export const DEFAULT_START_TIMEOUT_MS = 30_000;

/**
 * The compiled entry, in the package's dist/ (from sources, in tests, too: the build output):
 * the one-file build of it (rolldown.runtime.config.js), which loads faster, when it is there,
 * else tsc's output.
 */
export function serveBundleEntry(): string {
  const bundled = join(packageRoot(), 'dist', 'serve', 'serve-bundle.js');
  return existsSync(bundled) ? bundled : join(packageRoot(), 'dist', 'runtime', 'serve-bundle.js');
}

/** What a runtime process's environment holds: PATH (and SystemRoot on Windows) and the given values, nothing else of this process's. */
export function runtimeEnvironment(values: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    ...(process.env.PATH === undefined ? {} : { PATH: process.env.PATH }),
    ...values,
  };
  if (process.platform === 'win32' && process.env.SystemRoot !== undefined) env.SystemRoot = process.env.SystemRoot;
  return env;
}

/** The options of `serve-bundle` for a start. */
function serveArgs(options: StartRuntimeOptions): string[] {
  const args = [
    '--bundle',
    options.bundleDir,
    '--port',
    String(options.port ?? 0),
    '--host',
    options.host ?? '127.0.0.1',
    '--log-level',
    options.logLevel ?? 'info',
  ];
  for (const name of options.allowedHosts ?? []) args.push('--allowed-host', name);
  if (options.socketPath !== undefined) args.push('--socket', options.socketPath);
  // The process gets only PATH and these values (a deployment's env_vars): every one is a secret.
  args.push('--env-is-secret');
  return args;
}

function existingEntry(): string {
  const entry = serveBundleEntry();
  if (!existsSync(entry))
    throw new RuntimeProcessError(`${entry} does not exist: build mcpctl first (npm run build)`, [], [], 'missing');
  return entry;
}

type Exit = { code: number | null; signal: string | null };

/** A spawned runtime process and its output as lines. */
interface Spawned {
  child: ChildProcess;
  /** the runtime's own process id (inside a sandbox, not bwrap's): known once it runs */
  pid: Promise<number | undefined>;
  exited: Promise<Exit>;
  stdout: Interface;
  stderr: Interface;
  isolated: Isolated;
}

function spawnRuntime(
  nodeArgs: string[],
  env: Record<string, string>,
  stdin: 'ignore' | 'pipe',
  isolated: Isolated,
): Spawned {
  const { program, args } = isolated.command(nodeArgs);
  // In a session of its own: on Linux, its own scheduling group, which the background engine's
  // lower priority does not reach (src/engine/cpu-priority.ts). It still ends with its supervisor
  // (its standard input or output closes), and a terminal's Ctrl-C reaches the supervisor, which
  // stops it.
  const child = spawn(program, args, {
    stdio: [stdin, 'pipe', 'pipe', ...(isolated.reportsPid ? ['pipe' as const] : [])],
    env,
    detached: true,
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve(isolated.reportsPid ? signalOf(code, signal) : { code, signal }));
  });
  void exited.then(() => isolated.end()).catch(() => {});
  const pid = isolated.reportsPid ? readReportedPid(child.stdio[3] as Readable | null) : Promise.resolve(child.pid);
  // a write to a process that just died must not take this one down
  child.stdin?.on('error', () => {});
  return {
    child,
    pid,
    exited,
    isolated,
    stdout: createInterface({ input: child.stdout! }),
    stderr: createInterface({ input: child.stderr! }),
  };
}

/** SIGTERM (to the runtime itself: bwrap would not pass it on), then SIGKILL after `graceMs`; resolves once it is gone. */
async function stopChild(spawned: Spawned, graceMs: number): Promise<void> {
  const { child, exited } = spawned;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const inner = spawned.isolated.reportsPid ? await spawned.pid : undefined;
  if (inner === undefined) child.kill('SIGTERM');
  else signalPid(inner, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    // bwrap takes its sandbox down with it
    child.kill('SIGKILL');
    await exited;
  }
}

export async function startRuntimeProcess(options: StartRuntimeOptions): Promise<RuntimeProcess> {
  const entry = existingEntry();
  const isolated = isolate(options.isolation, options.bundleDir);
  const socketPath = isolated.socketPath(options.socketPath);
  const args = [
    ...heapLimitArgs(options.isolation, options.resources),
    entry,
    ...serveArgs({ ...options, ...(socketPath === undefined ? {} : { socketPath }) }),
  ];
  // Its standard input is a pipe this process holds and never writes: its end (this process gone,
  // even by SIGKILL) stops the server, without the server polling for it.
  let spawned: Spawned;
  try {
    spawned = spawnRuntime([...args, '--lifeline'], runtimeEnvironment(options.env), 'pipe', isolated);
  } catch (error) {
    await isolated.end();
    throw error;
  }
  return watchStart(spawned, options, []);
}

/**
 * A runtime process that has loaded Node, the MCP SDK and the runtime, and waits for the one
 * bundle it will serve (`serve-bundle --warm`). It is spawned before its environment is known:
 * `serve` hands it the environment a cold start would have had, which replaces its own whole.
 */
export interface WarmRuntimeProcess {
  readonly pid: number;
  /** resolves once it waits for a bundle; rejects when it ended (or did not get there in time) */
  readonly ready: Promise<void>;
  readonly exited: Promise<Exit>;
  /** serves this bundle; from here on it is a process of `startRuntimeProcess` (once only) */
  serve(options: StartRuntimeOptions): Promise<RuntimeProcess>;
  /** ends it unused: SIGTERM, SIGKILL after `graceMs` */
  stop(graceMs?: number): Promise<void>;
}

export interface WarmRuntimeOptions {
  /** its environment while it waits (PATH is added); the engine labels it so that it can find it again */
  env?: Record<string, string>;
  /** how long loading may take; default the start time-out */
  readyTimeoutMs?: number;
  /** the sandbox it waits in (its bundle is linked into its slot when it is given one) */
  isolation?: Isolation;
}

export function spawnWarmRuntimeProcess(options: WarmRuntimeOptions = {}): WarmRuntimeProcess {
  const spawned = spawnRuntime(
    [existingEntry(), '--warm'],
    runtimeEnvironment(options.env),
    'pipe',
    isolate(options.isolation),
  );
  const { child, exited, stdout, stderr } = spawned;
  const recent: string[] = [];
  const keep = (line: string): void => {
    recent.push(line);
    if (recent.length > KEPT_LINES) recent.shift();
  };
  let onLine: (line: string) => void = keep;
  const ready = new Promise<void>((resolve, reject) => {
    const timeoutMs = options.readyTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const timer = setTimeout(
      () =>
        reject(new RuntimeProcessError(`the warm runtime was not ready within ${timeoutMs} ms`, recent, [], 'timeout')),
      timeoutMs,
    );
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new RuntimeProcessError(
          `the warm runtime exited (${signal ?? `code ${code}`})`,
          recent,
          [],
          signal === null ? 'exited' : 'killed',
        ),
      );
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new RuntimeProcessError(`the runtime could not be started: ${error.message}`, recent, [], 'spawn'));
    });
    onLine = (line) => {
      if (parseWarm(line)) {
        clearTimeout(timer);
        resolve();
      } else keep(line);
    };
  });
  // a rejection nobody waits for (a pool that let it go) is not an error of the engine
  ready.catch(() => {});
  stdout.on('line', (line) => onLine(line));
  stderr.on('line', keep);
  let served = false;
  // in a sandbox, the runtime's own id (bwrap reports it at once), as a started process has
  let pid = child.pid ?? 0;
  void spawned.pid.then((inner) => {
    if (inner !== undefined) pid = inner;
  });
  return {
    get pid() {
      return pid;
    },
    ready,
    exited,
    async serve(serveOptions) {
      if (served) throw new Error('a warm runtime process serves one bundle only');
      served = true;
      await ready;
      // from here on its lines belong to the start
      onLine = () => {};
      stdout.removeAllListeners('line');
      stderr.removeAllListeners('line');
      const { isolated } = spawned;
      const socketPath = isolated.socketPath(serveOptions.socketPath);
      const inside = {
        ...serveOptions,
        bundleDir: isolated.bundle(serveOptions.bundleDir),
        ...(socketPath === undefined ? {} : { socketPath }),
      };
      child.stdin!.write(`${JSON.stringify({ args: serveArgs(inside), env: runtimeEnvironment(serveOptions.env) })}\n`);
      return watchStart(spawned, serveOptions, recent);
    },
    stop: (graceMs = 2_000) => stopChild(spawned, graceMs),
  };
}

/** Waits for the listening line of a started (or just served) process. */
async function watchStart(spawned: Spawned, options: StartRuntimeOptions, earlier: string[]): Promise<RuntimeProcess> {
  const { child, exited } = spawned;
  const recent: string[] = [...earlier];
  const keep = (line: string): void => {
    recent.push(line);
    if (recent.length > KEPT_LINES) recent.shift();
  };

  let listening: Listening | undefined;
  let failure: { error: string; problems: Problem[] } | undefined;
  const ready = new Promise<Listening>((resolve, reject) => {
    const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const timer = setTimeout(() => {
      reject(
        new RuntimeProcessError(`the runtime did not report listening within ${timeoutMs} ms`, recent, [], 'timeout'),
      );
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new RuntimeProcessError(`the runtime could not be started: ${error.message}`, recent, [], 'spawn'));
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      // stderr may still hold the reason: give its last lines a moment to arrive
      setTimeout(() => {
        reject(
          failure === undefined
            ? new RuntimeProcessError(
                `the runtime exited before listening (${signal ?? `code ${code}`})`,
                recent,
                [],
                signal === null ? 'exited' : 'killed',
              )
            : startFailure(failure),
        );
      }, 50);
    });
    spawned.stdout.on('line', (line) => {
      if (listening === undefined) {
        const event = parseListening(line);
        if (event !== undefined) {
          listening = event;
          clearTimeout(timer);
          resolve(event);
          return;
        }
        // a start_failed line says, as data, what stderr says in words
        const failed = parseStartFailed(line);
        if (failed === undefined) keep(line);
        else failure = failed;
        return;
      }
      options.onLog?.(line);
    });
    spawned.stderr.on('line', (line) => {
      keep(line);
      if (listening !== undefined) options.onLog?.(line);
    });
  });

  const stop = (graceMs = 10_000): Promise<void> => stopChild(spawned, graceMs);
  // its limits hold from now on, for it and whatever it starts
  const pid = (await spawned.pid) ?? child.pid ?? 0;
  if (pid > 0 && child.exitCode === null && child.signalCode === null) {
    try {
      spawned.isolated.limit(pid, options.resources);
    } catch (error) {
      options.onLog?.(
        JSON.stringify({
          level: 'warn',
          msg: `its resource limits could not be applied: ${error instanceof Error ? error.message : String(error)}`,
        }),
      );
    }
  }

  let event: Listening;
  try {
    event = await ready;
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    throw error;
  }
  return {
    pid,
    port: event.port,
    url: event.url,
    mcpUrl: `${event.url}${MCP_PATH}`,
    healthUrl: `${event.url}${HEALTH_PATH}`,
    ...(event.socket === undefined ? {} : { socketPath: event.socket }),
    exited,
    stop,
    [Symbol.asyncDispose]: () => stop(),
  };
}
