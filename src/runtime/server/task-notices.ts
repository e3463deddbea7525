/**
 * Task status notices (`notifications/tasks` of the tasks extension): what a task looks like as
 * `tasks/get` would answer, sent whenever that changes to the `subscriptions/listen` streams that
 * asked for the task. Two sources of change: a write to the task store by this process (heard at
 * once), and a look at the store every TASK_NOTICE_POLL_MS for the tasks a stream follows, which is
 * how a change made by another instance sharing the task folder is heard.
 */
import type { TaskStore } from './task-store.js';
import { TERMINAL } from './task-store.js';
import { taskState } from './tasks.js';

/** How often a stream looks at the tasks it follows (what another instance changed is heard this late). */
export const TASK_NOTICE_POLL_MS = 200;

type ChangeListener = (taskId: string) => void;

/** The listeners of each store this process writes through (a reloaded runtime keeps its store). */
const listenersOf = new WeakMap<TaskStore, Set<ChangeListener>>();

/** The store, telling its listeners of every change this process makes to a task. */
export function noticeChanges(store: TaskStore): TaskStore {
  if (listenersOf.has(store)) return store;
  const listeners = new Set<ChangeListener>();
  const changed = (taskId: string): void => {
    for (const listener of listeners) listener(taskId);
  };
  const noticed: TaskStore = {
    ...store,
    async create(record) {
      await store.create(record);
      changed(record.taskId);
    },
    async write(record) {
      await store.write(record);
      changed(record.taskId);
    },
    async requestCancel(taskId) {
      await store.requestCancel(taskId);
      changed(taskId);
    },
    async answer(taskId, answers) {
      await store.answer(taskId, answers);
      changed(taskId);
    },
  };
  listenersOf.set(noticed, listeners);
  return noticed;
}

function onChange(store: TaskStore, listener: ChangeListener): () => void {
  const listeners = listenersOf.get(store);
  listeners?.add(listener);
  return () => void listeners?.delete(listener);
}

/**
 * Follows some tasks of one stream: `send` gets each task's state once at the start and again on
 * every change, until the task ends (or is forgotten). At most one look at the store runs at a time.
 */
export function watchTasks(
  store: TaskStore,
  taskIds: readonly string[],
  send: (state: Record<string, unknown>) => void,
): () => void {
  const live = new Set(taskIds);
  const last = new Map<string, string>();
  const dirty = new Set<string>(taskIds);
  let running = false;
  let stopped = false;

  const look = async (taskId: string): Promise<void> => {
    const record = await store.read(taskId);
    if (record === undefined) return void live.delete(taskId);
    const state = await taskState(record, store);
    const seen = JSON.stringify(state);
    if (stopped || last.get(taskId) === seen) return;
    last.set(taskId, seen);
    send(state);
    if (TERMINAL.has(state.status as never)) live.delete(taskId);
  };
  const drain = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      while (!stopped && dirty.size > 0) {
        const [taskId] = dirty;
        dirty.delete(taskId!);
        if (live.has(taskId!)) await look(taskId!).catch(() => {});
      }
    } finally {
      running = false;
    }
  };
  const poke = (ids: Iterable<string>): void => {
    for (const id of ids) if (live.has(id)) dirty.add(id);
    void drain();
  };

  const unlisten = onChange(store, (taskId) => poke([taskId]));
  const timer = setInterval(() => poke(live), TASK_NOTICE_POLL_MS);
  timer.unref();
  void drain();
  return () => {
    stopped = true;
    clearInterval(timer);
    unlisten();
  };
}
