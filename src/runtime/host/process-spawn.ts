/**
 * Spawning a runtime process: where its entry file is, the options of `serve-bundle` for a start,
 * the environment it gets (PATH and the given values, never the parent's whole environment), and
 * the process itself with its output as lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { packageRoot } from '../../shared/package-root.js';
import type { ResourceLimits } from './cgroup-limits.js';
import { readReportedPid, signalOf, type Isolated, type Isolation } from './isolation.js';
import { RuntimeProcessError } from './process-start-error.js';
import { RUNTIME_NODE_FLAGS } from './node-flags.js';

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
  /** a folder the process may write inside its sandbox: its deployment's task state */
  sharedDir?: string;
}

/**
 * The compiled entry, in the package's dist/ (from sources, in tests, too: the build output):
 * the one-file build of it (rolldown.runtime.config.js), which loads faster, when it is there,
 * else tsc's output.
 */
export function serveBundleEntry(): string {
  const bundled = join(packageRoot(), 'dist', 'serve', 'serve-bundle.js');
  return existsSync(bundled) ? bundled : join(packageRoot(), 'dist', 'runtime', 'serve-bundle.js');
}

/**
 * What a runtime process's environment holds: PATH (and SystemRoot on Windows) and the given
 * values, nothing else of this process's.
 */
export function runtimeEnvironment(values: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {
    ...(process.env.PATH === undefined ? {} : { PATH: process.env.PATH }),
    ...values,
  };
  if (process.platform === 'win32' && process.env.SystemRoot !== undefined) env.SystemRoot = process.env.SystemRoot;
  return env;
}

/** The options of `serve-bundle` for a start. */
export function serveArgs(options: StartRuntimeOptions): string[] {
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

export function existingEntry(): string {
  const entry = serveBundleEntry();
  if (!existsSync(entry))
    throw new RuntimeProcessError(`${entry} does not exist: build mcpctl first (npm run build)`, [], [], 'missing');
  return entry;
}

export type Exit = { code: number | null; signal: string | null };

/** A spawned runtime process and its output as lines. */
export interface Spawned {
  child: ChildProcess;
  /** the runtime's own process id (inside a sandbox, not bwrap's): known once it runs */
  pid: Promise<number | undefined>;
  exited: Promise<Exit>;
  stdout: Interface;
  stderr: Interface;
  isolated: Isolated;
}

/** Spawns Node with the runtime's own options (node-flags.ts) and `nodeArgs`, under `isolated`. */
export function spawnRuntime(
  nodeArgs: string[],
  env: Record<string, string>,
  stdin: 'ignore' | 'pipe',
  isolated: Isolated,
): Spawned {
  const { program, args } = isolated.command([...RUNTIME_NODE_FLAGS, ...nodeArgs]);
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
