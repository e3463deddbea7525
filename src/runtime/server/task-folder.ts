/**
 * Which task store a runtime uses: the one of the runtime it replaces (a reload keeps its tasks),
 * the deployment's shared folder (`MCPCTL_TASKS_DIR`), or memory when it serves alone.
 */
import { mkdirSync } from 'node:fs';
import { TASKS_DIR_ENV } from '../constants.js';
import { operationsOf } from './reload.js';
import type { RuntimeOptions } from './runtime-types.js';
import { createFolderTaskStore, createMemoryTaskStore, type TaskStore } from './task-store.js';

export function taskStoreFor(options: RuntimeOptions): TaskStore {
  const previous = options.adopt === undefined ? undefined : operationsOf(options.adopt)?.tasks.store;
  if (previous !== undefined) return previous;
  const dir = options.tasksDir ?? options.env?.[TASKS_DIR_ENV];
  if (dir === undefined || dir === '') return createMemoryTaskStore();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return createFolderTaskStore(dir, options.taskLiveness);
}
