/**
 * SDK wiring: the low-level SDK `Server` of one request (stateless), one session or one stdio
 * connection, with a handler per MCP method, each served from the compiled definition.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type Implementation,
  type Prompt,
  type ServerCapabilities,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import type { Completions } from './completions.js';
import type { CallContext, ResourceContents } from './content.js';
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
  /** an error result with every secret replaced in its text (what the client gets to read) */
  withoutSecrets(result: CallToolResult): CallToolResult;
  traced: Tracer['traced'];
  /** tools that run as tasks (the tasks extension) */
  tasks: Tasks;
}

export interface ServerShape {
  info: Implementation;
  instructions: string | undefined;
  /** what every server declares */
  capabilities: ServerCapabilities;
  /** lists may change while a connection lives (a reloading `mcpctl dev`) */
  listChanged: boolean;
}

/**
 * A server for one request (no connection) or for a connection that outlives requests (a session,
 * stdio): only the latter takes subscriptions, and its handlers follow `current()` after a reload.
 */
export function buildServer(current: () => Operations, shape: ServerShape, connection?: Connection): Server {
  const capabilities = connectionCapabilities(shape, connection !== undefined);
  const interactive = connection !== undefined;
  const server = new Server(shape.info, {
    capabilities,
    ...(shape.instructions === undefined ? {} : { instructions: shape.instructions }),
  });
  if (capabilities.tools !== undefined) {
    server.setRequestHandler('tools/list', () =>
      current().traced('tools/list', undefined, async () => ({ tools: current().toolListing })),
    );
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const op = current();
      const tool = op.tools.get(request.params.name);
      if (tool === undefined)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      let created: Record<string, unknown> | undefined;
      const result: CallToolResult = await op.traced(
        'tools/call',
        tool.name,
        async () => {
          const call = op.callContext(ctx, { server, tool: tool.name, interactive });
          const answer = await callAsTask(op, tool, request.params.arguments, { ctx, server, call });
          if (answer !== undefined && 'created' in answer) created = answer.created;
          if (answer !== undefined) return answer.result;
          return op.withoutSecrets(await tool.call(request.params.arguments, call));
        },
        errorTextOf,
      );
      // a task's answer is the task (resultType "task"), not a tool result
      if (created !== undefined) return created as unknown as CallToolResult;
      return server.projectCallToolResult(result, tool.listing.outputSchema);
    });
    if (capabilities.extensions?.[TASKS_EXTENSION] !== undefined)
      current().tasks.register(server, (ctx) => current().callContext(ctx).userId);
  }
  if (capabilities.resources !== undefined) {
    server.setRequestHandler('resources/list', (_request, ctx) => {
      const op = current();
      return op.traced('resources/list', undefined, async () => ({
        resources: op.resources.list(op.callContext(ctx).userId),
      }));
    });
    server.setRequestHandler('resources/templates/list', (_request, ctx) => {
      const op = current();
      return op.traced('resources/templates/list', undefined, async () => ({
        resourceTemplates: op.resources.listTemplates(op.callContext(ctx).userId),
      }));
    });
    server.setRequestHandler('resources/read', async (request, ctx) => {
      const op = current();
      const contents: ResourceContents[] = await op.traced('resources/read', request.params.uri, () =>
        op.resources.read(request.params.uri, op.callContext(ctx)),
      );
      return { contents };
    });
    if (connection !== undefined) {
      server.setRequestHandler('resources/subscribe', (request) =>
        current().traced('resources/subscribe', request.params.uri, async () => {
          current().subscribers.subscribe(connection, request.params.uri);
          return {};
        }),
      );
      server.setRequestHandler('resources/unsubscribe', (request) =>
        current().traced('resources/unsubscribe', request.params.uri, async () => {
          current().subscribers.unsubscribe(connection, request.params.uri);
          return {};
        }),
      );
    }
  }
  if (capabilities.prompts !== undefined) {
    server.setRequestHandler('prompts/list', () =>
      current().traced('prompts/list', undefined, async () => ({ prompts: current().promptListing })),
    );
    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const op = current();
      const prompt = op.prompts.get(request.params.name);
      if (prompt === undefined)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
      return op.traced('prompts/get', prompt.listing.name, () =>
        prompt.get(request.params.arguments, op.callContext(ctx)),
      );
    });
  }
  if (capabilities.completions !== undefined) {
    server.setRequestHandler('completion/complete', (request, ctx) => {
      const op = current();
      return op.traced('completion/complete', undefined, () =>
        op.completions.complete(request.params, op.callContext(ctx)),
      );
    });
  }
  return server;
}

function connectionCapabilities(shape: ServerShape, connected: boolean): ServerCapabilities {
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
