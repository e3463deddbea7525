/**
 * The deployment's values for a container, as a file instead of `Env` (which `docker inspect`
 * shows to anyone who may talk to the daemon): a tar archive of one folder, owned by the container's
 * user and closed to everyone else (0700), holding the JSON file the runtime reads with `--values-file`
 * (0400). It is copied into the container's own anonymous volume before the container starts (the
 * root filesystem is read-only); the runtime deletes the file once read, and the volume goes with
 * the container.
 */
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { pack as createPack } from 'tar-stream';
import type { ImageContract } from '../../../packaging/image.js';

/**
 * An archive to extract at `dir` that makes `file` (a path under `dir`) with the values. The
 * folders between are the user's, 0700; the file 0400.
 */
export function envArchive(
  dir: string,
  file: string,
  env: Record<string, string>,
  user: ImageContract['user'],
): Readable {
  const relative = posix.relative(dir, file);
  if (relative.startsWith('..') || posix.isAbsolute(relative)) throw new Error(`${file} is not under ${dir}`);
  const owner = { uid: user.uid, gid: user.gid, mtime: new Date(0) };
  const pack = createPack();
  const parts = relative.split('/');
  for (let i = 1; i < parts.length; i += 1)
    pack.entry({ ...owner, name: `${parts.slice(0, i).join('/')}/`, type: 'directory', mode: 0o700 });
  pack.entry({ ...owner, name: relative, mode: 0o400 }, Buffer.from(JSON.stringify(env), 'utf8'));
  pack.finalize();
  return pack as unknown as Readable;
}
