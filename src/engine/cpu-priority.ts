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
import { SETTINGS, settingValueOrDefault, type SettingSources } from '../shared/settings.js';

/** The autogroup nice value the background engine takes unless MCPCTL_ENGINE_NICE says otherwise. */
export const DEFAULT_ENGINE_NICE = SETTINGS.engineNice.default;

/**
 * MCPCTL_ENGINE_NICE, else `tuning.engine_nice` of the settings file: a whole number from 0 (off) to 19;
 * unset is the default. A bad value is a problem to log, not a reason to stay down.
 */
export function engineNice(sources: SettingSources): { nice: number; problem?: string } {
  const { value, problem } = settingValueOrDefault(SETTINGS.engineNice, sources);
  return problem === undefined ? { nice: value } : { nice: value, problem: `${problem}; using ${value}` };
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
