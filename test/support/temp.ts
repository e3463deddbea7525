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
  // retried: a process stopped just before may still be closing files in it
  const cleanup = () => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  return { dir, cleanup, [Symbol.asyncDispose]: cleanup };
}
