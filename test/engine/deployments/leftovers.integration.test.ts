/**
 * An engine that was killed leaves its instances running. The process runner labels each one
 * with its engine's home, so the next start of that engine finds and stops them, and never
 * touches an instance labelled for another engine.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LABELS_ENV } from '../../../src/engine/runners/process/process-runner.js';
import { isProcessAlive } from '../../../src/engine/engine-lock.js';
import { createHarness, eventually, type Harness } from '../../support/deployments.js';

let h: Harness;
const started: number[] = [];
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await h.close();
});

/** A process labelled as an instance of `engine`, whose parent has exited (as after a kill -9 of its engine). */
function leftInstance(engine: string): number {
  const labels = JSON.stringify({ engine, deployment: 'deploy_left', instance: 'i1' });
  const script = `const { spawn } = require('node:child_process');
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, ${LABELS_ENV}: ${JSON.stringify(labels)} } });
    child.unref();
    process.stdout.write(String(child.pid));`;
  const pid = Number(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
  started.push(pid);
  return pid;
}

describe('instances left by an engine that was killed', () => {
  it('are stopped when the engine starts again; those of other engines are left alone', async () => {
    const ours = leftInstance(h.home);
    const theirs = leftInstance(`${h.home}-another`);
    expect(isProcessAlive(ours)).toBe(true);
    await h.restart();
    await eventually(async () => expect(isProcessAlive(ours)).toBe(false));
    expect(isProcessAlive(theirs)).toBe(true);
  });
});
