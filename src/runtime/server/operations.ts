/**
 * What requests are served from: the compiled parts of one runtime, with who is calling (the
 * validated token's identity, or the one the request names) and the secrets taken out of every
 * error a client reads.
 */
import { join } from 'node:path';
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { USER_ID_HEADER, USER_ID_META_KEY } from '../constants.js';
import type { CompiledDefinition } from './compile.js';
import type { CallContext } from './content.js';
import type { Secrets } from './logger.js';
import type { Operations } from './mcp-server.js';
import { createInputRequests } from './input-required.js';
import { createPeer } from './peer.js';
import { Subscribers } from './subscriptions.js';
import type { TaskStore } from './task-store.js';
import { createTasks } from './tasks.js';
import type { Tracer } from './tracing.js';

const MAX_USER_ID_LENGTH = 256;

export interface OperationsOptions {
  tracer: Tracer;
  /** the user id when a request names none (for `mcpctl dev --user-id`) */
  defaultUserId: string | undefined;
  /** the operations of the newest runtime (a peer's resource updates go there after a reload) */
  current(): Operations;
  /** signs the request state of input-required results; default: a key of this process */
  requestStateKey?: string | Uint8Array | undefined;
  /** where tasks live (the tasks extension) */
  taskStore: TaskStore;
}

export function createOperations(compiled: CompiledDefinition, options: OperationsOptions): Operations {
  const { tools, resources, prompts, completions, realDir } = compiled;
  const subscribers = new Subscribers((uri) => {
    const file = resources.fileOf(uri);
    return file === undefined ? undefined : join(realDir, file);
  });
  const callContext = createCallContext(compiled, options);
  return {
    tools,
    toolListing: [...tools.values()].map((t) => t.listing),
    resources,
    prompts,
    promptListing: [...prompts.values()].map((p) => p.listing),
    completions,
    subscribers,
    callContext,
    inputRequests: createInputRequests(options.requestStateKey, (ctx) => callContext(ctx).userId),
    withoutSecrets: (result) => withoutSecrets(result, compiled.secrets),
    traced: options.tracer.traced,
    tasks: createTasks({
      store: options.taskStore,
      onInternalError: (tool, error) =>
        compiled.logger.log({
          level: 'error',
          event: 'task_error',
          tool,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        }),
    }),
  };
}

function createCallContext(compiled: CompiledDefinition, options: OperationsOptions): Operations['callContext'] {
  const { guard } = compiled;
  return (ctx: ServerContext, peer?: { server: Server; tool: string; interactive: boolean }): CallContext => {
    const record = options.tracer.recordOf(ctx);
    // Over HTTP to a server with auth, the identity is the validated token's and nothing else;
    // stdio (a local connection) and a server without auth take the one the request names.
    const userId =
      guard !== undefined && (record !== undefined || ctx.http?.req !== undefined)
        ? record?.userId
        : (userIdOf(ctx) ?? options.defaultUserId);
    if (record !== undefined && userId !== undefined) record.userId = userId;
    return {
      userId,
      signal: ctx.mcpReq.signal,
      ...(peer === undefined
        ? {}
        : {
            peer: createPeer(ctx, { ...peer, resourceUpdated: (uri) => options.current().subscribers.updated(uri) }),
          }),
    };
  };
}

/** A tool's failure is read by the client and by a model: its text loses every secret (an exec program's stderr may quote one). */
function withoutSecrets(result: CallToolResult, secrets: Secrets): CallToolResult {
  if (result.isError !== true || secrets.size === 0) return result;
  return {
    ...result,
    content: result.content.map((block) =>
      block.type === 'text' ? { ...block, text: secrets.redactText(block.text) } : block,
    ),
  };
}

/** The caller's user id: `_meta["mcpctl/user_id"]` of the request, else the X-MCP-User-Id header. */
export function userIdOf(ctx: ServerContext): string | undefined {
  const fromMeta = ctx.mcpReq._meta?.[USER_ID_META_KEY];
  const fromHeader = ctx.http?.req?.headers.get(USER_ID_HEADER) ?? undefined;
  const id = typeof fromMeta === 'string' && fromMeta !== '' ? fromMeta : fromHeader === '' ? undefined : fromHeader;
  if (id === undefined) return undefined;
  if (id.length > MAX_USER_ID_LENGTH || /\p{Cc}/u.test(id)) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `The user id must be 1-${MAX_USER_ID_LENGTH} characters without control characters`,
    );
  }
  return id;
}
