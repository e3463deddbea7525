/**
 * The process runner's Unix sockets: each instance gets its own in the runner's folder (created
 * private), and none when its path would be longer than the system takes (the instance is then
 * reached on its port only). The runtime is played by a starter that records what it was asked.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createProcessRunner } from '../../../../src/engine/runners/process/process-runner.js';
import type { StartInstanceSpec } from '../../../../src/engine/runners/runner.js';
import type {
  RuntimeProcessHandle,
  RuntimeProcessOptions,
  StartRuntimeProcess,
} from '../../../../src/engine/services.js';
import { staleSocket } from '../../../support/http.js';

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpctl-runner-'));
  temps.push(dir);
  return dir;
}

/** A starter that says it listens on the socket it was given (as serve-bundle does), without a process. */
function recordingStarter(asked: RuntimeProcessOptions[]): StartRuntimeProcess {
  return async (options) => {
    asked.push(options);
    const handle: RuntimeProcessHandle = {
      pid: 0,
      port: 1,
      url: 'http://127.0.0.1:1',
      mcpUrl: 'http://127.0.0.1:1/mcp',
      healthUrl: 'http://127.0.0.1:1/health',
      ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath }),
      exited: new Promise(() => {}),
      stop: async () => {},
      [Symbol.asyncDispose]: async () => {},
    };
    return handle;
  };
}

const SPEC: StartInstanceSpec = {
  labels: { engine: '/home', deployment: 'd', instance: 'i1' },
  bundleDir: '/bundle',
  env: {},
  logLevel: 'info',
  limits: { startTimeoutMs: 1_000 },
  onLog: () => {},
};

describe('the process runner’s sockets', () => {
  it('gives each instance a socket of its own in a private folder', async () => {
    const asked: RuntimeProcessOptions[] = [];
    const dir = join(await tempDir(), 'run');
    const runner = createProcessRunner(recordingStarter(asked), { socketDir: dir });
    const first = await runner.start(SPEC);
    const second = await runner.start({ ...SPEC, labels: { ...SPEC.labels, instance: 'i2' } });
    expect(first.socketPath).toMatch(new RegExp(`^${dir}/[0-9a-f]+\\.sock$`));
    expect(second.socketPath).not.toBe(first.socketPath);
    expect(asked.map((options) => options.socketPath)).toEqual([first.socketPath, second.socketPath]);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('removes the sockets an earlier engine’s killed instances left, before its first start, and nothing else', async () => {
    const dir = await tempDir();
    const left = join(dir, 'abcdef012345.sock');
    await staleSocket(left);
    writeFileSync(join(dir, 'notes.sock'), 'not a socket');
    const runner = createProcessRunner(recordingStarter([]), { socketDir: dir });
    await runner.start(SPEC);
    expect(existsSync(left)).toBe(false);
    expect(existsSync(join(dir, 'notes.sock'))).toBe(true);
  });

  it('gives none when the path would be too long, or without a folder: the instance is reached on its port', async () => {
    const asked: RuntimeProcessOptions[] = [];
    const long = join(await tempDir(), 'x'.repeat(100));
    for (const runner of [
      createProcessRunner(recordingStarter(asked), { socketDir: long }),
      createProcessRunner(recordingStarter(asked)),
    ]) {
      const instance = await runner.start(SPEC);
      expect(instance.socketPath).toBeUndefined();
      expect(instance.port).toBe(1);
    }
    expect(asked.map((options) => options.socketPath)).toEqual([undefined, undefined]);
  });
});
