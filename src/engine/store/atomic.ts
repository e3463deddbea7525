/**
 * Crash-safe file writes: write a temporary file beside the target, fsync it, rename it over the
 * target, fsync the folder. A reader (or a restart after `kill -9` or a power cut) sees the old
 * content or the new one, never a mix.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { asWriteError } from './storage-fault.js';

export const TEMP_SUFFIX = '.tmp';

export interface WriteAtomicOptions {
  /** file mode of the new file, such as 0o600 */
  mode?: number;
  /** skip the fsyncs (only for data that may be lost, never for records) */
  durable?: boolean;
}

export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: WriteAtomicOptions = {},
): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
  const durable = options.durable !== false;
  try {
    await writeThrough(temp, path, data, options.mode, durable);
  } catch (error) {
    // a full or read-only disk is reported for the file being written, not the temporary one
    throw asWriteError(error, path);
  }
  if (durable) await syncDir(dir);
}

async function writeThrough(
  temp: string,
  path: string,
  data: string | Uint8Array,
  mode: number | undefined,
  durable: boolean,
): Promise<void> {
  // 'wx': a fresh file of ours, never one left by a crash or another writer.
  const handle = await open(temp, 'wx', mode ?? 0o644);
  try {
    await handle.writeFile(data);
    // open() applies the umask; chmod makes the mode exact (0600 must stay 0600).
    if (mode !== undefined) await handle.chmod(mode);
    if (durable) await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Makes a rename or unlink inside `dir` durable. Folders cannot be fsynced on some systems (Windows): ignored there. */
export async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // best effort
  } finally {
    await handle?.close().catch(() => {});
  }
}

export async function ensureDir(dir: string, mode = 0o700): Promise<void> {
  await mkdir(dir, { recursive: true, mode });
}

/**
 * Removes the temporary files a crash left behind in `dir` (a `kill -9` between creating one and
 * renaming it leaves it, possibly empty). Only for folders whose one writer is the caller, before
 * it writes: the engine calls it at start, under its lock.
 */
export async function removeStaleTemps(dir: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (name.startsWith('.') && name.endsWith(TEMP_SUFFIX)) {
      await rm(join(dir, name), { force: true });
      removed += 1;
    }
  }
  if (removed > 0) await syncDir(dir);
  return removed;
}

/** Removes the half-written folders (`<prefix>…`) a crash left in `dir`, such as unfinished bundles. */
export async function removeStaleTempDirs(dir: string, prefix: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (name.startsWith(prefix)) {
      await rm(join(dir, name), { recursive: true, force: true });
      removed += 1;
    }
  }
  return removed;
}
