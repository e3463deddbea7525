/**
 * Which instance holds which MCP session (Streamable HTTP's Mcp-Session-Id), so the gateway sends
 * every request of a session to the process that holds its state. A session lives as long as the
 * process it was opened on: when that instance stops or restarts, the session is gone (the client
 * is told so, and initializes a new one).
 */
import type { Backend } from './upstream.js';

interface Held {
  instance: Backend;
  /** the instance's process at the time: a restarted one no longer holds it */
  generation: number;
  lastUsed: number;
}

export class Sessions {
  private readonly byId = new Map<string, Held>();
  private lastPrune = 0;

  get size(): number {
    return this.byId.size;
  }

  /** The instance answered a request with this new session id. */
  open(id: string, instance: Backend, now: number, idleMs: number): void {
    this.byId.set(id, { instance, generation: instance.generation, lastUsed: now });
    // Sessions a client never ended are forgotten after a while (the instance ends them too).
    if (now - this.lastPrune >= Math.min(idleMs, 60_000)) {
      this.lastPrune = now;
      for (const [key, held] of this.byId) if (now - held.lastUsed > idleMs || !holds(held)) this.byId.delete(key);
    }
  }

  close(id: string): void {
    this.byId.delete(id);
  }

  /** The instance that holds the session; 'gone' when it stopped or restarted; undefined when the session is not known here. */
  lookup(id: string, now: number): Backend | 'gone' | undefined {
    const held = this.byId.get(id);
    if (held === undefined) return undefined;
    if (!holds(held)) {
      this.byId.delete(id);
      return 'gone';
    }
    held.lastUsed = now;
    return held.instance;
  }

  /** How many live sessions `instance` holds. */
  heldBy(instance: Backend): number {
    let count = 0;
    for (const held of this.byId.values()) if (held.instance === instance && holds(held)) count += 1;
    return count;
  }
}

function holds(held: Held): boolean {
  return held.instance.reachable && held.instance.generation === held.generation;
}
