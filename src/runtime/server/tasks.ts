/**
 * The tasks extension (`io.modelcontextprotocol/tasks`): a tool marked `task:` answers a client
 * that declares the extension with a task (`resultType: "task"`) and runs on; the client follows
 * it with `tasks/get`, answers its questions with `tasks/update` and stops it with `tasks/cancel`.
 * Task state lives in a store the deployment's instances share (task-store.ts), so any instance
 * can answer for any task, and only the caller who started a task can read or steer it.
 */
import { createHash } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type ClientCapabilities,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { CallContext } from './content.js';
import type { Peer } from './peer.js';
import { TaskRun } from './task-run.js';
import { isTaskId, newTaskId, TERMINAL, type TaskRecord, type TaskStore } from './task-store.js';
import type { CompiledTool } from './tools.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How long a task stays readable after its last change. */
export const TASK_TTL_MS = 60 * 60 * 1000;
/** How often a client should poll `tasks/get`. */
export const TASK_POLL_MS = 500;
const SWEEP_EVERY_MS = 60 * 1000;

/** What a `tools/call` of a tool with `task:` comes to. */
export type TaskAnswer =
  /** a task was created: the call's answer */
  | { created: Record<string, unknown> }
  /** the handler finished before it started a task (`start: handler`): an ordinary answer */
  | { settled: CallToolResult }
  /** the client does not take tasks and the tool does not need one: call it as usual */
  | { ordinary: true };

export interface TaskCall {
  ctx: ServerContext;
  server: Server;
  /** the ordinary call context of the request (its user, signal and peer) */
  call: CallContext;
  readable(result: CallToolResult): CallToolResult;
}

export interface Tasks {
  store: TaskStore;
  call(tool: CompiledTool, args: unknown, request: TaskCall): Promise<TaskAnswer>;
  /** tasks/get, tasks/update and tasks/cancel on a server; `userOf` names the caller */
  register(server: Server, userOf: (ctx: ServerContext) => string | undefined): void;
}

export interface TasksOptions {
  store: TaskStore;
  onInternalError(tool: string, error: unknown): void;
}

/** The client declared the extension: on this request (2026-07-28) or when its session began. */
export function declaresTasks(ctx: ServerContext, server: Server): boolean {
  return capabilitiesOf(ctx, server)?.extensions?.[TASKS_EXTENSION] !== undefined;
}

function capabilitiesOf(ctx: ServerContext, server: Server): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  return declared ?? server.getClientCapabilities();
}

function missingExtension(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `${what} needs the ${TASKS_EXTENSION} extension: declare it in the client's capabilities`,
  );
}

/** The owner of a task: a digest, so the store never holds user ids. */
export function ownerOf(userId: string | undefined): string {
  return createHash('sha256')
    .update(userId === undefined ? '' : `user:${userId}`)
    .digest('base64url');
}

export function createTasks(options: TasksOptions): Tasks {
  const { store } = options;
  let lastSweep = 0;

  const open = async (userId: string | undefined): Promise<TaskRecord> => {
    const now = Date.now();
    if (now - lastSweep > SWEEP_EVERY_MS) {
      lastSweep = now;
      void store.sweep(now).catch(() => {});
    }
    const at = new Date(now).toISOString();
    const record: TaskRecord = {
      taskId: newTaskId(),
      owner: ownerOf(userId),
      status: 'working',
      createdAt: at,
      lastUpdatedAt: at,
      ttlMs: TASK_TTL_MS,
      pollIntervalMs: TASK_POLL_MS,
    };
    // the answer names the task only once another instance would find it
    await store.create(record);
    return record;
  };

  const runOf = (tool: CompiledTool, record: TaskRecord, request: TaskCall): TaskRun => {
    const declared = capabilitiesOf(request.ctx, request.server);
    return new TaskRun({
      store,
      record,
      peer: request.call.peer ?? silentPeer(),
      canAnswer: {
        elicitation: declared?.elicitation !== undefined,
        sampling: declared?.sampling !== undefined,
        roots: declared?.roots !== undefined,
      },
      readable: (result) => request.readable(result),
      onInternalError: (error) => options.onInternalError(tool.name, error),
    });
  };

  const call = async (tool: CompiledTool, args: unknown, request: TaskCall): Promise<TaskAnswer> => {
    const task = tool.task;
    if (task === undefined) return { ordinary: true };
    if (!declaresTasks(request.ctx, request.server)) {
      if (task.support === 'required') throw missingExtension(`Tool "${tool.name}" runs only as a task: it`);
      return { ordinary: true };
    }
    if (task.start === 'handler') return startByHandler(tool, args, request);
    const record = await open(request.call.userId);
    const run = runOf(tool, record, request);
    void run.finish(tool.call(args, { userId: request.call.userId, signal: run.abort.signal, peer: run.peer }));
    return { created: createdResult(record) };
  };

  /** The handler runs as an ordinary call until it calls `context.startTask()`; from then on, as a task. */
  const startByHandler = async (tool: CompiledTool, args: unknown, request: TaskCall): Promise<TaskAnswer> => {
    const requestPeer = request.call.peer ?? silentPeer();
    let run: TaskRun | undefined;
    let started: (record: TaskRecord) => void = () => {};
    const whenStarted = new Promise<TaskRecord>((resolve) => (started = resolve));
    const abort = new AbortController();
    const onRequestAbort = (): void => abort.abort();
    request.call.signal.addEventListener('abort', onRequestAbort, { once: true });
    const peer: Peer & { startTask(): Promise<void> } = {
      log: (level, data) => (run?.peer ?? requestPeer).log(level, data),
      progress: (...a) => (run?.peer ?? requestPeer).progress(...a),
      sample: (params, asked) => (run?.peer ?? requestPeer).sample(params, asked),
      elicit: (message, schema, asked) => (run?.peer ?? requestPeer).elicit(message, schema, asked),
      elicitUrl: (message, url, asked) => (run?.peer ?? requestPeer).elicitUrl(message, url, asked),
      roots: (asked) => (run?.peer ?? requestPeer).roots(asked),
      clientCapabilities: () => requestPeer.clientCapabilities(),
      closeStream: () => (run?.peer ?? requestPeer).closeStream(),
      resourceUpdated: (uri) => requestPeer.resourceUpdated(uri),
      async startTask() {
        if (run !== undefined) return;
        const record = await open(request.call.userId);
        run = runOf(tool, record, request);
        // from now on the task's cancel stops the handler, not the end of the request
        request.call.signal.removeEventListener('abort', onRequestAbort);
        run.abort.signal.addEventListener('abort', () => abort.abort(), { once: true });
        started(record);
      },
    };
    const running = tool.call(args, { userId: request.call.userId, signal: abort.signal, peer });
    const first = await Promise.race([
      running.then((result) => ({ result }) as const),
      whenStarted.then((record) => ({ record }) as const),
    ]);
    if ('record' in first && run !== undefined) {
      void run.finish(running);
      return { created: createdResult(first.record) };
    }
    request.call.signal.removeEventListener('abort', onRequestAbort);
    return { settled: (first as { result: CallToolResult }).result };
  };

  const register = (server: Server, userOf: (ctx: ServerContext) => string | undefined): void =>
    registerTaskMethods(store, server, userOf);

  return { store, call, register };
}

/** tasks/get, tasks/update and tasks/cancel: only for a client that declared the extension, only on its own tasks. */
function registerTaskMethods(
  store: TaskStore,
  server: Server,
  userOf: (ctx: ServerContext) => string | undefined,
): void {
  const find = async (taskId: string, ctx: ServerContext): Promise<TaskRecord> => {
    if (!declaresTasks(ctx, server)) throw missingExtension('tasks/get, tasks/update and tasks/cancel');
    // another caller's task reads as unknown: its existence is not theirs to learn
    const record = isTaskId(taskId) ? await store.read(taskId) : undefined;
    if (record === undefined || record.owner !== ownerOf(userOf(ctx)))
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task: ${taskId.slice(0, 64)}`);
    return record;
  };
  const byId = z.looseObject({ taskId: z.string() });
  server.setRequestHandler('tasks/get', { params: byId }, async (params, ctx) =>
    taskState(await find(params.taskId, ctx), store),
  );
  server.setRequestHandler('tasks/cancel', { params: byId }, async (params, ctx) => {
    const record = await find(params.taskId, ctx);
    // a finished task stays as it ended: cancelling it again is the same empty answer
    if (!TERMINAL.has(record.status)) await store.requestCancel(record.taskId);
    return {};
  });
  server.setRequestHandler('tasks/update', { params: byId }, async (params, ctx) => {
    const record = await find(params.taskId, ctx);
    if (TERMINAL.has(record.status)) return {};
    // the SDK lifts a request's inputResponses out of its params (as it does for tools/call)
    const responses = ctx.mcpReq.inputResponses ?? responsesIn(params);
    // only answers to questions the task asked are kept; anything else is ignored
    const asked = new Set(Object.keys(record.inputRequests ?? {}));
    const answers = Object.fromEntries(Object.entries(responses).filter(([key]) => asked.has(key)));
    if (Object.keys(answers).length > 0) await store.answer(record.taskId, answers);
    return {};
  });
}

function createdResult(record: TaskRecord): Record<string, unknown> {
  return { resultType: 'task', ...taskFields(record) };
}

function taskFields(record: TaskRecord): Record<string, unknown> {
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage === undefined ? {} : { statusMessage: record.statusMessage }),
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
  };
}

/**
 * What `tasks/get` answers (and a task status notice carries): the state as the running instance
 * last wrote it, read together with what other instances recorded since (a cancel, answers), so
 * every instance answers the same.
 */
export async function taskState(record: TaskRecord, store: TaskStore): Promise<Record<string, unknown>> {
  if (!TERMINAL.has(record.status) && (await store.cancelRequested(record.taskId))) {
    return { ...taskFields({ ...record, status: 'cancelled' }) };
  }
  if (record.status === 'completed') return { ...taskFields(record), result: record.result };
  if (record.status === 'failed') return { ...taskFields(record), error: record.error };
  if (record.status === 'cancelled') return taskFields(record);
  const answers = await store.answers(record.taskId);
  const pending = Object.entries(record.inputRequests ?? {}).filter(([key]) => !answers.has(key));
  if (pending.length === 0) return taskFields({ ...record, status: 'working' });
  return { ...taskFields({ ...record, status: 'input_required' }), inputRequests: Object.fromEntries(pending) };
}

function responsesIn(params: Record<string, unknown>): Record<string, unknown> {
  const responses = params.inputResponses;
  return responses !== null && typeof responses === 'object' && !Array.isArray(responses)
    ? (responses as Record<string, unknown>)
    : {};
}

function silentPeer(): Peer {
  return {
    log: async () => {},
    progress: async () => {},
    sample: async () => Promise.reject(new Error('sampling needs a client connection')),
    elicit: async () => Promise.reject(new Error('elicitation needs a client connection')),
    elicitUrl: async () => Promise.reject(new Error('elicitation needs a client connection')),
    roots: async () => Promise.reject(new Error('roots need a client connection')),
    clientCapabilities: () => ({}),
    closeStream: () => {},
    resourceUpdated: async () => {},
  };
}

/**
 * A `tools/call` as the tasks extension sees it: undefined when the call is an ordinary one,
 * else its result, and the created task's answer when a task was created.
 */
export async function callAsTask(
  op: { tasks: Tasks; withoutSecrets(result: CallToolResult): CallToolResult },
  tool: CompiledTool,
  args: unknown,
  request: Omit<TaskCall, 'readable'>,
): Promise<{ result: CallToolResult; created?: Record<string, unknown> } | undefined> {
  if (tool.task === undefined) return undefined;
  const answer = await op.tasks.call(tool, args, { ...request, readable: (result) => op.withoutSecrets(result) });
  if ('ordinary' in answer) return undefined;
  if ('settled' in answer) return { result: op.withoutSecrets(answer.settled) };
  return { result: { content: [] }, created: answer.created };
}
