/**
 * The event store of one session: every message sent on one of its SSE streams gets an id, and a
 * client that lost a stream reconnects with `Last-Event-ID` to receive what it missed. Bounded:
 * the oldest events are forgotten first.
 */
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';

export const MAX_STORED_EVENTS = 1000;

interface StoredEvent {
  id: EventId;
  streamId: StreamId;
  message: JSONRPCMessage;
}

export class MemoryEventStore implements EventStore {
  private readonly events: StoredEvent[] = [];
  private sequence = 0;

  constructor(private readonly limit: number = MAX_STORED_EVENTS) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    this.sequence += 1;
    const id = `${this.sequence}_${streamId}`;
    this.events.push({ id, streamId, message });
    if (this.events.length > this.limit) this.events.splice(0, this.events.length - this.limit);
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.events.find((event) => event.id === eventId)?.streamId ?? streamOf(eventId);
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (streamId === undefined) throw new Error(`unknown event id ${lastEventId}`);
    const after = Number(lastEventId.split('_', 1)[0]);
    for (const event of this.events) {
      if (event.streamId !== streamId || Number(event.id.split('_', 1)[0]) <= after) continue;
      // a priming event (stored as {}) only gave the client an id to come back with
      if (Object.keys(event.message).length > 0) await send(event.id, event.message);
    }
    return streamId;
  }
}

/** An id is `<sequence>_<stream id>`: the stream is known even once the event itself is forgotten. */
function streamOf(eventId: EventId): StreamId | undefined {
  const at = eventId.indexOf('_');
  return at > 0 && /^\d+$/.test(eventId.slice(0, at)) ? eventId.slice(at + 1) : undefined;
}
