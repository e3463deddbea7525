/**
 * One task while it runs on this instance: the tool's handler detached from the request that
 * started it, its state written to the store as it changes, a cancel noticed wherever it was
 * asked, and questions to the client (elicitation, sampling) parked in the task until a
 * `tasks/update` answers them, on this instance or another.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult, CreateMessageResult, ElicitResult, ListRootsResult } from '@modelcontextprotocol/server';
import { PeerUnavailableError, type Peer } from './peer.js';
import { TERMINAL, type PendingInput, type TaskRecord, type TaskStatus, type TaskStore } from './task-store.js';

/** How often a running task looks for a cancel or an answer another instance recorded. */
export const WATCH_MS = 200;

/** A JSON-RPC error a handler raised on purpose (a `code` of the JSON-RPC range): the task failed. */
export interface ProtocolFailure {
  code: number;
  message: string;
}

export function protocolFailureOf(error: unknown): ProtocolFailure | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'number' || !Number.isInteger(code) || code < -32768 || code > -32000) return undefined;
  return { code, message: typeof message === 'string' ? message : 'the task failed' };
}

export interface TaskRunOptions {
  store: TaskStore;
  record: TaskRecord;
  /** the client, as it was when the task was created: what it declared it can answer */
  peer: Peer;
  canAnswer: { elicitation: boolean; sampling: boolean; roots: boolean };
  /** the tool's answer, as the client may read it (secrets taken out) */
  readable(result: CallToolResult): CallToolResult;
  onInternalError(error: unknown): void;
}

/** A task being run: its state, its peer for the handler, and how it ends. */
export class TaskRun {
  readonly abort = new AbortController();
  readonly peer: Peer;
  private readonly record: TaskRecord;
  private saving: Promise<void> = Promise.resolve();
  private asked = 0;
  private readonly watch: NodeJS.Timeout;
  private lastBeat = Date.now();
  private looking = false;

  constructor(private readonly options: TaskRunOptions) {
    this.record = options.record;
    this.peer = {
      ...options.peer,
      // the request that started the task has ended: nothing listens for its logs or progress
      log: async () => {},
      progress: async () => {},
      closeStream: () => {},
      elicit: async (message, requestedSchema, asked) => {
        if (!options.canAnswer.elicitation)
          throw new PeerUnavailableError('the client does not support elicitation (it did not declare the capability)');
        return (await this.ask(
          'elicitation',
          { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } },
          asked?.key,
        )) as ElicitResult;
      },
      elicitUrl: async (message, url, asked) => {
        if (!options.canAnswer.elicitation)
          throw new PeerUnavailableError('the client does not support elicitation (it did not declare the capability)');
        return (await this.ask(
          'elicitation',
          { method: 'elicitation/create', params: { mode: 'url', message, url, elicitationId: randomUUID() } },
          asked?.key,
        )) as ElicitResult;
      },
      sample: async (request, asked) => {
        if (!options.canAnswer.sampling)
          throw new PeerUnavailableError('the client does not support sampling (it did not declare the capability)');
        return (await this.ask(
          'sampling',
          { method: 'sampling/createMessage', params: request },
          asked?.key,
        )) as CreateMessageResult;
      },
      roots: async (asked) => {
        if (!options.canAnswer.roots)
          throw new PeerUnavailableError('the client does not support roots (it did not declare the capability)');
        return (await this.ask('roots', { method: 'roots/list', params: {} }, asked?.key)) as ListRootsResult;
      },
    };
    this.watch = setInterval(() => void this.look(), WATCH_MS);
    this.watch.unref();
  }

  /** Runs the handler to its end and records how it ended. */
  async finish(running: Promise<CallToolResult>): Promise<void> {
    try {
      const result = await running;
      await this.settle('completed', { result: this.options.readable(result) });
    } catch (error) {
      // a handler stopped because its task ended (a cancel, an instance taken for stopped) did not fail
      if (TERMINAL.has(this.record.status)) return;
      const failure = protocolFailureOf(error);
      if (failure === undefined) this.options.onInternalError(error);
      await this.settle('failed', {
        error: failure ?? {
          code: -32603,
          message: 'the task failed with an internal error; the server log has the details',
        },
      });
    } finally {
      clearInterval(this.watch);
    }
  }

  /** One look at a time: a slow disk does not pile them up. */
  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      await this.beat();
      await this.lookForCancel();
    } finally {
      this.looking = false;
    }
  }

  private async lookForCancel(): Promise<void> {
    if (TERMINAL.has(this.record.status) || this.abort.signal.aborted) return;
    if (!(await this.options.store.cancelRequested(this.record.taskId).catch(() => false))) return;
    await this.settle('cancelled', {});
  }

  /**
   * Tells the other instances this one still runs the task. If one of them already took it for
   * stopped (this instance was held up too long), their answer stands: the handler is stopped and
   * nothing more is written.
   */
  private async beat(): Promise<void> {
    const { store } = this.options;
    if (store.heartbeatMs === undefined || Date.now() - this.lastBeat < store.heartbeatMs) return;
    if (TERMINAL.has(this.record.status) || this.abort.signal.aborted) return;
    this.lastBeat = Date.now();
    await store.heartbeat(this.record.taskId).catch(() => {});
    const seen = await store.read(this.record.taskId).catch(() => undefined);
    if (seen === undefined || !TERMINAL.has(seen.status) || TERMINAL.has(this.record.status)) return;
    this.record.status = seen.status;
    this.abort.abort();
    clearInterval(this.watch);
  }

  /** A terminal state, once: a handler that ends after a cancel does not undo it. */
  private async settle(status: TaskStatus, outcome: Pick<TaskRecord, 'result' | 'error'>): Promise<void> {
    if (TERMINAL.has(this.record.status)) return;
    delete this.record.inputRequests;
    Object.assign(this.record, outcome);
    this.abort.abort();
    clearInterval(this.watch);
    await this.save(status);
  }

  private save(status: TaskStatus): Promise<void> {
    this.record.status = status;
    this.record.lastUpdatedAt = new Date().toISOString();
    const snapshot = structuredClone(this.record);
    // one write at a time, in order: the last state written is the newest
    this.saving = this.saving.then(() => this.options.store.write(snapshot)).catch(() => {});
    return this.saving;
  }

  /** Parks the task on a question until its answer is recorded (or the task ends). */
  private async ask(kind: string, input: PendingInput, named?: string): Promise<unknown> {
    const key = named ?? `${kind}-${++this.asked}`;
    this.record.inputRequests = { ...this.record.inputRequests, [key]: input };
    await this.save('input_required');
    const { signal } = this.abort;
    for (;;) {
      if (signal.aborted) throw new Error('the task ended before its question was answered');
      const answers = await this.options.store.answers(this.record.taskId);
      if (answers.has(key)) {
        const rest = { ...this.record.inputRequests };
        delete rest[key];
        this.record.inputRequests = rest;
        const pending = Object.keys(rest).filter((other) => !answers.has(other));
        if (!TERMINAL.has(this.record.status)) await this.save(pending.length === 0 ? 'working' : 'input_required');
        return answers.get(key);
      }
      await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
    }
  }
}
