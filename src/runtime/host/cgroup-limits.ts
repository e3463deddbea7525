/**
 * Memory and CPU limits of runtime processes, enforced by the kernel through Linux control groups
 * where the engine may create them (it runs as root, or was given a delegated cgroup v2 subtree):
 * each limited instance gets a group of its own under `mcpctl-<engine>`, holding its process and
 * everything it starts (an exec tool's commands too), removed when it ends. Over its memory, the
 * kernel ends the instance (the supervisor restarts it); over its CPU, it is throttled.
 *
 * Both hierarchies are served: v2 (`memory.max`, `cpu.max`) and v1 (`memory.limit_in_bytes`,
 * `cpu.cfs_quota_us`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = '/sys/fs/cgroup';
const CPU_PERIOD_US = 100_000;

export interface ResourceLimits {
  memoryMb?: number;
  cpus?: number;
}

/** One instance's group: it holds `pid` once `add` returned. */
export interface LimitGroup {
  add(pid: number): void;
  remove(): Promise<void>;
}

export class CgroupLimiter {
  constructor(
    readonly version: 1 | 2,
    /** the engine's own group in each controller's hierarchy (one folder on v2) */
    private readonly bases: { memory: string; cpu: string },
  ) {}

  /** A group with these limits; its process is added once it runs. */
  group(limits: ResourceLimits): LimitGroup {
    const name = randomBytes(6).toString('hex');
    const made: string[] = [];
    const make = (base: string) => {
      const dir = join(base, name);
      if (!made.includes(dir)) {
        mkdirSync(dir);
        made.push(dir);
      }
      return dir;
    };
    try {
      if (this.version === 2) {
        const dir = make(this.bases.memory);
        if (limits.memoryMb !== undefined) writeFileSync(join(dir, 'memory.max'), String(bytes(limits.memoryMb)));
        if (limits.memoryMb !== undefined && existsSync(join(dir, 'memory.swap.max')))
          writeFileSync(join(dir, 'memory.swap.max'), '0');
        if (limits.cpus !== undefined) writeFileSync(join(dir, 'cpu.max'), `${quota(limits.cpus)} ${CPU_PERIOD_US}`);
      } else {
        if (limits.memoryMb !== undefined)
          writeFileSync(join(make(this.bases.memory), 'memory.limit_in_bytes'), String(bytes(limits.memoryMb)));
        if (limits.cpus !== undefined) {
          const dir = make(this.bases.cpu);
          writeFileSync(join(dir, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
          writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota(limits.cpus)));
        }
      }
    } catch (error) {
      for (const dir of made) rmdirQuietly(dir);
      throw error;
    }
    return {
      add: (pid) => {
        for (const dir of made) writeFileSync(join(dir, 'cgroup.procs'), String(pid));
      },
      remove: async () => {
        // the kernel frees a group a moment after its last process is reaped
        for (const dir of made) {
          for (let attempt = 0; attempt < 20; attempt += 1) {
            try {
              await rmdir(dir);
              break;
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOENT') break;
              await sleep(50);
            }
          }
        }
      },
    };
  }
}

function bytes(memoryMb: number): number {
  return Math.round(memoryMb * 1024 * 1024);
}

function quota(cpus: number): number {
  return Math.max(1_000, Math.round(cpus * CPU_PERIOD_US));
}

function rmdirQuietly(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // left for the next start's sweep
  }
}

/**
 * The limiter this process may use, proven by making (and removing) a group: undefined, with the
 * reason, when control groups cannot be written here (not root, not Linux, a read-only /sys).
 */
export function findCgroupLimiter(engineHome: string): { limiter?: CgroupLimiter; reason?: string } {
  if (process.platform !== 'linux') return { reason: `control groups need Linux (this is ${process.platform})` };
  const name = `mcpctl-${createHash('sha256').update(engineHome).digest('hex').slice(0, 12)}`;
  try {
    if (existsSync(join(ROOT, 'cgroup.controllers'))) {
      const base = join(ROOT, name);
      // the controllers must be handed down to the engine's folder and from it to each group
      writeFileSync(join(ROOT, 'cgroup.subtree_control'), '+memory +cpu');
      mkdirSync(base, { recursive: true });
      writeFileSync(join(base, 'cgroup.subtree_control'), '+memory +cpu');
      return { limiter: proven(new CgroupLimiter(2, { memory: base, cpu: base })) };
    }
    const memory = join(ROOT, 'memory', name);
    const cpu = join(ROOT, 'cpu', name);
    mkdirSync(memory, { recursive: true });
    mkdirSync(cpu, { recursive: true });
    return { limiter: proven(new CgroupLimiter(1, { memory, cpu })) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      reason: `control groups cannot be written here (${code ?? String(error)}): memory is limited by Node's heap size only, CPU not at all`,
    };
  }
}

/** The limiter, once a group with both limits could be made and removed. */
function proven(limiter: CgroupLimiter): CgroupLimiter {
  const group = limiter.group({ memoryMb: 64, cpus: 1 });
  void group.remove();
  return limiter;
}
