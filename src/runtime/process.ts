/**
 * Starts a bundle in its own Node process (`serve-bundle.js`) and waits until it reports the port
 * it listens on. The child gets PATH and the given environment (a deployment's env_vars), never
 * the parent's whole environment.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { problemText, type Problem } from '../shared/errors.js';
import { HEALTH_PATH, MCP_PATH } from './constants.js';

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

/** The compiled entry. From sources (tests), the build output in dist/ is used. */
export function serveBundleEntry(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return join(dirname(here), 'serve-bundle.js');
  return resolve(dirname(here), '../../dist/runtime/serve-bundle.js');
}

export async function startRuntimeProcess(options: StartRuntimeOptions): Promise<RuntimeProcess> {
  const entry = serveBundleEntry();
  if (!existsSync(entry)) throw new RuntimeProcessError(`${entry} does not exist: build mcpctl first (npm run build)`, [], [], 'missing');
  const host = options.host ?? '127.0.0.1';
  const args = [entry, '--bundle', options.bundleDir, '--port', String(options.port ?? 0), '--host', host, '--log-level', options.logLevel ?? 'info'];
  for (const name of options.allowedHosts ?? []) args.push('--allowed-host', name);
  // The process gets only PATH and these values (a deployment's env_vars): every one is a secret.
  args.push('--env-is-secret');
  const env: Record<string, string> = { ...(process.env.PATH === undefined ? {} : { PATH: process.env.PATH }), ...options.env };
  if (process.platform === 'win32' && process.env.SystemRoot !== undefined) env.SystemRoot = process.env.SystemRoot;

  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const recent: string[] = [];
  const keep = (line: string): void => {
    recent.push(line);
    if (recent.length > KEPT_LINES) recent.shift();
  };

  let listening: { port: number; url: string } | undefined;
  let failure: { error: string; problems: Problem[] } | undefined;
  const ready = new Promise<{ port: number; url: string }>((resolve, reject) => {
    const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const timer = setTimeout(() => {
      reject(new RuntimeProcessError(`the runtime did not report listening within ${timeoutMs} ms`, recent, [], 'timeout'));
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
            ? new RuntimeProcessError(`the runtime exited before listening (${signal ?? `code ${code}`})`, recent, [], signal === null ? 'exited' : 'killed')
            : startFailure(failure),
        );
      }, 50);
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
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
    createInterface({ input: child.stderr }).on('line', (line) => {
      keep(line);
      if (listening !== undefined) options.onLog?.(line);
    });
  });

  const stop = async (graceMs = 10_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  let event: { port: number; url: string };
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
    pid: child.pid!,
    port: event.port,
    url: event.url,
    mcpUrl: `${event.url}${MCP_PATH}`,
    healthUrl: `${event.url}${HEALTH_PATH}`,
    exited,
    stop,
    [Symbol.asyncDispose]: () => stop(),
  };
}

/** A `start_failed` line: its message and its problems, `{ path, message }` each. */
function parseStartFailed(line: string): { error: string; problems: Problem[] } | undefined {
  try {
    const value = JSON.parse(line) as { event?: unknown; error?: unknown; problems?: unknown };
    if (value.event !== 'start_failed' || typeof value.error !== 'string') return undefined;
    const problems: Problem[] = [];
    for (const item of Array.isArray(value.problems) ? (value.problems as unknown[]) : []) {
      const { path, message } = (item ?? {}) as { path?: unknown; message?: unknown };
      if (typeof message === 'string') problems.push(typeof path === 'string' && path !== '' ? { path, message } : { message });
    }
    return { error: value.error, problems };
  } catch {
    return undefined;
  }
}

function parseListening(line: string): { port: number; url: string } | undefined {
  try {
    const value = JSON.parse(line) as { event?: unknown; port?: unknown; url?: unknown };
    if (value.event === 'listening' && typeof value.port === 'number' && typeof value.url === 'string') return { port: value.port, url: value.url };
  } catch {
    // not JSON
  }
  return undefined;
}
