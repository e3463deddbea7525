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
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    // bwrap takes its sandbox down with it
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
