/**
 * The port `mcpctl dev` listens on when --port is not given: the one the same definition file had
 * last time, so a URL pasted into a client keeps working across restarts; any free one the first
 * time, or when that port is taken now. Remembered under MCPCTL_HOME (dev-ports.json), keyed by the
 * file's absolute path. Losing the file loses nothing but the habit: every failure is ignored.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureDir, writeFileAtomic } from '../../engine/store/atomic.js';
import { resolveHome } from '../../engine/home.js';

const FILE_NAME = 'dev-ports.json';
/** Files remembered at most: the least recently served are forgotten first. */
const MAX_FILES = 200;

type PortBook = Record<string, { port: number; at: string }>;

/** Where the ports are remembered, from the command's environment. */
export function portBookPath(env: Record<string, string | undefined>, cwd: string): string {
  return join(resolveHome(env, cwd), FILE_NAME);
}

/** The port `definitionFile` was served on last time, if one is remembered. */
export async function rememberedPort(bookPath: string, definitionFile: string): Promise<number | undefined> {
  const port = (await readBook(bookPath))[definitionFile]?.port;
  return Number.isInteger(port) && port !== undefined && port > 0 && port < 65536 ? port : undefined;
}

/** Remembers `port` for `definitionFile`; best effort. */
export async function rememberPort(bookPath: string, definitionFile: string, port: number): Promise<void> {
  try {
    const book = await readBook(bookPath);
    book[definitionFile] = { port, at: new Date().toISOString() };
    const kept = Object.entries(book)
      .sort(([, a], [, b]) => (a.at < b.at ? 1 : -1))
      .slice(0, MAX_FILES);
    await ensureDir(join(bookPath, '..'));
    await writeFileAtomic(bookPath, `${JSON.stringify(Object.fromEntries(kept), null, 2)}\n`, {
      mode: 0o600,
      durable: false,
    });
  } catch {
    // a port not remembered only means another one next time
  }
}

async function readBook(bookPath: string): Promise<PortBook> {
  try {
    const parsed: unknown = JSON.parse(await readFile(bookPath, 'utf8'));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const book: PortBook = {};
    for (const [file, entry] of Object.entries(parsed as Record<string, unknown>)) {
      const { port, at } = (entry ?? {}) as { port?: unknown; at?: unknown };
      if (typeof port === 'number' && typeof at === 'string') book[file] = { port, at };
    }
    return book;
  } catch {
    return {};
  }
}
