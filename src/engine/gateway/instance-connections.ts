/**
 * The gateway's connections to instances: a pool of kept-alive connections per instance address,
 * one request at a time on each. undici's dispatch costs the engine less CPU per proxied request
 * than node:http's client (no ClientRequest and IncomingMessage streams per request, see
 * docs/engine.md for the figures). An instance that also listens on a Unix socket (the process
 * runner's) is reached over it: the pool of its address connects to the socket instead.
 */
import type { Socket } from 'node:net';
import { buildConnector, Pool, type Dispatcher } from 'undici';

/**
 * An idle connection is dropped long before the instance drops it (serve-bundle's keep-alive
 * time-out is 65 s): reusing one the instance is closing at that moment fails the request sent on
 * it. undici's idle timers count ticks of its own clock, which fall behind real time while the
 * engine is busy, so 4 s here can be well over 5 s of real time.
 */
const IDLE_MS = 4_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** per instance, as node:http's Agent had */
const CONNECTIONS = 256;

/** Errors of connections that had already carried an answer (see reusedConnection). */
const REUSED = new WeakSet<object>();

interface Entry {
  pool: Pool;
  socketPath: string | undefined;
  /** connections open now */
  open: number;
}

/**
 * One pool per instance address (its origin, `http://127.0.0.1:<port>`, which also makes the Host
 * header the instance expects). A request names the instance's socket, when it has one: a pool made
 * for another socket, or for none, is closed and replaced, so an address used again by a later
 * instance never reaches an earlier one's socket. A pool whose connections have all closed is let go.
 */
export class InstanceConnections {
  private readonly pools = new Map<string, Entry>();

  /** Sends a request to `options.origin`, over `socketPath` when it is given. */
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, socketPath?: string): boolean {
    const origin = String(options.origin);
    let entry = this.pools.get(origin);
    if (entry !== undefined && entry.socketPath !== socketPath) {
      this.pools.delete(origin);
      void entry.pool.close().catch(() => {});
      entry = undefined;
    }
    entry ??= this.open(origin, socketPath);
    return entry.pool.dispatch(options, handler);
  }

  /** Cuts every connection (the engine stops its instances). */
  async destroy(): Promise<void> {
    const entries = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(entries.map((entry) => entry.pool.destroy()));
  }

  private open(origin: string, socketPath: string | undefined): Entry {
    // the socket is the connector's: undici does not hand a pool's socketPath to a connect function
    const connect = buildConnector({
      timeout: CONNECT_TIMEOUT_MS,
      ...(socketPath === undefined ? {} : { socketPath }),
    });
    const pool = new Pool(origin, {
      connections: CONNECTIONS,
      pipelining: 1,
      keepAliveTimeout: IDLE_MS,
      // the instance's own Keep-Alive hint (timeout=65) may shorten it, never lengthen it
      keepAliveMaxTimeout: IDLE_MS,
      keepAliveTimeoutThreshold: 1_000,
      // no time limit on an answer: a tool may take long, an event stream may stay quiet for long
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: (connectOptions, callback) =>
        connect(connectOptions, (error, socket) => {
          // Marked before undici sees the error: a connection that has read anything before its
          // request failed had carried an earlier answer, i.e. it was a kept-alive one reused.
          if (error !== null && error !== undefined) return callback(error, null);
          socket.prependListener('error', (failure: Error) => markIfReused(socket, failure));
          callback(null, socket);
        }),
    });
    const entry: Entry = { pool, socketPath, open: 0 };
    // like undici's Agent: an address whose connections have all closed (its instance stopped) holds nothing
    const letGo = () => {
      if (entry.open > 0 || this.pools.get(origin) !== entry) return;
      this.pools.delete(origin);
      void pool.close().catch(() => {});
    };
    pool.on('connect', () => (entry.open += 1));
    pool.on('disconnect', () => {
      entry.open -= 1;
      letGo();
    });
    pool.on('connectionError', letGo);
    this.pools.set(origin, entry);
    return entry;
  }
}

export function createInstanceConnections(): InstanceConnections {
  return new InstanceConnections();
}

function markIfReused(socket: Socket, error: Error): void {
  if (socket.bytesRead > 0) REUSED.add(error);
}

/**
 * Whether the connection a request failed on (before any answer to it) had been used before: the
 * instance may have closed it as idle just as the request was sent, so the request went nowhere.
 */
export function reusedConnection(error: Error): boolean {
  if (REUSED.has(error)) return true;
  // undici's own socket errors ('other side closed') carry the socket's counters
  const read = (error as { socket?: { bytesRead?: number } }).socket?.bytesRead;
  return read !== undefined && read > 0;
}

/** undici's codes of a connection that broke: reset, closed by the other side, or written after it closed. */
export const BROKEN_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/** undici's codes of a request it refused to send (a header it does not allow): nothing reached an instance. */
export const NOT_SENDABLE = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

/** The origin undici keys its pools by; an IPv6 address (a Swarm node's) in brackets. */
export function originOf(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}
