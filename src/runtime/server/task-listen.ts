/**
 * `subscriptions/listen` with `notifications.taskIds` (the tasks extension): the MCP SDK serves
 * the stream and its list-changed and resource notices, but knows nothing of tasks (it drops the
 * field). So the stream the SDK answers is passed through here: its acknowledgement names the
 * task ids agreed to, and the notices of those tasks (task-notices.ts) join it. Only the caller's
 * own tasks are agreed to: another caller's task reads as unknown, as it does on `tasks/get`.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  SUBSCRIPTION_ID_META_KEY,
  type ClientCapabilities,
  type McpHandlerRequestOptions,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { watchTasks } from './task-notices.js';
import { isTaskId, type TaskStore } from './task-store.js';
import { ownerOf, TASKS_EXTENSION } from './tasks.js';

/** More task ids than this on one stream are not agreed to. */
const MAX_TASKS_PER_STREAM = 100;
/** At most this many streams follow tasks at once (as many as the SDK keeps listen streams). */
const MAX_STREAMS = 1024;
const KEEP_ALIVE_MS = 15_000;

type Fetch = (request: Request, options?: McpHandlerRequestOptions) => Promise<Response>;

export interface TaskListenOptions {
  store: TaskStore;
  /** the caller of a request, by the rule every request follows (it throws for a malformed user id) */
  userOf(request: Request, meta: Record<string, unknown> | undefined): string | undefined;
}

export interface TaskListen {
  /** `fetch` of the SDK's handler, with the task ids of listen streams served too */
  wrap(fetch: Fetch): Fetch;
  /** ends the streams this keeps open by itself (when the runtime stops) */
  closeAll(): void;
}

interface ListenMessage {
  id: string | number;
  taskIds: unknown[];
  meta: Record<string, unknown> | undefined;
}

export function createTaskListen(options: TaskListenOptions): TaskListen {
  const open = new Set<() => void>();
  const wrap =
    (fetch: Fetch): Fetch =>
    async (request, requestOptions) => {
      const message = listenAskingForTasks(requestOptions?.parsedBody);
      if (message === undefined) return fetch(request, requestOptions);
      if (!declaresTasks(message.meta)) return missingExtension(message.id);
      if (open.size >= MAX_STREAMS) return rpcError(message.id, 200, -32603, 'Subscription limit reached');
      let userId: string | undefined;
      try {
        userId = options.userOf(request, message.meta);
      } catch (error) {
        return rpcError(message.id, 400, -32602, error instanceof Error ? error.message : String(error));
      }
      const response = await fetch(request, requestOptions);
      const sse = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
      if (!response.ok || !sse || response.body === null) return response;
      const taskIds = await ownTasks(options.store, message.taskIds, ownerOf(userId));
      const body = mergeStreams(response.body, {
        store: options.store,
        taskIds,
        subscriptionId: message.id,
        signal: request.signal,
        open,
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
  return {
    wrap,
    closeAll() {
      for (const close of open) close();
    },
  };
}

/** What the identity rule (operations.ts) reads of a request: its `_meta` and its headers. */
export function contextOf(request: Request, meta: Record<string, unknown> | undefined): ServerContext {
  return { mcpReq: { _meta: meta, signal: request.signal }, http: { req: request } } as unknown as ServerContext;
}

/** A `subscriptions/listen` request whose filter names task ids; anything else is the SDK's alone. */
function listenAskingForTasks(body: unknown): ListenMessage | undefined {
  if (!isObject(body) || body.method !== 'subscriptions/listen') return undefined;
  if (typeof body.id !== 'string' && typeof body.id !== 'number') return undefined;
  const params = isObject(body.params) ? body.params : {};
  const notifications = isObject(params.notifications) ? params.notifications : {};
  if (!Array.isArray(notifications.taskIds)) return undefined;
  return { id: body.id, taskIds: notifications.taskIds, meta: isObject(params._meta) ? params._meta : undefined };
}

function declaresTasks(meta: Record<string, unknown> | undefined): boolean {
  const capabilities = meta?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  return isObject(capabilities) && isObject(capabilities.extensions) && TASKS_EXTENSION in capabilities.extensions;
}

/** The asked ids that name a task of this caller, in the order asked, without repeats. */
async function ownTasks(store: TaskStore, asked: unknown[], owner: string): Promise<string[]> {
  const wanted = [...new Set(asked.filter((id): id is string => typeof id === 'string' && isTaskId(id)))];
  const own: string[] = [];
  for (const taskId of wanted.slice(0, MAX_TASKS_PER_STREAM)) {
    const record = await store.read(taskId).catch(() => undefined);
    if (record?.owner === owner) own.push(taskId);
  }
  return own;
}

interface MergeOptions {
  store: TaskStore;
  taskIds: string[];
  subscriptionId: string | number;
  signal: AbortSignal;
  open: Set<() => void>;
}

/**
 * The SDK's stream with the task notices joined in. The SDK ends a stream that asked for none of
 * its own notices right after the acknowledgement; when it asked for tasks, this stream goes on
 * alone (with its own keep-alive) until the client leaves or the runtime stops.
 */
function mergeStreams(sdk: ReadableStream<Uint8Array>, options: MergeOptions): ReadableStream<Uint8Array> {
  const { taskIds, subscriptionId } = options;
  const encoder = new TextEncoder();
  const reader = sdk.getReader();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let sdkIdle = false;
  let stopWatching = (): void => {};
  let keepAlive: ReturnType<typeof setInterval> | undefined;

  const write = (frame: string): void => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(frame));
    } catch {
      // the client went away between two notices: the abort or cancel closes the rest
    }
  };
  const close = (graceful: boolean): void => {
    if (closed) return;
    if (graceful) write(frameOf({ id: subscriptionId, result: closingResult(subscriptionId) }));
    closed = true;
    stopWatching();
    if (keepAlive !== undefined) clearInterval(keepAlive);
    options.open.delete(closeGracefully);
    options.signal.removeEventListener('abort', onAbort);
    void reader.cancel().catch(() => {});
    try {
      controller.close();
    } catch {
      // the client already went away
    }
  };
  // a stream the SDK still serves is ended by the SDK (with its closing result), then here
  const closeGracefully = (): void => {
    if (sdkIdle) close(true);
  };
  const onAbort = (): void => close(false);

  const startWatching = (): void => {
    stopWatching = watchTasks(options.store, taskIds, (state) =>
      write(
        frameOf({
          method: 'notifications/tasks',
          params: { ...state, _meta: { [SUBSCRIPTION_ID_META_KEY]: subscriptionId } },
        }),
      ),
    );
  };
  /** One frame of the SDK's stream: the acknowledgement gains the task ids; its early end is dropped. */
  const pass = (frame: string, first: boolean): void => {
    const message = first ? messageOf(frame) : undefined;
    if (first && message?.method === 'notifications/subscriptions/acknowledged' && taskIds.length > 0) {
      const params = message.params as { notifications?: Record<string, unknown> };
      sdkIdle = Object.keys(params.notifications ?? {}).length === 0;
      params.notifications = { ...params.notifications, taskIds };
      write(frameOf(message));
      startWatching();
      return;
    }
    if (sdkIdle && frame.includes('"result"') && messageOf(frame)?.id === subscriptionId) return;
    write(`${frame}\n\n`);
  };
  const pump = async (): Promise<void> => {
    const decoder = new TextDecoder();
    let buffered = '';
    let first = true;
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done || closed) break;
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) !== -1) {
        pass(buffered.slice(0, end), first);
        first = false;
        buffered = buffered.slice(end + 2);
      }
    }
    if (closed) return;
    if (!sdkIdle) return close(false);
    keepAlive = setInterval(() => write(': keepalive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
  };

  return new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      options.open.add(closeGracefully);
      if (options.signal.aborted) return close(false);
      options.signal.addEventListener('abort', onAbort, { once: true });
      void pump();
    },
    cancel() {
      close(false);
    },
  });
}

function frameOf(message: Record<string, unknown>): string {
  return `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`;
}

/** The JSON-RPC message of an SSE frame, if it holds one. */
function messageOf(frame: string): Record<string, unknown> | undefined {
  const data = frame
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice('data:'.length).trimStart())
    .join('\n');
  if (data === '') return undefined;
  try {
    const message = JSON.parse(data) as unknown;
    return isObject(message) ? message : undefined;
  } catch {
    return undefined;
  }
}

function closingResult(subscriptionId: string | number): Record<string, unknown> {
  return { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: subscriptionId } };
}

function missingExtension(id: string | number): Response {
  const error = new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `Task notifications need the ${TASKS_EXTENSION} extension: declare it in the client's capabilities`,
  );
  return rpcError(id, 400, error.code, error.message, error.data);
}

function rpcError(id: string | number, status: number, code: number, message: string, data?: unknown): Response {
  return Response.json(
    { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } },
    { status },
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
