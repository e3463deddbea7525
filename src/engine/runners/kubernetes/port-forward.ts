/**
 * A loopback port per pod, each connection to it carried through the API server to the pod's
 * container port (what `kubectl port-forward pod/P` does): the engine's gateway then reaches a pod
 * from any machine whose kubeconfig reaches the cluster, without the cluster's network. One
 * WebSocket per connection; a pod that is gone makes the connection close, and the gateway's own
 * health checks and retries take it from there.
 */
import { createServer, type Server, type Socket } from 'node:net';

export interface PortForwards {
  /** the loopback port of a pod, once it listens */
  port(pod: string): number | undefined;
  /** listens for each pod of the list that has no port yet, and stops those no longer in it */
  sync(pods: string[]): Promise<void>;
  close(): Promise<void>;
}

export function createPortForwards(
  forward: (pod: string, socket: Socket) => Promise<void>,
  onError: (pod: string, error: Error) => void,
): PortForwards {
  const servers = new Map<string, { server: Server; port: number; sockets: Set<Socket> }>();

  async function listen(pod: string): Promise<void> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      forward(pod, socket).catch((error: unknown) => {
        onError(pod, error as Error);
        socket.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no loopback port');
    servers.set(pod, { server, port: address.port, sockets });
  }

  function stop(pod: string): Promise<void> {
    const entry = servers.get(pod);
    servers.delete(pod);
    if (entry === undefined) return Promise.resolve();
    const closed = new Promise<void>((resolve) => entry.server.close(() => resolve()));
    // the pod is gone: its open connections go too, or close() would wait for them
    for (const socket of entry.sockets) socket.destroy();
    return closed;
  }

  return {
    port: (pod) => servers.get(pod)?.port,
    async sync(pods) {
      const wanted = new Set(pods);
      for (const pod of [...servers.keys()]) if (!wanted.has(pod)) await stop(pod);
      for (const pod of pods) if (!servers.has(pod)) await listen(pod);
    },
    async close() {
      await Promise.all([...servers.keys()].map(stop));
    },
  };
}
