/**
 * What a running tool may do with the client that called it: log, report progress, ask for a
 * model's answer (sampling) or the user's input (elicitation), close its response stream, and
 * tell subscribers that a resource changed. Built per request from the SDK's request context.
 */
import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequestFormParams,
  ElicitResult,
  LoggingLevel,
  Server,
  ServerContext,
} from '@modelcontextprotocol/server';

export interface Peer {
  /** a `notifications/message` to the client, if its `logging/setLevel` lets this level through */
  log(level: LoggingLevel, data: unknown): Promise<void>;
  /** a `notifications/progress`, when the caller sent a progress token; nothing otherwise */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** `sampling/createMessage`: the client's model answers */
  sample(request: CreateMessageRequest['params']): Promise<CreateMessageResult>;
  /** `elicitation/create` (form mode): the user answers, declines or cancels */
  elicit(message: string, requestedSchema: ElicitRequestFormParams['requestedSchema']): Promise<ElicitResult>;
  /** ends the response stream now; the client reconnects with Last-Event-ID and gets the result */
  closeStream(): void;
  /** `notifications/resources/updated` to every client subscribed to the URI on this instance */
  resourceUpdated(uri: string): Promise<void>;
}

/** Raised when a tool asks the client for something it cannot give here. */
export class PeerUnavailableError extends Error {
  override readonly name = 'PeerUnavailableError';
}

export interface PeerOptions {
  tool: string;
  server: Server;
  /** a session or a stdio connection: the client can answer requests the server sends it */
  interactive: boolean;
  resourceUpdated(uri: string): Promise<void>;
}

export function createPeer(ctx: ServerContext, options: PeerOptions): Peer {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const needsAnswer = (what: string, capability: 'sampling' | 'elicitation'): void => {
    if (!options.interactive) {
      throw new PeerUnavailableError(`${what} needs a session: set "sessions: true" in the server definition`);
    }
    if (options.server.getClientCapabilities()?.[capability] === undefined) {
      throw new PeerUnavailableError(
        `the client does not support ${what} (it did not declare the ${capability} capability)`,
      );
    }
  };
  return {
    log: (level, data) => ctx.mcpReq.log(level, data, options.tool),
    async progress(progress, total, message) {
      if (progressToken === undefined) return;
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: {
          progressToken,
          progress,
          ...(total === undefined ? {} : { total }),
          ...(message === undefined ? {} : { message }),
        },
      });
    },
    async sample(request) {
      needsAnswer('sampling', 'sampling');
      // sent as part of this request, so it travels on this request's stream
      return ctx.mcpReq.send(
        { method: 'sampling/createMessage', params: request },
        { signal: ctx.mcpReq.signal },
      ) as Promise<CreateMessageResult>;
    },
    async elicit(message, requestedSchema) {
      needsAnswer('elicitation', 'elicitation');
      return ctx.mcpReq.send(
        { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } },
        { signal: ctx.mcpReq.signal },
      );
    },
    closeStream: () => ctx.http?.closeSSE?.(),
    resourceUpdated: (uri) => options.resourceUpdated(uri),
  };
}
