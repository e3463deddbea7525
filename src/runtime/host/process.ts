/**
 * Starts a bundle in its own Node process (`serve-bundle.js`) and waits until it reports the port
 * it listens on. The child gets PATH and the given environment (a deployment's env_vars), never
 * the parent's whole environment. `spawnWarmRuntimeProcess` starts one ahead of time, loaded and
 * waiting for its bundle (the engine's warm pool). What a start is made of lives beside this file:
 * spawning (process-spawn.ts), the start handshake (start-handshake.ts), the warm process
 * (warm-process.ts), stopping (process-stop.ts) and how a start fails (process-start-error.ts).
 */
import { heapLimitArgs, isolate } from './isolation.js';
import {
  existingEntry,
  runtimeEnvironment,
  serveArgs,
  spawnRuntime,
  type Spawned,
  type StartRuntimeOptions,
} from './process-spawn.js';
import { watchStart, type RuntimeProcess } from './start-handshake.js';

export { RuntimeProcessError, type StartFailureKind } from './process-start-error.js';
export { runtimeEnvironment, serveBundleEntry, type StartRuntimeOptions } from './process-spawn.js';
export { DEFAULT_START_TIMEOUT_MS, type RuntimeProcess } from './start-handshake.js';
export { spawnWarmRuntimeProcess, type WarmRuntimeOptions, type WarmRuntimeProcess } from './warm-process.js';

export async function startRuntimeProcess(options: StartRuntimeOptions): Promise<RuntimeProcess> {
  const entry = existingEntry();
  const isolated = isolate(options.isolation, options.bundleDir, options.sharedDir);
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
