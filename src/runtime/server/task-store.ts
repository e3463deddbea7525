/**
 * Where tasks live: a folder the instances of one deployment share (each task a folder of its
 * own), or memory when the runtime is alone. The instance running a task is the only writer of
 * its state; any instance may ask it to stop (a `cancel` mark) or answer what it waits for (one
 * file per answer), so two instances never write the same file and no lock is needed.
 *
 * In a folder, the instance running a task also touches its `alive` file while the task runs. An
 * instance that reads an unfinished task whose `alive` file is older than `staleAfterMs` takes
 * the instance running it for stopped (crashed, replaced, scaled down): it records that outcome
 * in a `stopped` mark, made once (the first reader to link it wins), and from then on every
 * reader answers the task as failed, whatever the state file says: an owner that was only slow
 * and writes again later does not undo it, and stops its handler when it sees the mark.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** What the client asked for and the task waits on: an `elicitation/create` or `sampling/createMessage`. */
export interface PendingInput {
  method: string;
  params: Record<string, unknown>;
}

export interface TaskRecord {
  taskId: string;
  /** a digest of the caller's user id: only the same caller reads or steers the task */
  owner: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  /** set while the task waits for answers, keyed by ids this runtime minted */
  inputRequests?: Record<string, PendingInput>;
  result?: CallToolResult;
  error?: { code: number; message: string };
}

/** How a task's instance shows it is alive, and how long a silence means it stopped. */
export interface TaskLiveness {
  heartbeatMs: number;
  /** many heartbeats: an instance whose event loop a handler holds up for a while is not dead */
  staleAfterMs: number;
}

export const TASK_LIVENESS: TaskLiveness = { heartbeatMs: 2_000, staleAfterMs: 20_000 };

/** What a task whose instance stopped answers. */
export const INSTANCE_STOPPED = {
  code: -32603,
  message: 'the instance running the task stopped before the task ended; start the task again',
};

export interface TaskStore {
  /** how often the instance running a task calls `heartbeat`; undefined when nobody else reads the task */
  readonly heartbeatMs?: number;
  /** resolves once another instance would find the task */
  create(record: TaskRecord): Promise<void>;
  read(taskId: string): Promise<TaskRecord | undefined>;
  /** by the instance running the task only */
  write(record: TaskRecord): Promise<void>;
  requestCancel(taskId: string): Promise<void>;
  cancelRequested(taskId: string): Promise<boolean>;
  /** records answers to pending input requests (keys the caller has checked) */
  answer(taskId: string, answers: Record<string, unknown>): Promise<void>;
  /** the answers recorded so far, by key */
  answers(taskId: string): Promise<Map<string, unknown>>;
  /** forgets tasks past their time to live */
  sweep(now: number): Promise<void>;
  /** by the instance running the task, every `heartbeatMs` while it runs */
  heartbeat(taskId: string): Promise<void>;
}

/** Task ids: 32 random bytes, so a task cannot be found by guessing. */
export function newTaskId(): string {
  return randomBytes(32).toString('base64url');
}

/** Anything else is not one of ours, and never becomes a path. */
const TASK_ID = /^[A-Za-z0-9_-]{43}$/;

export function isTaskId(value: string): boolean {
  return TASK_ID.test(value);
}

function expired(record: TaskRecord, now: number): boolean {
  return Date.parse(record.lastUpdatedAt) + record.ttlMs < now;
}

export function createMemoryTaskStore(): TaskStore {
  const tasks = new Map<string, { record: TaskRecord; cancel: boolean; answers: Map<string, unknown> }>();
  const copy = (record: TaskRecord): TaskRecord => structuredClone(record);
  return {
    async create(record) {
      tasks.set(record.taskId, { record: copy(record), cancel: false, answers: new Map() });
    },
    async read(taskId) {
      const task = tasks.get(taskId);
      return task === undefined ? undefined : copy(task.record);
    },
    async write(record) {
      const task = tasks.get(record.taskId);
      if (task !== undefined) task.record = copy(record);
    },
    async requestCancel(taskId) {
      const task = tasks.get(taskId);
      if (task !== undefined) task.cancel = true;
    },
    async cancelRequested(taskId) {
      return tasks.get(taskId)?.cancel === true;
    },
    async answer(taskId, answers) {
      const task = tasks.get(taskId);
      for (const [key, value] of Object.entries(answers)) task?.answers.set(key, structuredClone(value));
    },
    async answers(taskId) {
      return new Map(tasks.get(taskId)?.answers ?? []);
    },
    async sweep(now) {
      for (const [taskId, task] of tasks) if (expired(task.record, now)) tasks.delete(taskId);
    },
    // the process that runs the task is the one that answers for it
    async heartbeat() {},
  };
}

/**
 * A folder of tasks: `<id>/state.json` (the running instance's), `<id>/cancel`, and
 * `<id>/answers/<key>.json`. Files are written to a temporary name and renamed, so a reader
 * never sees half of one.
 */
export function createFolderTaskStore(dir: string, liveness: TaskLiveness = TASK_LIVENESS): TaskStore {
  const folder = (taskId: string): string => join(dir, taskId);
  const writeAtomically = async (file: string, text: string): Promise<void> => {
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, text, { mode: 0o600 });
    await rename(temporary, file);
  };
  const readJson = async <T>(file: string): Promise<T | undefined> => {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as T;
    } catch {
      return undefined;
    }
  };
  const touch = (taskId: string): Promise<void> => writeFile(join(folder(taskId), 'alive'), '', { mode: 0o600 });
  /** The `stopped` mark: made whole under another name, then linked, which fails if a reader was first. */
  const markStopped = async (taskId: string): Promise<void> => {
    const mark = join(folder(taskId), 'stopped');
    const temporary = `${mark}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, JSON.stringify({ at: new Date().toISOString(), error: INSTANCE_STOPPED }), {
      mode: 0o600,
    });
    await link(temporary, mark).catch(() => {});
    await unlink(temporary).catch(() => {});
  };
  const stoppedOutcome = async (record: TaskRecord): Promise<TaskRecord | undefined> => {
    const mark = await readJson<{ at: string; error: TaskRecord['error'] }>(join(folder(record.taskId), 'stopped'));
    if (mark === undefined) return undefined;
    const { inputRequests: _asked, result: _result, ...rest } = record;
    return { ...rest, status: 'failed', lastUpdatedAt: mark.at, error: mark.error };
  };
  const read = async (taskId: string): Promise<TaskRecord | undefined> => {
    const record = await readJson<TaskRecord>(join(folder(taskId), 'state.json'));
    if (record === undefined) return undefined;
    const stopped = await stoppedOutcome(record);
    if (stopped !== undefined || TERMINAL.has(record.status)) return stopped ?? record;
    const aliveAt = await stat(join(folder(taskId), 'alive')).then(
      (alive) => alive.mtimeMs,
      () => Date.parse(record.lastUpdatedAt),
    );
    if (Date.now() - aliveAt <= liveness.staleAfterMs) return record;
    await markStopped(taskId);
    return (await stoppedOutcome(record)) ?? record;
  };
  return {
    heartbeatMs: liveness.heartbeatMs,
    async create(record) {
      await mkdir(join(folder(record.taskId), 'answers'), { recursive: true, mode: 0o700 });
      await touch(record.taskId);
      await writeAtomically(join(folder(record.taskId), 'state.json'), JSON.stringify(record));
    },
    read,
    heartbeat: touch,
    async write(record) {
      await writeAtomically(join(folder(record.taskId), 'state.json'), JSON.stringify(record));
    },
    async requestCancel(taskId) {
      await writeFile(join(folder(taskId), 'cancel'), '', { mode: 0o600 });
    },
    async cancelRequested(taskId) {
      return stat(join(folder(taskId), 'cancel')).then(
        () => true,
        () => false,
      );
    },
    async answer(taskId, answers) {
      for (const [key, value] of Object.entries(answers))
        await writeAtomically(join(folder(taskId), 'answers', `${key}.json`), JSON.stringify({ value }));
    },
    async answers(taskId) {
      const found = new Map<string, unknown>();
      const names = await readdir(join(folder(taskId), 'answers')).catch(() => [] as string[]);
      for (const name of names) {
        if (!name.endsWith('.json')) continue;
        const answer = await readJson<{ value: unknown }>(join(folder(taskId), 'answers', name));
        if (answer !== undefined) found.set(name.slice(0, -'.json'.length), answer.value);
      }
      return found;
    },
    async sweep(now) {
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        if (!isTaskId(name)) continue;
        const record = await readJson<TaskRecord>(join(dir, name, 'state.json'));
        if (record !== undefined && expired(record, now))
          await rm(join(dir, name), { recursive: true, force: true }).catch(() => {});
      }
    },
  };
}
