/**
 * The long-lived connections of one instance (sessions, a stdio connection) and the resources
 * each one subscribed to. A `file` resource someone subscribed to is watched on disk; when it
 * changes, or a module says so, its subscribers get `notifications/resources/updated`. After a
 * reload (`mcpctl dev`), the new runtime takes the connections over and tells them the lists
 * changed.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Server } from '@modelcontextprotocol/server';

/** One client connection that outlives a request. */
export interface Connection {
  readonly subscriptions: Set<string>;
  server?: Server;
}

const WATCH_DEBOUNCE_MS = 50;

export class Subscribers {
  private readonly connections = new Set<Connection>();
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /**
   * @param fileOf the real path of the file behind a resource URI, when it is a plain `file` resource
   */
  constructor(private readonly fileOf: (uri: string) => string | undefined) {}

  get size(): number {
    return this.connections.size;
  }

  add(connection: Connection): void {
    this.connections.add(connection);
  }

  delete(connection: Connection): void {
    this.connections.delete(connection);
    for (const uri of connection.subscriptions) this.unwatchIfUnused(uri);
  }

  subscribe(connection: Connection, uri: string): void {
    connection.subscriptions.add(uri);
    this.watch(uri);
  }

  unsubscribe(connection: Connection, uri: string): void {
    connection.subscriptions.delete(uri);
    this.unwatchIfUnused(uri);
  }

  /** the `subscriptions/listen` streams of 2026-07-28 clients (listen-streams.ts): they hear every update */
  listenStreams: ((uri: string) => void) | undefined;

  /** tells every subscriber of the URI that it changed */
  async updated(uri: string): Promise<void> {
    this.listenStreams?.(uri);
    const sends: Array<Promise<void>> = [];
    for (const connection of this.connections) {
      if (connection.subscriptions.has(uri) && connection.server !== undefined)
        sends.push(connection.server.sendResourceUpdated({ uri }).catch(() => {}));
    }
    await Promise.all(sends);
  }

  /**
   * Takes over the connections of a runtime being replaced: they now read from this one, hear
   * that every list may have changed, and that each resource they watch may have changed too.
   */
  adopt(previous: Subscribers): Connection[] {
    const moved = [...previous.connections];
    previous.connections.clear();
    previous.close();
    for (const connection of moved) {
      this.connections.add(connection);
      for (const uri of connection.subscriptions) this.watch(uri);
    }
    for (const connection of moved) {
      const server = connection.server;
      if (server === undefined) continue;
      // notifications only: a client that did not ask for them is not bothered
      for (const send of [
        () => server.sendToolListChanged(),
        () => server.sendResourceListChanged(),
        () => server.sendPromptListChanged(),
      ]) {
        void Promise.resolve()
          .then(send)
          .catch(() => {});
      }
      for (const uri of connection.subscriptions) void server.sendResourceUpdated({ uri }).catch(() => {});
    }
    return moved;
  }

  close(): void {
    for (const watcher of this.watchers.values()) watcher.close();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.watchers.clear();
    this.timers.clear();
  }

  private watch(uri: string): void {
    if (this.watchers.has(uri)) return;
    const file = this.fileOf(uri);
    if (file === undefined) return;
    // the folder, not the file: editors replace a file by renaming a new one over it
    let watcher: FSWatcher;
    try {
      watcher = watch(dirname(file), (_event, name) => {
        if (name !== null && join(dirname(file), name.toString()) !== join(dirname(file), basename(file))) return;
        clearTimeout(this.timers.get(uri));
        this.timers.set(
          uri,
          setTimeout(() => {
            this.timers.delete(uri);
            void this.updated(uri);
          }, WATCH_DEBOUNCE_MS),
        );
      });
    } catch {
      return;
    }
    watcher.on('error', () => watcher.close());
    watcher.unref();
    this.watchers.set(uri, watcher);
  }

  private unwatchIfUnused(uri: string): void {
    for (const connection of this.connections) if (connection.subscriptions.has(uri)) return;
    this.watchers.get(uri)?.close();
    this.watchers.delete(uri);
  }
}
