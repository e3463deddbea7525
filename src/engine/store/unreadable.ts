/**
 * Files of the store the engine could not read are moved to `<home>/store/unreadable/`, not deleted
 * and not left to stop the engine. The folder is the list: each file is named
 * `<collection>-<milliseconds>-<its name>`, so the list says what each was, when it was moved aside
 * and where it goes back, across restarts. Why it could not be read is known for the files this
 * engine moved (and written to its log).
 */
import { readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureDir, syncDir } from './atomic.js';

export const UNREADABLE_DIR = 'unreadable';

/** One file moved aside, as /v1/health answers it. */
export interface UnreadableFile {
  /** where it is now */
  file: string;
  /** what it held: `deployment`, `server`, `test run`, `idempotency entry`, `metrics history`, `alerts` */
  kind: string;
  /** when it was moved aside, when its name says */
  moved_at?: string;
  /** why it could not be read, when this engine moved it */
  reason?: string;
  /** where it goes back once fixed (the engine reads it at its next start); unknown for a file put there by hand */
  restore_to?: string;
}

/** The folders of `<home>/store/` whose files are moved aside, and what one of their files holds. */
const KINDS: Record<string, string> = {
  servers: 'server',
  deployments: 'deployment',
  tests: 'test run',
  idempotency: 'idempotency entry',
  history: 'metrics history',
  alerts: 'alerts',
};
/** The one file of the alerts folder. */
const ALERTS_FILE = 'state.json';

/** Why each file this process moved aside could not be read, by its path there. */
const reasons = new Map<string, string>();

/**
 * Moves `<storeDir>/<collection>/<name>` aside and returns where it went; nothing when it is gone
 * already. `reason`: why it could not be read, for the list.
 */
export async function moveAside(
  storeDir: string,
  collection: string,
  name: string,
  reason: unknown,
  now: number = Date.now(),
): Promise<string | undefined> {
  const aside = join(storeDir, UNREADABLE_DIR);
  await ensureDir(aside);
  // the alerts folder holds one file: the name aside says only when
  const target = join(aside, collection === 'alerts' ? `alerts-${now}.json` : `${collection}-${now}-${name}`);
  const from = join(storeDir, collection);
  const moved = await rename(join(from, name), target).then(
    () => true,
    () => false,
  );
  if (!moved) return undefined;
  await syncDir(from);
  reasons.set(target, (reason instanceof Error ? reason.message : String(reason)).slice(0, 300));
  return target;
}

/** The files moved aside in `<storeDir>/unreadable/`, oldest first; none when there is no such folder. */
export async function listUnreadable(storeDir: string): Promise<UnreadableFile[]> {
  const aside = join(storeDir, UNREADABLE_DIR);
  const names = await readdir(aside).catch(() => [] as string[]);
  return names
    .filter((name) => !name.startsWith('.'))
    .map((name) => describe(storeDir, aside, name))
    .sort((a, b) => (a.moved_at ?? '').localeCompare(b.moved_at ?? '') || a.file.localeCompare(b.file));
}

function describe(storeDir: string, aside: string, name: string): UnreadableFile {
  const file = join(aside, name);
  const reason = reasons.get(file);
  const why = reason === undefined ? {} : { reason };
  // `deployments-1764241234567-deploy_abc.json`, or `alerts-1764241234567.json`
  const parsed = /^([a-z]+)-(\d{10,16})(?:-(.+))?\.json$/.exec(name);
  const collection = parsed?.[1] ?? '';
  const kind = KINDS[collection];
  const original = collection === 'alerts' ? ALERTS_FILE : parsed?.[3] === undefined ? undefined : `${parsed[3]}.json`;
  // a file put there by hand: where it belongs is not known
  if (parsed === null || kind === undefined || original === undefined) return { file, kind: 'unknown', ...why };
  return {
    file,
    kind,
    moved_at: new Date(Number(parsed[2])).toISOString(),
    ...why,
    restore_to: join(storeDir, collection, original),
  };
}
