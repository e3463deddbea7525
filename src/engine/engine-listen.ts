/**
 * The engine's listeners: plain HTTP on its address, and HTTPS beside it when it has certificates.
 * They listen before the engine's services are made (deployment URLs need the port) and answer
 * 503 until the app is ready.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { EngineLimits } from './engine-limits.js';
import { EngineConfigError } from './engine-errors.js';
import type { Logger } from './engine-log.js';
import { createEngineServer, engineServerOptions, wireEngineServer } from './http/engine-server.js';
import { urlHost, withHsts } from './http/exposure.js';
import type { TlsListener } from './http/tls.js';
import type { TlsOptions } from './http/tls-settings.js';

/** Raised when the port cannot be bound. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => unknown;

export interface EngineTls {
  url: string;
  host: string;
  port: number;
  listener: TlsListener;
}

export interface Listeners {
  server: Server;
  port: number;
  tls: EngineTls | undefined;
}

export interface ListenOptions {
  host: string;
  port: number;
  anyPortIfTaken?: boolean;
}

type PreparedTls = Awaited<ReturnType<typeof loadTls>>;

/**
 * The HTTP server (and the HTTPS one) listening, each request answered by `current()`, which is
 * read at every request: the engine swaps the starting answer for its app once that is ready.
 */
export async function listenAll(
  options: ListenOptions,
  tlsConfig: PreparedTls,
  limits: EngineLimits,
  current: () => Handler,
  logger: Logger,
): Promise<Listeners> {
  const server = createEngineServer((req, res) => current()(req, res), limits);
  try {
    const port = await listen(server, options.port, options.host).catch(async (error: unknown) => {
      if (options.anyPortIfTaken === true && options.port !== 0 && (error as ListenError).code === 'EADDRINUSE') {
        logger.info('the previous port is taken; using another', { port: options.port });
        return listen(server, 0, options.host);
      }
      throw error;
    });
    const tls = tlsConfig === undefined ? undefined : await listenTls(options, tlsConfig, limits, current, logger);
    return { server, port, tls };
  } catch (error) {
    server.close();
    throw error;
  }
}

async function listenTls(
  options: ListenOptions,
  tlsConfig: NonNullable<PreparedTls>,
  limits: EngineLimits,
  current: () => Handler,
  logger: Logger,
): Promise<EngineTls> {
  const listener = tlsConfig.create({
    serverOptions: engineServerOptions(limits),
    handler: withHsts((req, res) => void current()(req, res)),
    logger,
  });
  wireEngineServer(listener.server);
  // HTTPS may face the network on its own address while plain HTTP stays on loopback
  const tlsHost = tlsConfig.settings.host ?? options.host;
  const tlsPort = await listen(listener.server, tlsConfig.settings.port, tlsHost).catch((error: unknown) => {
    listener.close();
    throw error;
  });
  return { url: `https://${urlHost(tlsHost)}:${tlsPort}`, host: tlsHost, port: tlsPort, listener };
}

/** Every request while the engine is starting: 503, retry in a moment. */
export function answerStarting(_req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify({
    success: false,
    data: null,
    meta: { request_id: 'req_starting', timestamp: new Date().toISOString() },
    error: { code: 'unavailable', message: 'the engine is starting; retry in a moment' },
  });
  res.writeHead(503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Retry-After': '1',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function listen(server: NetServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      const reason = error.code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use` : error.message;
      reject(new ListenError(reason, error.code));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

export function closeServer(server: Server | TlsListener['server']): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  return closed;
}

/** The engine's certificates (none: HTTP only), checked; a problem is an EngineConfigError naming the file. */
export async function loadTls(
  options: { tls?: TlsOptions; env: Record<string, string | undefined> },
  paths: { home: string; settingsFile: string },
) {
  const { tlsSettings, mayServeHttps, TlsConfigError } = await import('./http/tls-settings.js');
  try {
    const settings = await tlsSettings({ options: options.tls, env: options.env, ...paths });
    // node:https and node:tls load only when there may be certificates
    return (await mayServeHttps(settings)) ? await (await import('./http/tls.js')).prepareTls(settings) : undefined;
  } catch (error) {
    throw error instanceof TlsConfigError ? new EngineConfigError(`HTTPS cannot start: ${error.message}`) : error;
  }
}
