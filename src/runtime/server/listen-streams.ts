/**
 * The `subscriptions/listen` streams of clients of the 2026-07-28 revision, which the MCP SDK's
 * handler serves (it acknowledges each stream, filters the events by what the stream asked for
 * and stamps them). What this runtime adds is the events: a resource update a module reports, or
 * a change of a watched `file` resource, reaches the streams as it reaches the subscribers of
 * 2025 sessions. The SDK does not say which resources a stream asked for, so while one is open
 * every plain `file` resource of the definition is watched. The streams of one process hear its
 * own events: another instance of a deployment has its own.
 */
import { InMemoryServerEventBus, type ServerEventBus } from '@modelcontextprotocol/server';
import type { Connection, Subscribers } from './subscriptions.js';

export interface ListenSource {
  /** the subscribers of the runtime serving now */
  subscribers(): Subscribers;
  /** the URIs of the resources whose file can be watched */
  watchable(): string[];
}

/** The event bus to give the SDK's handler; its streams hear every resource update of `source`. */
export function createListenBus(source: ListenSource): ServerEventBus {
  const bus = new InMemoryServerEventBus();
  // stands for every open stream among the subscribers: it has no server of its own to send to
  const streams: Connection = { subscriptions: new Set() };
  let open = 0;
  const watch = () => {
    const subscribers = source.subscribers();
    subscribers.add(streams);
    for (const uri of source.watchable()) subscribers.subscribe(streams, uri);
  };
  const unwatch = () => {
    const subscribers = source.subscribers();
    for (const uri of [...streams.subscriptions]) subscribers.unsubscribe(streams, uri);
    subscribers.delete(streams);
  };
  return {
    publish: (event) => bus.publish(event),
    subscribe(listener) {
      const unsubscribe = bus.subscribe(listener);
      if (++open === 1) watch();
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        unsubscribe();
        if (--open === 0) unwatch();
      };
    },
  };
}
