/**
 * The background engine gives way to its instances when every core is busy. On Linux the scheduler
 * shares the CPU out between autogroups (one per session) before the processes in them; the engine
 * runs in a session of its own (it is started detached) and every instance in one of its own
 * (src/runtime/host/process.ts), so the engine lowers the weight of its own group and of nothing else.
 * The instances do the work the gateway passes on: when the machine is saturated, CPU the engine
 * takes is CPU the slowest step of every request does not get. Measured on a 2-core machine
 * (docs/engine.md, "CPU priority"): the gateway's throughput went from about 0.9 to about 1.03 of
 * calling the instance directly. With idle cores nothing changes.
 *
 * Only a process that leads its own session changes its group: an engine in the foreground shares
 * the terminal's group, and lowering that would slow the user's shell too.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** The autogroup nice value the background engine takes unless MCPCTL_ENGINE_NICE says otherwise. */
export const DEFAULT_ENGINE_NICE = 5;
const MAX_NICE = 19;

/** MCPCTL_ENGINE_NICE: a whole number from 0 (off) to 19; unset is the default. */
export function engineNiceFromEnv(env: Record<string, string | undefined>): { nice: number; problem?: string } {
  const raw = env.MCPCTL_ENGINE_NICE?.trim();
  if (raw === undefined || raw === '') return { nice: DEFAULT_ENGINE_NICE };
  const nice = Number(raw);
  if (Number.isInteger(nice) && nice >= 0 && nice <= MAX_NICE) return { nice };
  return {
    nice: DEFAULT_ENGINE_NICE,
    problem: `MCPCTL_ENGINE_NICE is ${JSON.stringify(raw)}: it takes a whole number from 0 (off) to ${MAX_NICE}; using ${DEFAULT_ENGINE_NICE}`,
  };
}

/** The session id in the text of /proc/<pid>/stat: the fourth field after the command's closing parenthesis. */
export function sessionOf(stat: string): number | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const session = Number(fields[3]);
  return Number.isInteger(session) && session > 0 ? session : undefined;
}

export type PriorityOutcome = 'lowered' | 'off' | 'not supported' | 'not a session leader';

export interface PriorityHost {
  pid: number;
  read(path: string): string;
  write(path: string, text: string): void;
}

const procHost: PriorityHost = {
  pid: process.pid,
  read: (path) => readFileSync(path, 'utf8'),
  write: (path, text) => writeFileSync(path, text),
};

/**
 * Sets this process's autogroup to `nice` when it leads its own session. 'not supported' where
 * there are no autogroups (another system, a kernel without them, a read-only /proc): the engine
 * runs as before.
 */
export function yieldToInstances(nice: number, host: PriorityHost = procHost): PriorityOutcome {
  if (nice === 0) return 'off';
  let stat: string;
  try {
    host.read('/proc/self/autogroup');
    stat = host.read('/proc/self/stat');
  } catch {
    return 'not supported';
  }
  if (sessionOf(stat) !== host.pid) return 'not a session leader';
  try {
    host.write('/proc/self/autogroup', String(nice));
    return 'lowered';
  } catch {
    return 'not supported';
  }
}
