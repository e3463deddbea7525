/**
 * A small client of the Docker Engine API over its socket (undici, no `docker` binary): the calls
 * the image builder and the Docker runner make, JSON in and out, streams where Docker streams
 * (build and push progress, container logs). DOCKER_HOST picks the daemon as the docker CLI does
 * (docker-host.ts: `unix:///…`, or `tcp://host:port` with TLS); the default is /var/run/docker.sock.
 *
 * Why not dockerode: its current major pulls gRPC, protobuf and ssh2 (a native build at install time)
 * for what is here a handful of HTTP calls; undici is already a dependency.
 */
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { dockerTarget, DockerUnavailableError, readTlsFiles } from './docker-host.js';

export { DEFAULT_DOCKER_SOCKET, dockerTarget, DockerUnavailableError } from './docker-host.js';

/** The daemon answered with an error status. */
export class DockerApiError extends Error {
  override readonly name = 'DockerApiError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface DockerRequest {
  query?: Record<string, string | number | boolean | undefined>;
  /** a JSON body, or a stream sent as it is (a tar archive) */
  json?: unknown;
  stream?: Readable;
  headers?: Record<string, string>;
  /** for long answers (wait, logs): no body time-out */
  long?: boolean;
}

export interface DockerClient {
  /** where it talks to, for messages: `unix:///var/run/docker.sock` */
  readonly address: string;
  /** the parsed JSON answer (undefined when there is none); DockerApiError on a status >= 400 */
  json<T = unknown>(method: string, path: string, request?: DockerRequest): Promise<T>;
  /** the answer's body as a stream; DockerApiError on a status >= 400 */
  stream(method: string, path: string, request?: DockerRequest): Promise<Readable>;
  /** ends every connection, cutting what still streams */
  close(): Promise<void>;
}

export function createDockerClient(env: Record<string, string | undefined> = process.env): DockerClient {
  const target = dockerTarget(env);
  const address = 'socketPath' in target ? `unix://${target.socketPath}` : target.origin;
  // a pool: waits and followed logs hold their connection for as long as the container runs
  const client =
    'socketPath' in target
      ? new Pool('http://docker', { socketPath: target.socketPath, bodyTimeout: 0 })
      : new Pool(target.origin, { bodyTimeout: 0, connect: { ...readTlsFiles(target.tls), rejectUnauthorized: true } });

  async function send(method: string, path: string, request: DockerRequest = {}) {
    let response;
    try {
      response = await client.request({
        method,
        ...requestParts(path, request),
        headersTimeout: request.long === true ? 0 : 300_000,
      });
    } catch (error) {
      throw unreachable(error, address);
    }
    if (response.statusCode >= 400) throw await apiError(method, path, response);
    return response;
  }

  return {
    address,
    async json<T>(method: string, path: string, request?: DockerRequest): Promise<T> {
      const response = await send(method, path, request);
      const text = await response.body.text();
      if (text.trim() === '') return undefined as T;
      // a few answers are text (/_ping: OK)
      return (String(response.headers['content-type']).includes('json') ? JSON.parse(text) : text) as T;
    },
    async stream(method: string, path: string, request?: DockerRequest): Promise<Readable> {
      return (await send(method, path, request)).body;
    },
    // what still streams (the logs and waits of containers already stopped) is cut, not awaited
    // closing twice (or while it closes) is not an error of the engine's stop
    close: () => (client.destroyed ? Promise.resolve() : client.destroy().catch(() => undefined)),
  };
}

/** The path with its query, the headers and the body of a request. */
function requestParts(path: string, request: DockerRequest) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(request.query ?? {}))
    if (value !== undefined) query.set(key, String(value));
  const search = query.size > 0 ? `?${query.toString()}` : '';
  const headers: Record<string, string> = { ...request.headers };
  let body: string | Readable | undefined;
  if (request.json !== undefined) {
    body = JSON.stringify(request.json);
    headers['content-type'] = 'application/json';
  } else if (request.stream !== undefined) {
    body = request.stream;
    headers['content-type'] ??= 'application/x-tar';
  }
  return { path: `${path}${search}`, headers, body };
}

/** A failed connection as DockerUnavailableError when the daemon is not there; any other error as it is. */
function unreachable(error: unknown, address: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (
    code === 'ENOENT' ||
    code === 'ECONNREFUSED' ||
    code === 'EACCES' ||
    code === 'ENOTFOUND' ||
    code === 'UND_ERR_SOCKET' ||
    isTlsFailure(code)
  ) {
    return new DockerUnavailableError(
      `cannot reach the Docker daemon at ${address} (${code}): start Docker, or point DOCKER_HOST at it`,
    );
  }
  return error;
}

/** An error status as DockerApiError, with the daemon's message when it sent one. */
async function apiError(
  method: string,
  path: string,
  response: { statusCode: number; body: { text(): Promise<string> } },
): Promise<DockerApiError> {
  const text = await response.body.text().catch(() => '');
  let message = text.trim();
  try {
    const given = (JSON.parse(text) as { message?: unknown }).message;
    if (typeof given === 'string') message = given;
  } catch {
    // not JSON: the text as it is
  }
  return new DockerApiError(
    `Docker ${method} ${path}: ${message || `status ${response.statusCode}`}`,
    response.statusCode,
  );
}

/** The daemon's certificate was refused (not signed by ca.pem, another name) or the handshake failed. */
function isTlsFailure(code: string | undefined): boolean {
  return (
    code !== undefined &&
    (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.includes('CERT') || code === 'EPROTO')
  );
}

/**
 * Reads a progress stream (build, push, import: one JSON object per line) to its end. Resolves
 * with the text it printed; rejects with the first `error` it reports.
 */
export async function readProgress(stream: Readable, onLine?: (text: string) => void): Promise<string[]> {
  const lines: string[] = [];
  let rest = '';
  let failure: string | undefined;
  const handle = (raw: string) => {
    if (raw.trim() === '') return;
    let item: { stream?: unknown; status?: unknown; error?: unknown; errorDetail?: { message?: unknown } };
    try {
      item = JSON.parse(raw) as typeof item;
    } catch {
      return;
    }
    if (item.error !== undefined)
      failure ??= typeof item.errorDetail?.message === 'string' ? item.errorDetail.message : JSON.stringify(item.error);
    const text =
      typeof item.stream === 'string'
        ? item.stream.trimEnd()
        : typeof item.status === 'string'
          ? item.status
          : undefined;
    if (text !== undefined && text !== '') {
      lines.push(text);
      onLine?.(text);
    }
  };
  for await (const chunk of stream) {
    rest += String(chunk);
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) handle(part);
  }
  handle(rest);
  if (failure !== undefined) throw new DockerApiError(failure.trim(), 500);
  return lines;
}

/**
 * Splits the multiplexed log stream of a container without a TTY (8-byte frame headers: the
 * stream, then the length) into lines, each with where it came from.
 */
export async function readLogLines(
  stream: Readable,
  onLine: (line: string, from: 'stdout' | 'stderr') => void,
): Promise<void> {
  let buffer = Buffer.alloc(0);
  const partial: Record<'stdout' | 'stderr', string> = { stdout: '', stderr: '' };
  const emit = (from: 'stdout' | 'stderr', text: string) => {
    const parts = (partial[from] + text).split('\n');
    partial[from] = parts.pop() ?? '';
    for (const part of parts) onLine(part.replace(/\r$/, ''), from);
  };
  for await (const chunk of stream) {
    buffer = Buffer.concat([buffer, chunk as Buffer]);
    while (buffer.length >= 8) {
      const size = buffer.readUInt32BE(4);
      if (buffer.length < 8 + size) break;
      emit(buffer[0] === 2 ? 'stderr' : 'stdout', buffer.subarray(8, 8 + size).toString('utf8'));
      buffer = buffer.subarray(8 + size);
    }
  }
  for (const from of ['stdout', 'stderr'] as const) if (partial[from] !== '') onLine(partial[from], from);
}
