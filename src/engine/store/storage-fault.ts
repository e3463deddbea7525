/**
 * Writes that fail because of the disk under the engine's home, not because of what was asked: no
 * space left, a quota used up, a read-only file system, or files the engine's user may not write.
 * Each is the engine's problem to report as such; a build or deployment that hits one is not wrong.
 */

/** `full`: no space or quota left; `unwritable`: a read-only file system or no permission. */
export type StorageFaultKind = 'full' | 'unwritable';

export interface StorageFault {
  kind: StorageFaultKind;
  /** the system's code: ENOSPC, EDQUOT, EROFS, EACCES or EPERM */
  errno: string;
  /** the file or folder being written, when the system said */
  path: string | undefined;
}

const FULL = new Set(['ENOSPC', 'EDQUOT']);
/** Always about a write (EROFS), or about one when the call was a write (EACCES, EPERM). */
const READ_ONLY = 'EROFS';
const DENIED = new Set(['EACCES', 'EPERM']);
/** The calls that write: a denied spawn, signal or listen says nothing about the disk. */
const WRITES = new Set([
  'open',
  'write',
  'writev',
  'rename',
  'mkdir',
  'mkdtemp',
  'unlink',
  'rmdir',
  'rm',
  'copyfile',
  'cp',
  'fsync',
  'ftruncate',
  'chmod',
  'fchmod',
  'symlink',
  'link',
  'utime',
]);

/** The storage fault an error is (or was caused by), if any. */
export function storageFaultOf(error: unknown): StorageFault | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    const { code, syscall, path } = e as NodeJS.ErrnoException;
    if (typeof code !== 'string') continue;
    const at = typeof path === 'string' ? path : undefined;
    if (FULL.has(code)) return { kind: 'full', errno: code, path: at };
    if (code === READ_ONLY) return { kind: 'unwritable', errno: code, path: at };
    if (DENIED.has(code) && (syscall === undefined || WRITES.has(syscall)))
      return { kind: 'unwritable', errno: code, path: at };
  }
  return undefined;
}

/**
 * A failed write of `path` as an error that names it: the system names the temporary file a write
 * goes through, and the file it was for is what a reader can find (and free space around).
 */
export class StorageWriteError extends Error {
  override readonly name = 'StorageWriteError';
  readonly code: string;
  readonly syscall: string | undefined;
  constructor(
    readonly path: string,
    cause: NodeJS.ErrnoException,
  ) {
    super(`${cause.code ?? 'error'}: cannot write ${path}: ${cause.message}`, { cause });
    this.code = cause.code ?? '';
    this.syscall = cause.syscall;
  }
}

/** `error` as a StorageWriteError for `path` when it is a storage fault; any other error as it is. */
export function asWriteError(error: unknown, path: string): unknown {
  if (storageFaultOf(error) === undefined || error instanceof StorageWriteError) return error;
  return new StorageWriteError(path, error as NodeJS.ErrnoException);
}
