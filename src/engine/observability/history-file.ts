/**
 * The metrics history and usage on disk: one JSON file per deployment in `<home>/store/history/`
 * (folder 0700, files 0600), written atomically as the store writes its records (atomic.ts). The
 * store's own files live in its four collection folders; nothing the store cleans (crash leftovers,
 * expired idempotency entries, unreadable records) touches this folder. A file that cannot be read
 * is moved aside to `<home>/store/unreadable/`, and the engine keeps going.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Logger } from '../engine-log.js';
import { ensureDir, removeStaleTemps, writeFileAtomic } from '../store/atomic.js';
import { moveAside } from '../store/unreadable.js';
import { ERROR_TYPES, LATENCY_BOUNDS_MS, type Bucket, type Series } from './history-buckets.js';
import { table, type Counts, type UsageDay } from './usage-tally.js';

export const HISTORY_SCHEMA_VERSION = 1;
/** Deployment ids as the store names its files. */
const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

/** What the engine keeps of one deployment. */
export interface DeploymentHistory {
  series: Series;
  days: UsageDay[];
}

/** A table of counts as written: each row `[requests, tool calls, tool errors]`. */
type CountsRows = Record<string, [number, number, number]>;
type StoredDay = Omit<UsageDay, 'tools' | 'clients' | 'users'> & {
  tools: CountsRows;
  clients: CountsRows;
  users: CountsRows;
};

interface HistoryFileBody {
  schema_version: number;
  written_at: string;
  latency_bounds_ms: readonly number[];
  minutes: Bucket[];
  hours: Bucket[];
  days: StoredDay[];
}

/** Every deployment's history in `dir`; files of another layout or damaged ones are moved aside. */
export async function loadHistories(dir: string, logger: Logger): Promise<Map<string, DeploymentHistory>> {
  await ensureDir(dir);
  await removeStaleTemps(dir);
  const out = new Map<string, DeploymentHistory>();
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.json')) continue;
    const id = name.slice(0, -'.json'.length);
    try {
      out.set(id, parseHistory(JSON.parse(await readFile(join(dir, name), 'utf8'))));
    } catch (error) {
      await moveHistoryAside(dir, name, error, logger);
    }
  }
  return out;
}

/** Writes one deployment's history; an empty one removes its file. */
export async function saveHistory(dir: string, id: string, history: DeploymentHistory, now: number): Promise<void> {
  if (!ID_PATTERN.test(id)) return;
  const path = join(dir, `${id}.json`);
  const { series, days } = history;
  if (series.minutes.length === 0 && series.hours.length === 0 && days.length === 0) {
    await rm(path, { force: true });
    return;
  }
  const body: HistoryFileBody = {
    schema_version: HISTORY_SCHEMA_VERSION,
    written_at: new Date(now).toISOString(),
    latency_bounds_ms: LATENCY_BOUNDS_MS,
    minutes: series.minutes,
    hours: series.hours,
    days: days.map((day) => ({ ...day, tools: rows(day.tools), clients: rows(day.clients), users: rows(day.users) })),
  };
  await writeFileAtomic(path, `${JSON.stringify(body)}\n`, { mode: 0o600 });
}

function parseHistory(value: unknown): DeploymentHistory {
  const body = value as Partial<HistoryFileBody> | null;
  if (body === null || typeof body !== 'object') throw new Error('not an object');
  if (body.schema_version !== HISTORY_SCHEMA_VERSION) throw new Error(`unknown layout ${String(body.schema_version)}`);
  const bounds = body.latency_bounds_ms;
  if (!Array.isArray(bounds) || bounds.join() !== LATENCY_BOUNDS_MS.join()) {
    throw new Error('written with other latency bounds');
  }
  return {
    series: { minutes: buckets(body.minutes, 'minutes'), hours: buckets(body.hours, 'hours') },
    days: usageDays(body.days),
  };
}

function buckets(value: unknown, field: string): Bucket[] {
  if (!Array.isArray(value)) throw new Error(`${field} is not a list`);
  const out = value.map((item: unknown) => bucket(item, field));
  for (let i = 1; i < out.length; i += 1) if (out[i]!.t <= out[i - 1]!.t) throw new Error(`${field} out of order`);
  return out;
}

function bucket(value: unknown, field: string): Bucket {
  const b = value as Partial<Bucket> | null;
  const numbers = [b?.t, b?.requests, b?.toolCalls, b?.toolErrors, b?.bytesIn, b?.maxMs];
  if (!numbers.every(isCount)) throw new Error(`a bucket of ${field} has a bad figure`);
  const latency = b!.latency;
  if (!Array.isArray(latency) || latency.length !== LATENCY_BOUNDS_MS.length + 1 || !latency.every(isCount)) {
    throw new Error(`a bucket of ${field} has a bad latency histogram`);
  }
  const errors: Bucket['errors'] = {};
  for (const type of ERROR_TYPES) {
    const n = (b!.errors as Record<string, unknown> | undefined)?.[type];
    if (n === undefined) continue;
    if (!isCount(n)) throw new Error(`a bucket of ${field} has a bad error count`);
    errors[type] = n;
  }
  return { ...(b as Bucket), errors, latency: [...latency] };
}

function usageDays(value: unknown): UsageDay[] {
  if (!Array.isArray(value)) throw new Error('days is not a list');
  return value.map((item: unknown) => {
    const d = item as Partial<StoredDay> | null;
    if (![d?.t, d?.requests, d?.errors, d?.toolCalls, d?.toolErrors].every(isCount)) {
      throw new Error('a day has a bad figure');
    }
    const { t, requests, errors, toolCalls, toolErrors } = d as StoredDay;
    const tables = { tools: counts(d!.tools), clients: counts(d!.clients), users: counts(d!.users) };
    return { t, requests, errors, toolCalls, toolErrors, ...tables };
  });
}

function rows(counts: Record<string, Counts>): CountsRows {
  const out: CountsRows = {};
  // defined, not assigned: a name such as `__proto__` stays an ordinary key
  for (const [key, c] of Object.entries(counts)) {
    Object.defineProperty(out, key, {
      value: [c.requests, c.toolCalls, c.toolErrors],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A table of counts as read, copied into one without a prototype. */
function counts(value: unknown): Record<string, Counts> {
  if (value === null || typeof value !== 'object') throw new Error('a day has a bad table');
  const out = table();
  for (const [key, row] of Object.entries(value as Record<string, unknown>)) {
    if (!Array.isArray(row) || row.length !== 3 || !row.every(isCount)) throw new Error('a day has a bad count');
    out[key] = { requests: row[0] as number, toolCalls: row[1] as number, toolErrors: row[2] as number };
  }
  return out;
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0;
}

async function moveHistoryAside(dir: string, name: string, error: unknown, logger: Logger): Promise<void> {
  const target = await moveAside(join(dir, '..'), basename(dir), name, error);
  logger.warn('moved an unreadable metrics history aside', {
    file: name,
    moved_to: target,
    error: error instanceof Error ? error.message : String(error),
  });
}
