/**
 * Sessions of the Streamable HTTP transport (protocol revision 2025-11-25), for a definition that
 * keeps them: `initialize` creates one and answers with `Mcp-Session-Id`; later requests carry
 * it; `GET` opens the session's own stream; `DELETE` ends it; each session's event store lets a
 * client resume a lost stream with `Last-Event-ID`. A session idle for too long is closed, and
 * one that never did anything after its `initialize` much sooner (30 s): opening sessions costs an
 * anonymous client one request each. When the table is full, a new `initialize` evicts the oldest
 * such unused session rather than being refused, so a flood of them cannot lock real clients out.
 * An unknown id is answered 404, so the client initialises again (the spec's rule, and what a
 * gateway relies on when the instance that held a session is gone).
 *
 * The SDK's own transport serves each session; this file only finds the session of a request.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { isInitializeRequest, type Server } from '@modelcontextprotocol/server';
import { MemoryEventStore } from './event-store.js';
import { sendJson } from '../../shared/http.js';
import { rejectDraining } from './http-front.js';
import type { RuntimeLogger } from './logger.js';
import type { Connection } from './subscriptions.js';
import type { RequestRecord } from './tracing.js';

export const SESSION_HEADER = 'mcp-session-id';
export const DEFAULT_SESSION_IDLE_MS = 10 * 60_000;
export const DEFAULT_MAX_SESSIONS = 1000;
/** a session that served nothing but its `initialize` (and the `initialized` notification) is closed after this */
export const DEFAULT_UNUSED_SESSION_IDLE_MS = 30_000;
/** what a client is told to wait before it reconnects a stream the server closed */
const RETRY_INTERVAL_MS = 500;

export interface Session extends Connection {
  id: string | undefined;
  server: Server;
  transport: NodeStreamableHTTPServerTransport;
  lastSeen: number;
  /** requests of this session being served now (an open GET stream is one) */
  open: number;
  /** it served a request besides its `initialize` and the `initialized` notification */
  used: boolean;
  /**
   * On a server with auth, the validated identity that opened it ('' for a credential that names
   * nobody): a request of the session with another identity is answered as if it did not exist,
   * so a session id that leaks lets nobody else in.
   */
  owner?: string;
}

export interface SessionStoreOptions {
  /** builds the SDK server of a new session */
  createServer(connection: Connection): Server;
  /** a session is added to (and removed from) the instance's subscribers */
  onOpen(session: Session): void;
  onClose(session: Session): void;
  logger: RuntimeLogger;
  idleMs?: number;
  /** the idle time of a session that was never used (default 30 s) */
  unusedIdleMs?: number;
  maxSessions?: number;
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly idleMs: number;
  private readonly unusedIdleMs: number;

  constructor(private readonly options: SessionStoreOptions) {
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.unusedIdleMs = Math.min(this.idleMs, options.unusedIdleMs ?? DEFAULT_UNUSED_SESSION_IDLE_MS);
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.min(this.unusedIdleMs / 2, 30_000)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Serves a request that belongs to a session (it names one, or it is an `initialize`).
   * Returns false for a request that does not: it is served statelessly.
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    record: RequestRecord | undefined,
    draining: boolean,
  ): Promise<boolean> {
    const header = req.headers[SESSION_HEADER];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined && id !== '') {
      const session = this.sessions.get(id);
      if (session === undefined || (session.owner !== undefined && session.owner !== ownerOf(record))) {
        if (record !== undefined) record.error = 'unknown session';
        sendJson(res, 404, {
          jsonrpc: '2.0',
          error: {
            code: -32001,
            message: 'Session not found: it ended, or the server that held it stopped; initialize a new session',
          },
          id: null,
        });
        return true;
      }
      if (!session.used && usesSession(req.method, body)) session.used = true;
      await this.serveIn(session, req, res, body);
      return true;
    }
    if (req.method === 'POST' && isInitializeMessage(body)) {
      if (draining) {
        rejectDraining(res, record);
        return true;
      }
      if (this.sessions.size >= (this.options.maxSessions ?? DEFAULT_MAX_SESSIONS) && !this.evictUnused()) {
        rejectDraining(res, record, 'Service Unavailable: too many open sessions; try again later');
        return true;
      }
      await this.open(req, res, body, record);
      return true;
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (record !== undefined) record.error = 'no session id';
      sendJson(res, 400, {
        jsonrpc: '2.0',
        error: { code: -32000, message: `Bad Request: ${req.method} needs the Mcp-Session-Id header of a session` },
        id: null,
      });
      return true;
    }
    return false;
  }

  /** Takes over the sessions of a runtime being replaced; they are served by this store from now on. */
  adopt(previous: SessionStore): void {
    for (const [id, session] of previous.sessions) {
      this.sessions.set(id, session);
      session.server.onclose = () => this.forget(session, 'closed');
    }
    previous.sessions.clear();
  }

  /** Ends every session (the instance stops). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((session) => this.end(session)));
  }

  private async open(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    record: RequestRecord | undefined,
  ): Promise<void> {
    const session = {
      subscriptions: new Set<string>(),
      id: undefined,
      lastSeen: Date.now(),
      open: 0,
      used: false,
    } as Omit<Session, 'server' | 'transport'> as Session;
    if (record?.authenticated === true) session.owner = ownerOf(record);
    session.transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new MemoryEventStore(),
      retryInterval: RETRY_INTERVAL_MS,
      onsessioninitialized: (id) => {
        session.id = id;
        this.sessions.set(id, session);
        this.options.onOpen(session);
        this.options.logger.log({ level: 'info', event: 'session_opened', session: id });
      },
    });
    const server = this.options.createServer(session);
    session.server = server;
    server.onclose = () => this.forget(session, 'closed');
    await server.connect(session.transport);
    await this.serveIn(session, req, res, body);
    // an initialize the transport refused leaves nothing behind
    if (session.id === undefined) await this.end(session);
  }

  private async serveIn(session: Session, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    session.open += 1;
    session.lastSeen = Date.now();
    res.once('close', () => {
      session.open -= 1;
      session.lastSeen = Date.now();
    });
    await session.transport.handleRequest(req, res, body);
  }

  private forget(session: Session, why: string): void {
    if (session.id === undefined || this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    this.options.onClose(session);
    this.options.logger.log({ level: 'info', event: 'session_closed', session: session.id, reason: why });
  }

  private async end(session: Session): Promise<void> {
    this.options.onClose(session);
    await session.server.close().catch(() => {});
  }

  /** Closes the unused session seen least recently (none serving a request); false when there is none. */
  private evictUnused(): boolean {
    let oldest: Session | undefined;
    for (const session of this.sessions.values()) {
      if (session.used || session.open > 0) continue;
      if (oldest === undefined || session.lastSeen < oldest.lastSeen) oldest = session;
    }
    if (oldest === undefined) return false;
    this.forget(oldest, 'evicted');
    void this.end(oldest);
    return true;
  }

  private sweep(): void {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      if (session.open > 0 || now - session.lastSeen < (session.used ? this.idleMs : this.unusedIdleMs)) continue;
      this.forget(session, 'idle');
      void this.end(session);
    }
  }
}

/** Whether a request of a session does something: anything but the `initialized` notification. */
function usesSession(method: string | undefined, body: unknown): boolean {
  if (method !== 'POST') return true;
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((message) => (message as { method?: unknown } | null)?.method !== 'notifications/initialized');
}

function isInitializeMessage(body: unknown): boolean {
  return Array.isArray(body) ? body.some((message) => isInitializeRequest(message)) : isInitializeRequest(body);
}

/** The identity a request of a server with auth was admitted as ('' when its credential names nobody). */
function ownerOf(record: RequestRecord | undefined): string {
  return record?.userId ?? '';
}
