/**
 * Paths inside the definition folder. A path from a definition (or built from a request's values)
 * must stay inside the folder: no absolute paths, no `..` that climbs out, and no symbolic link
 * that points outside (checked on the real path).
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

export class PathEscapeError extends Error {
  override readonly name = 'PathEscapeError';
}

function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Resolves `path` against `root` lexically; throws PathEscapeError when it leaves the folder. */
export function resolveInside(root: string, path: string): string {
  if (path.includes('\0')) throw new PathEscapeError(`"${path}" holds a NUL character`);
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path))
    throw new PathEscapeError(`"${path}" is absolute; paths are relative to the definition`);
  const full = resolve(root, path);
  if (!isInside(root, full)) throw new PathEscapeError(`"${path}" is outside the definition folder`);
  return full;
}

/**
 * Like resolveInside, then follows symbolic links and checks the real path too. `realRoot` is the
 * real path of the folder (resolve it once). Rejects with ENOENT errors for missing files as usual.
 */
export async function resolveRealInside(realRoot: string, path: string): Promise<string> {
  const full = resolveInside(realRoot, path);
  const real = await realpath(full);
  if (!isInside(realRoot, real))
    throw new PathEscapeError(`"${path}" leads outside the definition folder (through a symbolic link)`);
  return real;
}

/** A value substituted into a path must be one plain segment: no separators, no `.` or `..`. */
export function checkPathSegment(value: string): string {
  if (value === '' || value === '.' || value === '..' || /[\\/\0]/.test(value)) {
    throw new PathEscapeError(`"${value}" cannot be used in a file path`);
  }
  return value;
}
