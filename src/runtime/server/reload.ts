/**
 * The reload stage of a runtime: a newer runtime (the definition compiled again) replaces an
 * older one without dropping anyone. Open sessions and stdio connections move to the newer one,
 * and the servers the older one built for them read from the newer one's operations from then on.
 */
import type { Operations } from './mcp-server.js';
import type { Runtime } from './runtime-types.js';
import type { SessionStore } from './sessions.js';

/** What a runtime hands over to the one that replaces it. */
export interface Succession {
  ops: Operations;
  store: SessionStore | undefined;
  /** the operations to serve a connection from: this runtime's until a newer one succeeds it */
  current(): Operations;
  /** from now on, connections of this runtime are served by `next` */
  succeed(next: Runtime): void;
}

const successionOf = new WeakMap<Runtime, Succession>();

export function createSuccession(ops: Operations, store: SessionStore | undefined): Succession {
  let successor: Runtime | undefined;
  return {
    ops,
    store,
    current: () => (successor === undefined ? ops : (operationsOf(successor) ?? ops)),
    succeed: (next) => (successor = next),
  };
}

export function registerSuccession(runtime: Runtime, succession: Succession): void {
  successionOf.set(runtime, succession);
}

/** The operations a runtime serves from, when it is one this module knows. */
export function operationsOf(runtime: Runtime): Operations | undefined {
  return successionOf.get(runtime)?.ops;
}

/** The runtime `next` replaces `previous`: open sessions and connections move over, and hear the lists changed. */
export function adopt(next: Runtime, previous: Runtime): void {
  const from = successionOf.get(previous);
  const to = successionOf.get(next);
  if (from === undefined || to === undefined) return;
  if (from.store !== undefined && to.store !== undefined) to.store.adopt(from.store);
  to.ops.subscribers.adopt(from.ops.subscribers);
  // the servers of those connections were built by the old runtime: they now read from the new one
  from.succeed(next);
}
