/** Temp folders for tests, each removed by its own handle. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDir {
  dir: string;
  /** removes the folder and all it holds */
  cleanup: () => Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function tempDir(prefix = 'mcpctl-test-'): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  return { dir, cleanup, [Symbol.asyncDispose]: cleanup };
}
