/**
 * What a runtime process runs under when the engine starts it: its sandbox (sandbox.ts) and its
 * memory and CPU limits (cgroup-limits.ts). `isolate` turns the engine's choice into one process's
 * command line, its slot, its limit group, and the clean-up once it ends.
 */
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import type { CgroupLimiter, LimitGroup, ResourceLimits } from './cgroup-limits.js';
import type { Sandbox, SandboxSlot } from './sandbox.js';

export interface Isolation {
  /** the process sandbox; none where the machine has none (the engine says so) */
  sandbox?: Sandbox;
  /** memory and CPU limits through control groups; none where the engine may not make them */
  limiter?: CgroupLimiter;
}

/** One process's isolation, from its spawn to its end. */
export interface Isolated {
  /** bwrap reports the sandboxed process's id on a fourth pipe */
  readonly reportsPid: boolean;
  /** the program to spawn, and its arguments, for Node with these arguments */
  command(nodeArgs: string[]): { program: string; args: string[] };
  /** the Unix socket the process may listen on, given the one asked for */
  socketPath(requested: string | undefined): string | undefined;
  /** the bundle path the process reads (a warm process's slot, once the bundle is linked there) */
  bundle(bundleDir: string): string;
  /** puts the process (and what it starts) under these limits; false when nothing enforces them */
  limit(pid: number, resources: ResourceLimits | undefined): boolean;
  /** removes its slot and its group (it has ended) */
  end(): Promise<void>;
}

/** The isolation of one process: cold (`bundleDir` known) or warm (its bundle comes later). */
export function isolate(isolation: Isolation | undefined, bundleDir?: string, sharedDir?: string): Isolated {
  const slot: SandboxSlot | undefined = isolation?.sandbox?.slot(bundleDir, sharedDir);
  let group: LimitGroup | undefined;
  return {
    reportsPid: slot !== undefined,
    command(nodeArgs) {
      if (slot === undefined || isolation?.sandbox === undefined) return { program: process.execPath, args: nodeArgs };
      return {
        program: isolation.sandbox.program,
        args: ['--info-fd', '3', ...slot.args, process.execPath, ...nodeArgs],
      };
    },
    socketPath: (requested) => (requested === undefined || slot === undefined ? requested : slot.socketPath),
    bundle: (dir) => (slot === undefined || bundleDir !== undefined ? dir : slot.adopt(dir)),
    limit(pid, resources) {
      if (resources === undefined || (resources.memoryMb === undefined && resources.cpus === undefined)) return true;
      const limiter: CgroupLimiter | undefined = isolation?.limiter;
      if (limiter === undefined) return false;
      group = limiter.group(resources);
      group.add(pid);
      return true;
    },
    async end() {
      await Promise.all([slot?.remove(), group?.remove()]);
    },
  };
}

/** The sandboxed process's id, from bwrap's `--info-fd` report (`{"child-pid": N, …}`). */
export function readReportedPid(stream: Readable | null | undefined): Promise<number | undefined> {
  if (stream === null || stream === undefined) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let text = '';
    const done = (pid: number | undefined) => {
      stream.removeAllListeners('data');
      stream.resume();
      resolve(pid);
    };
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (match !== null) done(Number(match[1]));
      else if (text.length > 4096) done(undefined);
    });
    stream.once('end', () => done(undefined));
    stream.once('error', () => done(undefined));
  });
}

/** Node's heap limit for a memory limit nothing else enforces (most of it; the rest is Node's own). */
export function heapLimitArgs(isolation: Isolation | undefined, resources: ResourceLimits | undefined): string[] {
  if (resources?.memoryMb === undefined || isolation?.limiter !== undefined) return [];
  return [`--max-old-space-size=${Math.max(16, Math.floor(resources.memoryMb * 0.75))}`];
}

/** bwrap ends with 128 + the signal that ended the sandboxed process: said as that signal. */
export function signalOf(code: number | null, signal: string | null): { code: number | null; signal: string | null } {
  if (signal !== null || code === null || code <= 128) return { code, signal };
  const name = Object.entries(constants.signals).find(([, number]) => number === code - 128)?.[0];
  return name === undefined ? { code, signal } : { code: null, signal: name };
}

/** Sends a signal to a process that may be gone already. */
export function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
