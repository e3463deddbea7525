/**
 * The background engine as `mcpctl engine start` runs it (dist/engine/daemon.js, detached, the
 * leader of its own process group), for tests that kill it, restart it or give it another runner.
 * The caller keeps the children it gets and kills what is left of them after the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { call, ROOT } from './app.js';
import { waitFor } from './wait.js';

/** What the engine writes to `engine.json` in its home once it listens. */
export interface DaemonState {
  url: string;
  apiKey: string;
  pid: number;
  runner?: string;
  swarm?: string;
}

/** Starts the daemon with exactly `env` (its home is env.MCPCTL_HOME) and adds it to `children`. */
export function spawnDaemon(env: NodeJS.ProcessEnv, children: ChildProcess[]): ChildProcess {
  const child = spawn(process.execPath, [join(ROOT, 'dist/engine/daemon.js')], {
    env,
    stdio: 'ignore',
    detached: true,
  });
  children.push(child);
  return child;
}

/** Waits until `home`'s engine.json names an engine that answers GET /v1/health with 200. */
export function waitForDaemon(home: string, timeoutMs = 60_000): Promise<DaemonState> {
  return waitFor(
    'the engine to listen',
    async () => {
      try {
        const state = JSON.parse(await readFile(join(home, 'engine.json'), 'utf8')) as DaemonState;
        const health = await call(state.url, 'GET', '/v1/health', { key: state.apiKey }).catch(() => undefined);
        return health?.status === 200 ? state : undefined;
      } catch {
        return undefined;
      }
    },
    timeoutMs,
  );
}
