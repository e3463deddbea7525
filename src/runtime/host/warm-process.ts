/**
 * A warm runtime process (the engine's pool): spawned ahead of time with `serve-bundle --warm`, it
 * loads Node, the MCP SDK and the runtime, says so, and waits for the one bundle it will serve.
 * Handed that bundle, it goes through the same start handshake as a cold start.
 */
import { isolate, type Isolation } from './isolation.js';
import { parseWarm } from './process-lines.js';
import {
  existingEntry,
  runtimeEnvironment,
  serveArgs,
  spawnRuntime,
  type Exit,
  type Spawned,
  type StartRuntimeOptions,
} from './process-spawn.js';
import { endedError, RuntimeProcessError, spawnError } from './process-start-error.js';
import { stopChild } from './process-stop.js';
import { DEFAULT_START_TIMEOUT_MS, keepRecent, watchStart, type RuntimeProcess } from './start-handshake.js';

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
  const recent: string[] = [];
  const ready = watchWarmUp(spawned, options.readyTimeoutMs ?? DEFAULT_START_TIMEOUT_MS, recent);
  let served = false;
  // in a sandbox, the runtime's own id (bwrap reports it at once), as a started process has
  let pid = spawned.child.pid ?? 0;
  void spawned.pid.then((inner) => {
    if (inner !== undefined) pid = inner;
  });
  return {
    get pid() {
      return pid;
    },
    ready,
    exited: spawned.exited,
    async serve(serveOptions) {
      if (served) throw new Error('a warm runtime process serves one bundle only');
      served = true;
      await ready;
      return handOver(spawned, serveOptions, recent);
    },
    stop: (graceMs = 2_000) => stopChild(spawned, graceMs),
  };
}

/**
 * Resolves once the process says it is warm; rejects when it ends, cannot be spawned, or takes
 * longer than `timeoutMs`.
 */
function watchWarmUp(spawned: Spawned, timeoutMs: number, recent: string[]): Promise<void> {
  const keep = keepRecent(recent);
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new RuntimeProcessError(`the warm runtime was not ready within ${timeoutMs} ms`, recent, [], 'timeout')),
      timeoutMs,
    );
    void spawned.exited.then((exit) => {
      clearTimeout(timer);
      reject(endedError('the warm runtime exited', exit, recent));
    });
    spawned.child.once('error', (error) => {
      clearTimeout(timer);
      reject(spawnError(error, recent));
    });
    spawned.stdout.on('line', (line) => {
      if (parseWarm(line)) {
        clearTimeout(timer);
        resolve();
      } else keep(line);
    });
  });
  spawned.stderr.on('line', keep);
  // a rejection nobody waits for (a pool that let it go) is not an error of the engine
  ready.catch(() => {});
  return ready;
}

/** Tells a warm process what to serve (its options and whole environment) and waits for it to listen. */
function handOver(spawned: Spawned, options: StartRuntimeOptions, recent: string[]): Promise<RuntimeProcess> {
  // from here on its lines belong to the start
  spawned.stdout.removeAllListeners('line');
  spawned.stderr.removeAllListeners('line');
  const { isolated } = spawned;
  const socketPath = isolated.socketPath(options.socketPath);
  const inside = {
    ...options,
    bundleDir: isolated.bundle(options.bundleDir),
    ...(socketPath === undefined ? {} : { socketPath }),
  };
  spawned.child.stdin!.write(`${JSON.stringify({ args: serveArgs(inside), env: runtimeEnvironment(options.env) })}\n`);
  return watchStart(spawned, options, recent);
}
