/**
 * SDK wiring: the low-level SDK `Server` of one request (stateless), one session or one stdio
 * connection, with a handler per MCP method, each served from the compiled definition.
 */
import {
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type InputRequiredResult,
  type Implementation,
  type Prompt,
  type ServerCapabilities,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { withCacheFields, type ListCacheHints } from './cache-hints.js';
import type { Completions } from './completions.js';
import type { CallContext, ResourceContents } from './content.js';
import type { InputRequests } from './input-required.js';
import type { CompiledPrompt } from './prompts.js';
import type { ResourceSet } from './resources.js';
import type { Connection, Subscribers } from './subscriptions.js';
import { callAsTask, TASKS_EXTENSION, type Tasks } from './tasks.js';
import type { CompiledTool } from './tools.js';
import { errorTextOf, type Tracer } from './tracing.js';

/** What a request is served from: the compiled parts of one runtime. */
export interface Operations {
  tools: Map<string, CompiledTool>;
  toolListing: Tool[];
  resources: ResourceSet;
  prompts: Map<string, CompiledPrompt>;
  promptListing: Prompt[];
  completions: Completions;
  subscribers: Subscribers;
  callContext(ctx: ServerContext, peer?: { server: Server; tool: string; interactive: boolean }): CallContext;
  /** asks 2026 clients through input-required results (tools/call, prompts/get) */
  inputRequests: InputRequests;
  /** an error result with every secret replaced in its text (what the client gets to read) */
  withoutSecrets(result: CallToolResult): CallToolResult;
  traced: Tracer['traced'];
  /** tools that run as tasks (the tasks extension) */
  tasks: Tasks;
}

export interface ServerShape {
  info: Implementation;
  instructions: string | undefined;
  /** the caching hints of the lists (2026-07-28 clients) */
  cacheHints: ListCacheHints;
  /** what every server declares */
  capabilities: ServerCapabilities;
  /** lists may change while a connection lives (a reloading `mcpctl dev`) */
  listChanged: boolean;
}

/**
 * A server for one request (no connection) or for a connection that outlives requests (a session,
 * stdio): only the latter takes subscriptions, and its handlers follow `current()` after a reload.
 */
export function buildServer(
  current: () => Operations,
  shape: ServerShape,
  connection?: Connection,
  era?: 'legacy' | 'modern',
): Server {
  const capabilities = connectionCapabilities(shape, connection !== undefined, era === 'modern');
  const interactive = connection !== undefined;
  const server = new Server(shape.info, {
    capabilities,
    cacheHints: shape.cacheHints,
    ...(shape.instructions === undefined ? {} : { instructions: shape.instructions }),
    requestState: { verify: (state, ctx) => current().inputRequests.verify(state, ctx) },
  });
  if (capabilities.tools !== undefined) {
    server.setRequestHandler('tools/list', (_request, ctx) =>
      current().traced(ctx, 'tools/list', undefined, async () => ({ tools: current().toolListing })),
    );
    server.setRequestHandler('tools/call', (request, ctx) =>
      callTool(server, current(), request.params, ctx, interactive),
    );
    if (capabilities.extensions?.[TASKS_EXTENSION] !== undefined)
      current().tasks.register(server, (ctx) => current().callContext(ctx).userId);
  }
  if (capabilities.resources !== undefined) {
    server.setRequestHandler('resources/list', (_request, ctx) => {
      const op = current();
      return op.traced(ctx, 'resources/list', undefined, async () => ({
        resources: op.resources.list(op.callContext(ctx).userId),
      }));
    });
    server.setRequestHandler('resources/templates/list', (_request, ctx) => {
      const op = current();
      return op.traced(ctx, 'resources/templates/list', undefined, async () => ({
        resourceTemplates: op.resources.listTemplates(op.callContext(ctx).userId),
      }));
    });
    server.setRequestHandler('resources/read', async (request, ctx) => {
      const op = current();
      const contents: ResourceContents[] = await op.traced(ctx, 'resources/read', request.params.uri, () =>
        op.resources.read(request.params.uri, op.callContext(ctx)),
      );
      return withCacheFields({ contents }, op.resources.cacheOf(request.params.uri), ctx);
    });
    if (connection !== undefined) {
      server.setRequestHandler('resources/subscribe', (request, ctx) =>
        current().traced(ctx, 'resources/subscribe', request.params.uri, async () => {
          current().subscribers.subscribe(connection, request.params.uri);
          return {};
        }),
      );
      server.setRequestHandler('resources/unsubscribe', (request, ctx) =>
        current().traced(ctx, 'resources/unsubscribe', request.params.uri, async () => {
          current().subscribers.unsubscribe(connection, request.params.uri);
          return {};
        }),
      );
    }
  }
  if (capabilities.prompts !== undefined) {
    server.setRequestHandler('prompts/list', (_request, ctx) =>
      current().traced(ctx, 'prompts/list', undefined, async () => ({ prompts: current().promptListing })),
    );
    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const op = current();
      const prompt = op.prompts.get(request.params.name);
      if (prompt === undefined)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
      const name = prompt.listing.name;
      const call = op.callContext(ctx, { server, tool: name, interactive });
      return op.traced(ctx, 'prompts/get', name, () =>
        op.inputRequests.serve(ctx, { method: 'prompts/get', name, args: request.params.arguments }, call, (asking) =>
          prompt.get(request.params.arguments, asking),
        ),
      );
    });
  }
  if (capabilities.completions !== undefined) {
    server.setRequestHandler('completion/complete', (request, ctx) => {
      const op = current();
      return op.traced(ctx, 'completion/complete', undefined, () =>
        op.completions.complete(request.params, op.callContext(ctx)),
      );
    });
  }
  return server;
}

/** A tools/call: a declarative tool's result, or a module's (asking 2026 clients through input rounds), or a task. */
async function callTool(
  server: Server,
  op: Operations,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  ctx: ServerContext,
  interactive: boolean,
): Promise<CallToolResult | InputRequiredResult> {
  const tool = op.tools.get(params.name);
  if (tool === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
  const args = params.arguments;
  const target = { method: 'tools/call', name: tool.name, args } as const;
  // a declarative handler never talks to the client: its call gets no peer and no input rounds
  if (!tool.talksToClient) {
    const plain = await op.traced(
      ctx,
      'tools/call',
      tool.name,
      async () => op.withoutSecrets(await tool.call(args, op.callContext(ctx))),
      errorTextOf,
    );
    return server.projectCallToolResult(plain, tool.listing.outputSchema);
  }
  const call = op.callContext(ctx, { server, tool: tool.name, interactive });
  let created: Record<string, unknown> | undefined;
  const result = await op.traced(
    ctx,
    'tools/call',
    tool.name,
    () =>
      op.inputRequests.serve(ctx, target, call, async (asking) => {
        // a tool marked `task:` may answer with a task (its questions before it starts are asked here)
        const answer = await callAsTask(op, tool, args, { ctx, server, call: asking });
        if (answer?.created !== undefined) created = answer.created;
        if (answer !== undefined) return answer.result;
        return op.withoutSecrets(await tool.call(args, asking));
      }),
    (value) => (isInputRequiredResult(value) || created !== undefined ? undefined : errorTextOf(value)),
  );
  // a task's answer is the task (resultType "task"), not a tool result
  if (created !== undefined) return created as unknown as CallToolResult;
  if (isInputRequiredResult(result)) return result;
  return server.projectCallToolResult(result, tool.listing.outputSchema);
}

function connectionCapabilities(shape: ServerShape, connected: boolean, modern: boolean): ServerCapabilities {
  // a 2026-07-28 client hears resource updates on its `subscriptions/listen` stream (listen-streams.ts)
  if (!connected && modern && shape.capabilities.resources !== undefined)
    return { ...shape.capabilities, resources: { ...shape.capabilities.resources, subscribe: true } };
  if (!connected) return shape.capabilities;
  const { tools, resources, prompts } = shape.capabilities;
  const listChanged = shape.listChanged ? { listChanged: true } : {};
  return {
    ...shape.capabilities,
    ...(tools === undefined ? {} : { tools: { ...tools, ...listChanged } }),
    ...(resources === undefined ? {} : { resources: { ...resources, subscribe: true, ...listChanged } }),
    ...(prompts === undefined ? {} : { prompts: { ...prompts, ...listChanged } }),
  };
}
