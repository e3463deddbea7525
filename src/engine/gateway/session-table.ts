/**
 * Which instance holds which MCP session (Streamable HTTP's Mcp-Session-Id), so the gateway sends
 * every request of a session to the process that holds its state. A session lives as long as the
 * process it was opened on: when that instance stops or restarts, the session is gone (the client
 * is told so, and initializes a new one).
 *
 * Each session also remembers the client address that opened it, so the gateway can cap the
 * sessions one address holds; a session that never did anything after its `initialize` counts
 * only for a short while (as on the instance, src/runtime/server/sessions.ts).
 */
import type { Backend } from './upstream.js';

interface Held {
  instance: Backend;
  /** the instance's process at the time: a restarted one no longer holds it */
  generation: number;
  lastUsed: number;
  /** the source address (src/engine/http/failure-limit.ts sourceKey) that opened it */
  client: string;
  /** it carried a request besides its `initialize` and the `initialized` notification */
  used: boolean;
  /** the MCP client its `initialize` named (clientInfo), for usage figures */
  clientInfo?: { name: string; version?: string } | undefined;
}

/** How long a session that never did anything counts (the instance closes it then too). */
export const UNUSED_SESSION_MS = 30_000;

export class Sessions {
  private readonly byId = new Map<string, Held>();
  private lastPrune = 0;

  get size(): number {
    return this.byId.size;
  }

  /** The instance answered a request with this new session id. */
  open(
    id: string,
    instance: Backend,
    now: number,
    idleMs: number,
    client = '',
    clientInfo?: { name: string; version?: string },
  ): void {
    this.byId.set(id, { instance, generation: instance.generation, lastUsed: now, client, used: false, clientInfo });
    // Sessions a client never ended are forgotten after a while (the instance ends them too).
    if (now - this.lastPrune >= Math.min(idleMs, 60_000)) {
      this.lastPrune = now;
      for (const [key, held] of this.byId) if (expired(held, now, idleMs) || !holds(held)) this.byId.delete(key);
    }
  }

  close(id: string): void {
    this.byId.delete(id);
  }

  /** The MCP client that opened the session, when its `initialize` named one. */
  clientInfo(id: string): { name: string; version?: string } | undefined {
    return this.byId.get(id)?.clientInfo;
  }

  /**
   * The instance that holds the session; 'gone' when it stopped or restarted; undefined when the
   * session is not known here. `uses`: the request does something (not only the `initialized` notification).
   */
  lookup(id: string, now: number, uses = true): Backend | 'gone' | undefined {
    const held = this.byId.get(id);
    if (held === undefined) return undefined;
    if (!holds(held)) {
      this.byId.delete(id);
      return 'gone';
    }
    held.lastUsed = now;
    if (uses) held.used = true;
    return held.instance;
  }

  /** How many live sessions `client` holds (unused ones for UNUSED_SESSION_MS only). */
  heldByClient(client: string, now: number, idleMs: number): number {
    let count = 0;
    for (const held of this.byId.values())
      if (held.client === client && holds(held) && !expired(held, now, idleMs)) count += 1;
    return count;
  }

  /** How many live sessions `instance` holds. */
  heldBy(instance: Backend): number {
    let count = 0;
    for (const held of this.byId.values()) if (held.instance === instance && holds(held)) count += 1;
    return count;
  }
}

function expired(held: Held, now: number, idleMs: number): boolean {
  return now - held.lastUsed > (held.used ? idleMs : Math.min(idleMs, UNUSED_SESSION_MS));
}

function holds(held: Held): boolean {
  return held.instance.reachable && held.instance.generation === held.generation;
}
