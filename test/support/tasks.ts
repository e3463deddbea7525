/**
 * A server with a tool that runs as a task, and the 2026-07-28 requests that create a task on one
 * replica and follow it on another: for the tests of runners whose replicas share task state.
 */
import { modernRpc, taskClientCapabilities } from './modern.js';
import { waitFor } from './wait.js';

/** A definition (its module: TASK_MODULE as tasks.mjs) whose `sleep` runs as a task. */
export const TASK_SERVER = `name: taskshare
version: 1.0.0
template: custom
description: A tool that runs as a task, for runners whose replicas share task state.
# a Swarm service publishes its port on every address of its nodes: public on purpose here
auth: { type: none }
tools:
  - name: sleep
    description: Sleeps ms milliseconds, then says so and where.
    inputSchema:
      type: object
      properties: { ms: { type: integer } }
    task: optional
    handler: { type: module, module: tasks.mjs, export: sleep, timeout_ms: 60000 }
`;

export const TASK_MODULE = `import { hostname } from 'node:os';
export async function sleep({ ms = 0 }) {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return 'slept ' + ms + ' ms on ' + hostname();
}
`;

export interface TaskAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** One 2026-07-28 request of a client that declares the tasks extension. */
export function taskRpc(mcpUrl: string, method: string, params: Record<string, unknown>): Promise<TaskAnswer> {
  return modernRpc(mcpUrl, method, params, {
    client: 'task-share-test',
    capabilities: taskClientCapabilities({}),
  });
}

export interface SharedTask {
  taskId: string;
  /** what `tasks/get` on the other replica answered while the task ran */
  whileRunning: TaskAnswer;
  /** what it answered once the task ended */
  ended: Record<string, unknown>;
  /** the text of the task's result */
  text: string;
}

/**
 * Creates a task of `sleep` on the replica at `creator` and follows it to its end on the one at
 * `reader` only. Each URL is one replica's own `/mcp`, so the reader answers from the shared state.
 */
export async function taskAcrossReplicas(creator: string, reader: string, ms = 1500): Promise<SharedTask> {
  const created = await taskRpc(creator, 'tools/call', { name: 'sleep', arguments: { ms } });
  if (created.result?.resultType !== 'task') throw new Error(`no task was created: ${JSON.stringify(created)}`);
  const taskId = created.result.taskId as string;
  const whileRunning = await taskRpc(reader, 'tasks/get', { taskId });
  const ended = await waitFor(
    `task ${taskId} to end, read from the other replica`,
    async () => {
      const { result } = await taskRpc(reader, 'tasks/get', { taskId });
      return ['completed', 'failed', 'cancelled'].includes(result?.status as string) ? result : undefined;
    },
    60_000,
  );
  const content = (ended.result as { content?: Array<{ text?: string }> } | undefined)?.content;
  return { taskId, whileRunning, ended, text: content?.[0]?.text ?? '' };
}
