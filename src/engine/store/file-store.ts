/**
 * The engine's store: one JSON file per record, written atomically (see atomic.ts), read into
 * memory at open. One engine owns a home at a time (the engine lock), so the memory copy is the
 * truth and reads never touch the disk. docs/persistence.md says why this and not a database.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeploymentFilter, ServerFilter, Store, TestRunFilter } from './store.js';
import type { DeploymentRecord, ServerRecord, TestRunRecord } from '../records.js';
import type { Logger } from '../engine-log.js';
import { wasDeployed as everDeployed } from '../deployments/states.js';
import { ensureDir, removeStaleTemps, syncDir, writeFileAtomic } from './atomic.js';
import { moveAside } from './unreadable.js';
import { TEST_RUN_RETENTION, testRunsToDrop, type RetentionLimits } from './test-run-retention.js';

/** Bumped when the layout of the files changes; an engine refuses a store newer than it knows. */
export const STORE_SCHEMA_VERSION = 1;
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 10 * 60 * 1000;

type Collection = 'servers' | 'deployments' | 'tests' | 'idempotency';
const COLLECTIONS: readonly Collection[] = ['servers', 'deployments', 'tests', 'idempotency'];

interface IdempotentEntry {
  bodyHash: string;
  status: number;
  body: unknown;
  /** milliseconds since the epoch */
  createdAt: number;
}

interface RecordFile {
  schema_version: number;
  written_at: string;
  record: unknown;
}

export interface FileStoreOptions {
  /** the store folder, `<MCPCTL_HOME>/store` */
  dir: string;
  logger?: Logger;
  clock?: () => number;
  idempotencyTtlMs?: number;
  /** how many test runs are kept; TEST_RUN_RETENTION unless given */
  testRunRetention?: RetentionLimits;
}

/** Raised when the store cannot be opened (a newer layout, an unreadable folder). */
export class StoreOpenError extends Error {
  override readonly name = 'StoreOpenError';
}

export class FileStore implements Store {
  private readonly servers = new Map<string, ServerRecord>();
  private readonly deployments = new Map<string, DeploymentRecord>();
  private readonly tests = new Map<string, TestRunRecord>();
  private readonly idempotency = new Map<string, IdempotentEntry>();
  /** the last write of each file, so writes of one record land in order */
  private readonly writes = new Map<string, Promise<void>>();
  private readonly clock: () => number;
  private readonly ttl: number;
  private retention: RetentionLimits = TEST_RUN_RETENTION;
  private purgeTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly logger: Logger | undefined,
    clock: (() => number) | undefined,
    ttl: number | undefined,
  ) {
    this.clock = clock ?? Date.now;
    this.ttl = ttl ?? IDEMPOTENCY_TTL_MS;
  }

  static async open(options: FileStoreOptions): Promise<FileStore> {
    const store = new FileStore(options.dir, options.logger, options.clock, options.idempotencyTtlMs);
    if (options.testRunRetention !== undefined) store.retention = options.testRunRetention;
    await store.load();
    await store.pruneTestRuns();
    store.purgeTimer = setInterval(() => void store.purgeExpired().catch(() => {}), PURGE_EVERY_MS);
    store.purgeTimer.unref();
    return store;
  }

  // --- Store ---------------------------------------------------------------------------------

  async putServer(record: ServerRecord): Promise<void> {
    await this.write('servers', record.server.mcp_id, record);
    this.servers.set(record.server.mcp_id, structuredClone(record));
  }
  async getServer(mcpId: string): Promise<ServerRecord | undefined> {
    return copy(this.servers.get(mcpId));
  }
  /** Filtered before anything is copied: a build looks for its digest among every server built. */
  async listServers(filter: ServerFilter = {}): Promise<ServerRecord[]> {
    const { name, digest } = filter;
    const matching: ServerRecord[] = [];
    for (const r of this.servers.values()) {
      if (name !== undefined && r.server.name !== name) continue;
      if (digest !== undefined && r.digest !== digest) continue;
      matching.push(r);
    }
    return newestFirst(matching, (r) => r.server.created_at).map((r) => structuredClone(r));
  }

  async deleteServer(mcpId: string): Promise<boolean> {
    return this.remove('servers', mcpId, this.servers);
  }

  async putDeployment(record: DeploymentRecord): Promise<void> {
    await this.write('deployments', record.deployment.deployment_id, record);
    this.deployments.set(record.deployment.deployment_id, structuredClone(record));
  }
  async getDeployment(deploymentId: string): Promise<DeploymentRecord | undefined> {
    return copy(this.deployments.get(deploymentId));
  }
  /**
   * Filtered before anything is copied: a deploy asks for one server's records among thousands,
   * and copying every record of an environment cost more than the rest of the deploy.
   */
  async listDeployments(filter: DeploymentFilter = {}): Promise<DeploymentRecord[]> {
    const { mcpId, environment, status, serverName, wasDeployed, limit } = filter;
    const matching: DeploymentRecord[] = [];
    for (const r of this.deployments.values()) {
      if (mcpId !== undefined && r.mcpId !== mcpId) continue;
      if (environment !== undefined && r.deployment.environment !== environment) continue;
      if (status !== undefined && r.deployment.status !== status) continue;
      if (serverName !== undefined && this.servers.get(r.mcpId)?.server.name !== serverName) continue;
      if (wasDeployed !== undefined && everDeployed(r.deployment) !== wasDeployed) continue;
      matching.push(r);
    }
    const sorted = newestFirst(matching, (r) => r.deployment.created_at);
    return (limit === undefined ? sorted : sorted.slice(0, Math.max(0, limit))).map((r) => structuredClone(r));
  }

  async deleteDeployment(deploymentId: string): Promise<boolean> {
    return this.remove('deployments', deploymentId, this.deployments);
  }

  /** Keeps the run, and drops the oldest beyond the retention (test-run-retention.ts). */
  async putTestRun(record: TestRunRecord): Promise<void> {
    await this.write('tests', record.id, record);
    this.tests.set(record.id, structuredClone(record));
    await this.pruneTestRuns();
  }
  async getTestRun(testId: string): Promise<TestRunRecord | undefined> {
    return copy(this.tests.get(testId));
  }
  async listTestRuns(filter: TestRunFilter = {}): Promise<TestRunRecord[]> {
    const { mcpId, limit } = filter;
    const matching = [...this.tests.values()].filter((r) => mcpId === undefined || r.mcpId === mcpId);
    const sorted = newestFirst(matching, (r) => r.createdAt);
    return (limit === undefined ? sorted : sorted.slice(0, Math.max(0, limit))).map((r) => structuredClone(r));
  }

  async getIdempotent(key: string): Promise<{ bodyHash: string; status: number; body: unknown } | undefined> {
    const name = idempotencyName(key);
    const entry = this.idempotency.get(name);
    if (entry === undefined) return undefined;
    if (this.clock() - entry.createdAt >= this.ttl) return undefined;
    return { bodyHash: entry.bodyHash, status: entry.status, body: structuredClone(entry.body) };
  }
  async putIdempotent(key: string, entry: { bodyHash: string; status: number; body: unknown }): Promise<void> {
    const name = idempotencyName(key);
    const stored: IdempotentEntry = { ...structuredClone(entry), createdAt: this.clock() };
    await this.write('idempotency', name, stored);
    this.idempotency.set(name, stored);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.purgeTimer !== undefined) clearInterval(this.purgeTimer);
    await Promise.allSettled([...this.writes.values()]);
  }

  /** Removes idempotency entries older than the time to live; returns how many. */
  async purgeExpired(): Promise<number> {
    const now = this.clock();
    let removed = 0;
    for (const [name, entry] of this.idempotency) {
      if (now - entry.createdAt < this.ttl) continue;
      this.idempotency.delete(name);
      await rm(join(this.dir, 'idempotency', `${name}.json`), { force: true });
      removed += 1;
    }
    if (removed > 0) await syncDir(join(this.dir, 'idempotency'));
    return removed;
  }

  /** Deletes the runs beyond the retention, oldest first; returns how many. */
  private async pruneTestRuns(): Promise<number> {
    if (this.tests.size <= Math.min(this.retention.total, this.retention.perServer)) return 0;
    const runs = newestFirst([...this.tests.values()], (r) => r.createdAt);
    const drop = testRunsToDrop(runs, this.retention);
    for (const id of drop) {
      this.tests.delete(id);
      await rm(join(this.dir, 'tests', `${id}.json`), { force: true });
    }
    if (drop.length > 0) await syncDir(join(this.dir, 'tests'));
    return drop.length;
  }

  // --- files ---------------------------------------------------------------------------------

  private async write(collection: Collection, id: string, record: unknown): Promise<void> {
    if (this.closed) throw new Error('the store is closed');
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`not a valid record id: ${JSON.stringify(id)}`);
    const path = join(this.dir, collection, `${id}.json`);
    const file: RecordFile = {
      schema_version: STORE_SCHEMA_VERSION,
      written_at: new Date(this.clock()).toISOString(),
      record,
    };
    const text = `${JSON.stringify(file)}\n`;
    const previous = this.writes.get(path) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => writeFileAtomic(path, text, { mode: 0o600 }));
    this.writes.set(path, next);
    try {
      await next;
    } finally {
      if (this.writes.get(path) === next) this.writes.delete(path);
    }
  }

  /** Removes a record's file after the writes of it under way, then forgets it. */
  private async remove(collection: Collection, id: string, records: Map<string, unknown>): Promise<boolean> {
    if (this.closed) throw new Error('the store is closed');
    if (!records.has(id)) return false;
    const path = join(this.dir, collection, `${id}.json`);
    await this.writes.get(path)?.catch(() => {});
    await rm(path, { force: true });
    await syncDir(join(this.dir, collection));
    records.delete(id);
    return true;
  }

  private async load(): Promise<void> {
    await ensureDir(this.dir);
    await removeStaleTemps(this.dir);
    await this.checkLayout();
    for (const collection of COLLECTIONS) {
      const folder = join(this.dir, collection);
      await ensureDir(folder);
      const temps = await removeStaleTemps(folder);
      if (temps > 0) this.logger?.info('removed unfinished writes left by a crash', { collection, files: temps });
      for (const name of await readdir(folder)) {
        if (!name.endsWith('.json')) continue;
        const path = join(folder, name);
        const id = name.slice(0, -'.json'.length);
        try {
          const file = JSON.parse(await readFile(path, 'utf8')) as Partial<RecordFile>;
          if (typeof file.schema_version !== 'number' || file.schema_version > STORE_SCHEMA_VERSION) {
            throw new Error(`unknown record layout ${String(file.schema_version)}`);
          }
          if (file.record === null || typeof file.record !== 'object') throw new Error('no record');
          this.remember(collection, id, file.record);
        } catch (error) {
          await this.quarantine(collection, name, error);
        }
      }
    }
    await this.purgeExpired();
  }

  private remember(collection: Collection, id: string, record: unknown): void {
    switch (collection) {
      case 'servers':
        this.servers.set(id, record as ServerRecord);
        break;
      case 'deployments':
        this.deployments.set(id, record as DeploymentRecord);
        break;
      case 'tests':
        this.tests.set(id, record as TestRunRecord);
        break;
      case 'idempotency':
        this.idempotency.set(id, record as IdempotentEntry);
        break;
    }
  }

  /** A file that cannot be read is moved aside (unreadable.ts), not deleted, and the engine keeps going. */
  private async quarantine(collection: Collection, name: string, error: unknown): Promise<void> {
    const target = await moveAside(this.dir, collection, name, error, this.clock());
    this.logger?.warn('moved an unreadable record aside', {
      collection,
      file: name,
      moved_to: target,
      error: error instanceof Error ? error.message : String(error),
    });
  }

  private async checkLayout(): Promise<void> {
    const metaPath = join(this.dir, 'meta.json');
    let meta: { schema_version?: unknown } | undefined;
    try {
      meta = JSON.parse(await readFile(metaPath, 'utf8')) as { schema_version?: unknown };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new StoreOpenError(`cannot read ${metaPath}: ${(error as Error).message}`);
      }
    }
    if (meta !== undefined) {
      const version = meta.schema_version;
      if (typeof version !== 'number') throw new StoreOpenError(`${metaPath} has no schema_version`);
      if (version > STORE_SCHEMA_VERSION) {
        throw new StoreOpenError(
          `the state in ${this.dir} was written by a newer mcpctl (store layout ${version}, this one knows ${STORE_SCHEMA_VERSION}); upgrade mcpctl or use another MCPCTL_HOME`,
        );
      }
      return;
    }
    const fresh = { schema_version: STORE_SCHEMA_VERSION, created_at: new Date(this.clock()).toISOString() };
    await writeFileAtomic(metaPath, `${JSON.stringify(fresh)}\n`, { mode: 0o600 });
  }
}

function copy<T>(value: T | undefined): T | undefined {
  return value === undefined ? undefined : structuredClone(value);
}

function newestFirst<T>(items: T[], time: (item: T) => string | undefined): T[] {
  // Stable sort keeps insertion order among equal times; reversed so the later one comes first.
  return items
    .map((item, index) => ({ item, index, time: time(item) ?? '' }))
    .sort((a, b) => (a.time === b.time ? b.index - a.index : a.time < b.time ? 1 : -1))
    .map((entry) => entry.item);
}

/** Keys are up to 200 printable characters: hashed to a safe file name. */
function idempotencyName(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
