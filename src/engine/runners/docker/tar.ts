/**
 * Tar archives as streams, for the Docker API: a build context (a generated Dockerfile and the
 * folders it copies) or an image's root filesystem. Files are read one after another as the
 * archive is consumed; nothing is staged on disk. Owners are root and modes are kept but for
 * group/other write, so an image's non-root user can read everything and change nothing.
 */
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pack as createPack } from 'tar-stream';

export type TarEntry =
  /** a file or a whole folder from disk, at `name` in the archive */
  | { name: string; path: string; skip?: (relative: string) => boolean }
  /** content given here */
  | { name: string; content: string | Buffer; mode?: number }
  /** an empty folder */
  | { name: string; folder: true };

export function tarStream(entries: TarEntry[]): Readable {
  const pack = createPack();
  void (async () => {
    try {
      for (const entry of entries) {
        if ('folder' in entry) {
          await addFolder(pack, entry.name, 0o755);
        } else if ('content' in entry) {
          const content = typeof entry.content === 'string' ? Buffer.from(entry.content) : entry.content;
          await addBuffer(pack, { name: entry.name, mode: entry.mode ?? 0o644 }, content);
        } else {
          await addPath(pack, entry.name, entry.path, '', entry.skip);
        }
      }
      pack.finalize();
    } catch (error) {
      pack.destroy(error as Error);
    }
  })();
  return pack as unknown as Readable;
}

type Pack = ReturnType<typeof createPack>;
const MTIME = new Date(0);

function addBuffer(pack: Pack, header: { name: string; mode: number }, content: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry({ ...header, mtime: MTIME, uid: 0, gid: 0 }, content, (error) => (error ? reject(error) : resolve()));
  });
}

function addFolder(pack: Pack, name: string, mode: number): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry({ name, type: 'directory', mode, mtime: MTIME, uid: 0, gid: 0 }, (error) =>
      error ? reject(error) : resolve(),
    );
  });
}

async function addPath(
  pack: Pack,
  name: string,
  path: string,
  relative: string,
  skip?: (relative: string) => boolean,
): Promise<void> {
  if (relative !== '' && skip?.(relative) === true) return;
  const stats = await lstat(path);
  const mode = stats.mode & 0o755;
  if (stats.isSymbolicLink()) {
    const linkname = await readlink(path);
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name, type: 'symlink', linkname, mtime: MTIME, uid: 0, gid: 0, mode: 0o777 }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    return;
  }
  if (stats.isDirectory()) {
    await addFolder(pack, name, mode | 0o755);
    for (const child of (await readdir(path)).sort()) {
      await addPath(
        pack,
        `${name}/${child}`,
        join(path, child),
        relative === '' ? child : `${relative}/${child}`,
        skip,
      );
    }
    return;
  }
  if (!stats.isFile()) return;
  const entry = pack.entry({ name, size: stats.size, mode: mode | 0o644, mtime: MTIME, uid: 0, gid: 0 });
  await pipeline(createReadStream(path), entry);
}
