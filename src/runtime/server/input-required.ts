/**
 * Input-required results (protocol revision 2026-07-28): a handler that asks its client for
 * something (elicitation, sampling, roots) answers a 2026 client with the questions and a signed
 * request state, and the client calls again with its answers. The handler runs again each round
 * (input-rounds.ts matches its questions to the answers), so any instance of a deployment can serve
 * any round: what the rounds need travels in the state, signed with the deployment's key
 * (MCPCTL_REQUEST_STATE_KEY, which the engine derives per deployment; without one a key of this
 * process alone). The state is bound to the method and the caller by the SDK's codec, and to the
 * tool or prompt and its arguments by a digest inside it. A 2025 client keeps the peer it has
 * (requests sent while the handler runs, on a session).
 */
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired,
  MissingRequiredClientCapabilityError,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type ClientCapabilities,
  type CreateMessageResult,
  type ElicitResult,
  type InputRequest,
  type InputRequiredResult,
  type ListRootsResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { CallContext } from './content.js';
import { answersOf, digestOf, InputRound, type InputQuestion, type RoundPayload } from './input-rounds.js';
import type { Peer } from './peer.js';

/** How long a client has to answer: the questions are for a person. */
const STATE_TTL_SECONDS = 30 * 60;

let processKey: Buffer | undefined;

/** What a request that may ask is: its method, and the tool or prompt with the arguments it was called with. */
export interface AskingTarget {
  method: 'tools/call' | 'prompts/get';
  name: string;
  args: unknown;
}

export interface InputRequests {
  /** the SDK's requestState hook: the state's signature, expiry, method and caller; resolves with its payload */
  verify(state: string, ctx: ServerContext): Promise<unknown>;
  /**
   * Serves one request: for a 2026 client, `run` with a peer that asks through input-required
   * results, and the questions it could not have answered as the result; for any other, `run` as it is.
   */
  serve<R>(
    ctx: ServerContext,
    target: AskingTarget,
    call: CallContext,
    run: (call: CallContext) => Promise<R>,
  ): Promise<R | InputRequiredResult>;
}

/** Raised to a handler's pending questions when its round ends: the client is asked, the handler runs again. */
export class InputPendingError extends Error {
  override readonly name = 'InputPendingError';
  constructor() {
    super('the client is asked for input; the request is served again with its answers');
  }
}

/**
 * The input-required machinery of one runtime. `key` signs request states (at least 32 bytes);
 * without one, a random key of this process (one process then serves every round: `mcpctl dev`).
 */
export function createInputRequests(
  key: string | Uint8Array | undefined,
  callerOf: (ctx: ServerContext) => string | undefined,
): InputRequests {
  const codec = createRequestStateCodec<RoundPayload>({
    key: key ?? (processKey ??= randomBytes(32)),
    ttlSeconds: STATE_TTL_SECONDS,
    bind: (ctx) => `${ctx.mcpReq.method}\0${callerOf(ctx) ?? ''}`,
  });
  return {
    verify: (state, ctx) => codec.verify(state, ctx),
    async serve<R>(
      ctx: ServerContext,
      target: AskingTarget,
      call: CallContext,
      run: (call: CallContext) => Promise<R>,
    ): Promise<R | InputRequiredResult> {
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      if (envelope?.[PROTOCOL_VERSION_META_KEY] === undefined || call.peer === undefined) return run(call);
      // the digest of the arguments is taken only by a request that carries state or asks (not every call)
      const state = ctx.mcpReq.requestState();
      const recorded = state === undefined ? [] : answersOf(state, digestOf(target));
      if (recorded === undefined) {
        // signed by this deployment, for the same method and caller, but for another tool, prompt or arguments
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState', {
          reason: 'invalid_request_state',
        });
      }
      const round = new InputRound(recorded, ctx.mcpReq.inputResponses);
      const capabilities = (envelope[CLIENT_CAPABILITIES_META_KEY] ?? {}) as ClientCapabilities;
      const asking = new Asking(round, capabilities);
      let outcome: { value: R } | { error: unknown };
      try {
        outcome = { value: await run({ ...call, peer: asking.peer(call.peer) }) };
      } catch (error) {
        outcome = { error };
      }
      asking.close();
      if (asking.missing !== undefined && failed(outcome)) throw asking.missing;
      if (asking.questions.size > 0) {
        const requestState = await codec.mint({ t: digestOf(target), a: round.known }, ctx);
        return inputRequired({ inputRequests: Object.fromEntries(asking.questions), requestState });
      }
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    },
  };
}

/** A handler failed: it threw, or returned an error result. */
function failed(outcome: { value: unknown } | { error: unknown }): boolean {
  if ('error' in outcome) return true;
  const value = outcome.value as { isError?: unknown } | null;
  return value !== null && typeof value === 'object' && value.isError === true;
}

/** The capability a question needs, as the `-32021` error names it. */
function requiredCapability(question: InputQuestion): ClientCapabilities | undefined {
  switch (question.method) {
    case 'sampling/createMessage':
      return { sampling: {} };
    case 'roots/list':
      return { roots: {} };
    case 'elicitation/create':
      return question.params.mode === 'url' ? { elicitation: { url: {} } } : { elicitation: {} };
  }
}

function declares(capabilities: ClientCapabilities, needed: ClientCapabilities): boolean {
  return Object.entries(needed).every(([name, members]) => {
    const declared = (capabilities as Record<string, Record<string, unknown> | undefined>)[name];
    if (declared === undefined || declared === null) return false;
    return Object.keys(members as object).every((member) => declared[member] !== undefined);
  });
}

/**
 * The questions of one round: answered ones resolve at once; the others are gathered until the
 * handler has asked all it asks together (one turn of the event loop after the first), then the
 * round ends and they reject, so the handler stops and the client is asked.
 */
class Asking {
  readonly questions = new Map<string, InputRequest>();
  missing: MissingRequiredClientCapabilityError | undefined;
  private readonly pending: Array<(error: Error) => void> = [];
  private closed = false;

  constructor(
    private readonly round: InputRound,
    private readonly capabilities: ClientCapabilities,
  ) {}

  peer(base: Peer): Peer {
    return {
      ...base,
      sample: (request, options) =>
        this.ask<CreateMessageResult>({ method: 'sampling/createMessage', params: request, ...options }),
      elicit: (message, requestedSchema, options) =>
        this.ask<ElicitResult>({
          method: 'elicitation/create',
          params: { mode: 'form', message, requestedSchema },
          ...options,
        }),
      elicitUrl: (message, url, options) =>
        this.ask<ElicitResult>({ method: 'elicitation/create', params: { mode: 'url', message, url }, ...options }),
      roots: (options) => this.ask<ListRootsResult>({ method: 'roots/list', params: {}, ...options }),
      clientCapabilities: () => this.capabilities,
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // most rounds ask nothing: an error (and its stack) is made only for pending questions
    if (this.pending.length === 0) return;
    const error = new InputPendingError();
    for (const reject of this.pending.splice(0)) reject(error);
  }

  private ask<T>(question: InputQuestion): Promise<T> {
    const needed = requiredCapability(question);
    if (needed !== undefined && !declares(this.capabilities, needed)) {
      const name = Object.keys(needed)[0]!;
      this.missing ??= new MissingRequiredClientCapabilityError(
        { requiredCapabilities: needed },
        `This request needs the client's ${name} capability, which the request does not declare`,
      );
      return Promise.reject(this.missing);
    }
    if (this.closed) return Promise.reject(new InputPendingError());
    const reply = this.round.reply(question);
    if ('answer' in reply) return Promise.resolve(reply.answer as T);
    this.questions.set(reply.ask.key, reply.ask.request);
    if (this.pending.length === 0) setImmediate(() => this.close());
    return new Promise<T>((_, reject) => this.pending.push(reject));
  }
}
