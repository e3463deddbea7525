/**
 * Ending the CLI's process once a command is done. A natural exit tears down V8's heap and threads
 * after the last callback, about 20 to 40 ms of `mcpctl deploy` on 2 cores (`strace -f -tt`: the
 * munmaps between the last write and `exit_group`); `process.exit` skips that tear-down. It is
 * taken only when the natural exit would come next anyway: nothing but the process's own stdout
 * and stderr left open, and all output handed to the system.
 */
import * as nodeModule from 'node:module';

/** The parts of `process` (and `node:module`) looked at; tests pass their own. */
export interface ExitHost {
  stdout: { writableLength: number };
  stderr: { writableLength: number };
  /** the objects owning the handles that keep the event loop alive (`process._getActiveHandles`) */
  activeHandles: (() => unknown[]) | undefined;
  /** `process.getActiveResourcesInfo`: handles, requests and timers by type */
  activeResources: () => string[];
  /** Node's own compile cache (22.1 and later) and its flush (22.10 and later) */
  compileCache: { enableCompileCache?: unknown; flushCompileCache?: (() => void) | undefined };
  exit: () => void;
}

function processHost(): ExitHost {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    activeHandles: (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.bind(process),
    activeResources: () => process.getActiveResourcesInfo(),
    compileCache: nodeModule as ExitHost['compileCache'],
    exit: () => process.exit(),
  };
}

/** What stdout and stderr are, as resources: a terminal or a pipe (a file has no handle). */
const STDIO_RESOURCES = new Set(['TTYWrap', 'PipeWrap']);

/**
 * Exits (with `process.exitCode`) when nothing but stdout and stderr is left and no output is
 * queued; returns true then. Anything else still open (a timer, a socket, a child process or its
 * pipes, stdin once a command has used it, output still queued for a pipe written asynchronously)
 * keeps the natural exit, which waits for it. The `exit` listeners run either way; Node's own
 * compile cache is written first where Node can be asked to, else the natural exit is kept.
 */
export function exitIfIdle(host: ExitHost = processHost()): boolean {
  if (host.stdout.writableLength > 0 || host.stderr.writableLength > 0) return false;
  const handles = host.activeHandles?.();
  if (handles === undefined || !handles.every((handle) => handle === host.stdout || handle === host.stderr))
    return false;
  if (!host.activeResources().every((resource) => STDIO_RESOURCES.has(resource))) return false;
  if (host.compileCache.enableCompileCache !== undefined) {
    if (host.compileCache.flushCompileCache === undefined) return false;
    host.compileCache.flushCompileCache();
  }
  host.exit();
  return true;
}
