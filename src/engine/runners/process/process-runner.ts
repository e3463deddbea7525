/**
 * The process runner: each instance is a Node child process of the engine (the runtime's
 * `serve-bundle`) on its own loopback port. Its labels travel in its environment
 * (MCPCTL_INSTANCE), so a restarted engine finds the processes it left (Linux: /proc). A child
 * process cannot be taken over by another engine process (its output pipes ended with the old
 * one), so what it finds is stopped, and the deployment starts new instances.
 *
 * Given a folder for sockets (`<home>/run`, private as the home is), each instance also listens on
 * a Unix socket of its own there, and the gateway reaches it over that socket: cheaper than TCP
 * on loopback. Health checks, and everyone else, use its port. A socket is removed once its
 * process has exited, and those an earlier engine's killed instances left are removed at the first start.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { removeSocketFile } from '../../../shared/socket-file.js';
import { SETTINGS } from '../../../shared/settings.js';
import { TASKS_DIR_ENV } from '../../../runtime/constants.js';
import { isProcessAlive } from '../../engine-lock.js';
import { prepareTasksDir } from '../../deployments/task-folder.js';
import type { StartRuntimeProcess } from '../../services.js';
import {
  RunnerStartError,
  type FoundInstance,
  type InstanceLabels,
  type Runner,
  type RunnerInstance,
} from '../runner.js';

/** The environment variable that carries an instance's labels (JSON). */
export const LABELS_ENV = SETTINGS.instanceLabels.env;

/** The longest Unix socket path the system takes (sun_path, less its final NUL). */
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103;

export interface ProcessRunnerOptions {
  /** where instances' Unix sockets go (created, mode 0700, when missing); without it, TCP only */
  socketDir?: string;
}

export function createProcessRunner(startRuntime: StartRuntimeProcess, options: ProcessRunnerOptions = {}): Runner {
  let folder: Promise<boolean> | undefined;
  /** A new socket path for an instance, when sockets can be used at all. */
  const socketPath = async (): Promise<string | undefined> => {
    const dir = options.socketDir;
    if (dir === undefined || process.platform === 'win32') return undefined;
    const path = join(dir, `${randomBytes(6).toString('hex')}.sock`);
    // a longer path cannot be bound: the instance is reached on its port
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return undefined;
    folder ??= prepareSocketDir(dir);
    return (await folder) ? path : undefined;
  };
  return {
    kind: 'process',
    async start(spec): Promise<RunnerInstance> {
      const socket = await socketPath();
      if (spec.tasksDir !== undefined) await prepareTasksDir(spec.tasksDir);
      const handle = await startRuntime({
        bundleDir: spec.bundleDir,
        host: '127.0.0.1',
        port: 0,
        env: {
          ...spec.env,
          [LABELS_ENV]: JSON.stringify(spec.labels),
          ...(spec.tasksDir === undefined ? {} : { [TASKS_DIR_ENV]: spec.tasksDir }),
        },
        ...(spec.tasksDir === undefined ? {} : { sharedDir: spec.tasksDir }),
        logLevel: spec.logLevel,
        startTimeoutMs: spec.limits.startTimeoutMs,
        ...(spec.resources === undefined ? {} : { resources: spec.resources }),
        ...(socket === undefined ? {} : { socketPath: socket }),
        onLog: (line) => spec.onLog(line),
      }).catch(async (error: unknown) => {
        if (socket !== undefined) await rm(socket, { force: true }).catch(() => {});
        const kind = (error as { kind?: unknown } | null)?.kind;
        const transient = kind === 'timeout' || kind === 'spawn' || kind === 'killed';
        throw new RunnerStartError(error instanceof Error ? error.message : String(error), transient, { cause: error });
      });
      // the instance removes its socket when it stops; a killed one cannot
      if (socket !== undefined) void handle.exited.then(() => rm(socket, { force: true }).catch(() => {}));
      return {
        labels: spec.labels,
        pid: handle.pid,
        host: '127.0.0.1',
        port: handle.port,
        ...(handle.socketPath === undefined ? {} : { socketPath: handle.socketPath }),
        exited: handle.exited.then(readExit),
        stop: (graceMs) => handle.stop(graceMs),
        health: (timeoutMs) => probeHealth(handle.healthUrl, timeoutMs),
      };
    },
    find: findProcesses,
  };
}

/**
 * Creates the sockets' folder (mode 0700), and removes the sockets left in it by instances that
 * were killed with an earlier engine (before this runner started any): false when it cannot be made.
 */
async function prepareSocketDir(dir: string): Promise<boolean> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch {
    return false;
  }
  const names = await readdir(dir).catch(() => []);
  for (const name of names.filter((each) => each.endsWith('.sock'))) removeSocketFile(join(dir, name));
  return true;
}

/** The processes whose labels name this engine, but for this engine process's own children. */
async function findProcesses(engine: string): Promise<FoundInstance[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const found: FoundInstance[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    // this engine's own children are running instances, not leftovers; a sandbox's bwrap carries
    // its instance's labels too, and ends with it
    if ((await parentOf(pid)) === process.pid || (await commandOf(pid)) === 'bwrap') continue;
    const labels = await readLabels(pid);
    if (labels === undefined || labels.engine !== engine) continue;
    found.push({
      labels,
      pid,
      adopt: () => Promise.resolve(undefined),
      stop: (graceMs) => stopPid(pid, graceMs),
    });
  }
  return found;
}

async function parentOf(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

async function commandOf(pid: number): Promise<string | undefined> {
  try {
    return (await readFile(`/proc/${pid}/comm`, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

async function readLabels(pid: number): Promise<InstanceLabels | undefined> {
  let environ: string;
  try {
    environ = await readFile(`/proc/${pid}/environ`, 'utf8');
  } catch {
    // gone, or another user's
    return undefined;
  }
  const entry = environ.split('\0').find((item) => item.startsWith(`${LABELS_ENV}=`));
  if (entry === undefined) return undefined;
  try {
    const value = JSON.parse(entry.slice(LABELS_ENV.length + 1)) as Partial<InstanceLabels>;
    if (typeof value.engine !== 'string' || typeof value.deployment !== 'string' || typeof value.instance !== 'string')
      return undefined;
    return { engine: value.engine, deployment: value.deployment, instance: value.instance };
  } catch {
    return undefined;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
async function stopPid(pid: number, graceMs: number): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
      return true;
    } catch {
      return false;
    }
  };
  if (!signal('SIGTERM')) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isProcessAlive(pid)) return;
    await sleep(50);
  }
  signal('SIGKILL');
  for (let i = 0; i < 40 && isProcessAlive(pid); i += 1) await sleep(50);
}

function readExit(value: unknown): { code: number | null; signal: string | null } {
  const exit = (typeof value === 'object' && value !== null ? value : {}) as Partial<
    Record<'code' | 'signal', unknown>
  >;
  return {
    code: typeof exit.code === 'number' ? exit.code : null,
    signal: typeof exit.signal === 'string' ? exit.signal : null,
  };
}

/** One GET of a health URL: true on a 2xx within the time-out. */
export function probeHealth(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300);
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(false));
  });
}
