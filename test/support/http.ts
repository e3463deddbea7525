/**
 * Loopback HTTP for tests: a server on 127.0.0.1 with a port chosen by the system, and its
 * closing (open connections included, so a test never waits for a keep-alive to time out).
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';

/** Listens with `server` (or a new one around `handler`) on 127.0.0.1:0 and returns its base URL. */
export async function listen(
  handlerOrServer: Server | ((req: IncomingMessage, res: ServerResponse) => void),
): Promise<{ server: Server; url: string }> {
  const server = typeof handlerOrServer === 'function' ? createServer(handlerOrServer) : handlerOrServer;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A Unix socket file at `path` that nothing listens on: what a killed process leaves. */
export async function staleSocket(path: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
}
