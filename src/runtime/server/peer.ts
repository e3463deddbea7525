/**
 * What a running tool may do with the client that called it: log, report progress, ask for a
 * model's answer (sampling), the user's input (elicitation) or the client's roots, close its
 * response stream, and tell subscribers that a resource changed. Built per request from the SDK's
 * request context. This is the peer of a 2025 client, which is sent requests while the tool runs
 * (on a session); a 2026-07-28 client is asked through input-required results instead
 * (input-required.ts replaces the asking methods).
 */
import { randomUUID } from 'node:crypto';
import type {
  ClientCapabilities,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequestFormParams,
  ElicitResult,
  ListRootsResult,
  LoggingLevel,
  Server,
  ServerContext,
} from '@modelcontextprotocol/server';

/** How a question is asked: under which key of the client's `inputResponses` (2026-07-28 clients). */
export interface AskOptions {
  key?: string;
}

export interface Peer {
  /** a `notifications/message` to the client, if its `logging/setLevel` lets this level through */
  log(level: LoggingLevel, data: unknown): Promise<void>;
  /** a `notifications/progress`, when the caller sent a progress token; nothing otherwise */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** `sampling/createMessage`: the client's model answers */
  sample(request: CreateMessageRequest['params'], options?: AskOptions): Promise<CreateMessageResult>;
  /** `elicitation/create` (form mode): the user answers, declines or cancels */
  elicit(
    message: string,
    requestedSchema: ElicitRequestFormParams['requestedSchema'],
    options?: AskOptions,
  ): Promise<ElicitResult>;
  /** `elicitation/create` (URL mode): the user is sent to `url`, and says whether they went on */
  elicitUrl(message: string, url: string, options?: AskOptions): Promise<ElicitResult>;
  /** `roots/list`: the folders the client lets the server see */
  roots(options?: AskOptions): Promise<ListRootsResult>;
  /** what the client said it supports (elicitation, sampling, roots…) */
  clientCapabilities(): ClientCapabilities;
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
  const needsAnswer = (what: string, capability: 'sampling' | 'elicitation' | 'roots'): void => {
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
    async elicitUrl(message, url) {
      needsAnswer('elicitation', 'elicitation');
      return ctx.mcpReq.send(
        { method: 'elicitation/create', params: { mode: 'url', message, url, elicitationId: randomUUID() } },
        { signal: ctx.mcpReq.signal },
      );
    },
    async roots() {
      needsAnswer('roots', 'roots');
      return ctx.mcpReq.send({ method: 'roots/list' }, { signal: ctx.mcpReq.signal });
    },
    clientCapabilities: () => options.server.getClientCapabilities() ?? {},
    closeStream: () => ctx.http?.closeSSE?.(),
    resourceUpdated: (uri) => options.resourceUpdated(uri),
  };
}
