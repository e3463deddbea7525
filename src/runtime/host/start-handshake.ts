/**
 * The start handshake of a runtime process: it has until the start time-out to write its
 * `listening` line (or to say, with `start_failed`, why it cannot serve). Until then its lines are
 * kept for the error; after, they are its log. Its resource limits are applied as soon as its own
 * process id is known.
 */
import type { Problem } from '../../shared/errors.js';
import { HEALTH_PATH, MCP_PATH } from '../constants.js';
import { parseListening, parseStartFailed, type Listening } from './process-lines.js';
import type { Exit, Spawned, StartRuntimeOptions } from './process-spawn.js';
import { endedError, RuntimeProcessError, spawnError, startFailure } from './process-start-error.js';
import { killChild, stopChild } from './process-stop.js';

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
  exited: Promise<Exit>;
  /** SIGTERM (the runtime drains in-flight requests), then SIGKILL after graceMs (default 10 s) */
  stop(graceMs?: number): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The documented start time-out (docs/deployments.md): the process has this long to report its port. */
export const DEFAULT_START_TIMEOUT_MS = 30_000;

const KEPT_LINES = 20;

/** Adds a line to `recent`, which keeps the last few only (what an error shows of the process's output). */
export function keepRecent(recent: string[]): (line: string) => void {
  return (line) => {
    recent.push(line);
    if (recent.length > KEPT_LINES) recent.shift();
  };
}

/** Waits for the listening line of a started (or just served) process; `earlier` are lines it wrote before. */
export async function watchStart(
  spawned: Spawned,
  options: StartRuntimeOptions,
  earlier: string[],
): Promise<RuntimeProcess> {
  const ready = waitForListening(spawned, options, [...earlier]);
  const pid = await limitResources(spawned, options);
  let event: Listening;
  try {
    event = await ready;
  } catch (error) {
    await killChild(spawned);
    throw error;
  }
  const stop = (graceMs = 10_000): Promise<void> => stopChild(spawned, graceMs);
  return {
    pid,
    port: event.port,
    url: event.url,
    mcpUrl: `${event.url}${MCP_PATH}`,
    healthUrl: `${event.url}${HEALTH_PATH}`,
    ...(event.socket === undefined ? {} : { socketPath: event.socket }),
    exited: spawned.exited,
    stop,
    [Symbol.asyncDispose]: () => stop(),
  };
}

/** Resolves with the listening line; rejects when the process ends, cannot be spawned, or takes too long. */
function waitForListening(spawned: Spawned, options: StartRuntimeOptions, recent: string[]): Promise<Listening> {
  const keep = keepRecent(recent);
  let listening: Listening | undefined;
  let failure: { error: string; problems: Problem[] } | undefined;
  return new Promise<Listening>((resolve, reject) => {
    const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const timer = setTimeout(() => {
      reject(
        new RuntimeProcessError(`the runtime did not report listening within ${timeoutMs} ms`, recent, [], 'timeout'),
      );
    }, timeoutMs);
    spawned.child.once('error', (error) => {
      clearTimeout(timer);
      reject(spawnError(error, recent));
    });
    void spawned.exited.then((exit) => {
      clearTimeout(timer);
      // stderr may still hold the reason: give its last lines a moment to arrive
      setTimeout(() => {
        reject(
          failure === undefined
            ? endedError('the runtime exited before listening', exit, recent)
            : startFailure(failure),
        );
      }, 50);
    });
    spawned.stdout.on('line', (line) => {
      if (listening !== undefined) {
        options.onLog?.(line);
        return;
      }
      listening = parseListening(line);
      if (listening !== undefined) {
        clearTimeout(timer);
        resolve(listening);
        return;
      }
      // a start_failed line says, as data, what stderr says in words
      const failed = parseStartFailed(line);
      if (failed === undefined) keep(line);
      else failure = failed;
    });
    spawned.stderr.on('line', (line) => {
      keep(line);
      if (listening !== undefined) options.onLog?.(line);
    });
  });
}

/**
 * Puts the process under its resource limits, which hold from now on for it and whatever it starts;
 * when they cannot be applied it says so in its log and runs without. Resolves with its own pid.
 */
async function limitResources(spawned: Spawned, options: StartRuntimeOptions): Promise<number> {
  const { child } = spawned;
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
  return pid;
}
