/**
 * Stopping a runtime process: SIGTERM first, which lets it drain its in-flight requests, then
 * SIGKILL when it takes too long; at once when its start failed.
 */
import { signalPid } from './isolation.js';
import type { Spawned } from './process-spawn.js';

/**
 * SIGTERM (to the runtime itself: bwrap would not pass it on), then SIGKILL after `graceMs`;
 * resolves once it is gone.
 */
export async function stopChild(spawned: Spawned, graceMs: number): Promise<void> {
  const { child, exited } = spawned;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const inner = spawned.isolated.reportsPid ? await spawned.pid : undefined;
  if (inner === undefined) child.kill('SIGTERM');
  else signalPid(inner, 'SIGTERM');
  if (!(await exitsWithin(exited, graceMs))) {
    // the runtime first, and bwrap ends once it has reaped it: killing bwrap first would leave the
    // runtime to --die-with-parent, which takes it down only a moment after bwrap is gone
    if (inner !== undefined) {
      signalPid(inner, 'SIGKILL');
      if (await exitsWithin(exited, 1_000)) return;
    }
    child.kill('SIGKILL');
    await exited;
  }
}

/** SIGKILL, for a start that failed: nothing of it is worth waiting for. Resolves once it is gone. */
export async function killChild(spawned: Spawned): Promise<void> {
  const { child, exited } = spawned;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await exited;
}

/** Whether `exited` settles within `ms`. */
async function exitsWithin(exited: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const within = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return within;
}
