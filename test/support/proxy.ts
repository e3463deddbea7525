/**
 * A loopback proxy in front of a real `/v1` service (the engine a test started): it records every
 * request (and the status and headers of its answer), and injects, for the requests a test names,
 * the faults a real engine never produces on demand: an error status (429 with Retry-After, 5xx…),
 * a dropped connection, a slow or a late answer, a body that breaks the contract, or a request
 * held until the test lets it go. Everything else is forwarded as it is, streams included.
 */
import { randomBytes } from 'node:crypto';
import {
  Agent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { ErrorDetail } from '../../src/api/contract.js';
import { closeServer, listen } from './http.js';

export type Fault =
  /** answers this status with an error envelope */
  | { type: 'status'; status: number; code?: string; message?: string; details?: ErrorDetail[]; retryAfter?: string }
  /** reads the request, then destroys the socket without answering */
  | { type: 'drop' }
  /** waits, then forwards */
  | { type: 'slow'; ms: number }
  /** forwards at once (the work is done), and sends the answer back only after a while */
  | { type: 'late'; ms: number }
  /** forwards once `until` settles: a request that reaches the service at a moment the test picks */
  | { type: 'hold'; until: Promise<unknown> }
  /** forwards without these request headers: a service that ignores them */
  | { type: 'ignore'; headers?: string[]; query?: string[] }
  /** answers this exact body (to break the contract, or to answer as another service would) */
  | { type: 'raw'; status: number; body: string; contentType?: string };

export interface Injection {
  method?: string;
  /** a path prefix or a pattern of the path (without the query); any path when absent */
  path?: string | RegExp;
  /** a further condition on the request */
  when?: (request: RecordedRequest) => boolean;
  /** how many requests it applies to; every one when absent */
  times?: number;
  fault: Fault;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** the answer's status and headers, once they came back */
  response?: { status: number; headers: IncomingHttpHeaders };
}

export interface Proxy {
  url: string;
  requests: RecordedRequest[];
  /** requests to a path (exact string, or pattern), optionally of one method */
  requestsTo(path: string | RegExp, method?: string): RecordedRequest[];
  inject(injection: Injection): void;
  close(): Promise<void>;
}

function envelopeError(fault: Extract<Fault, { type: 'status' }>): { body: string; headers: Record<string, string> } {
  const requestId = `req_${randomBytes(6).toString('hex')}`;
  const error = {
    code: fault.code ?? 'internal',
    message: fault.message ?? `injected ${fault.status}`,
    ...(fault.details === undefined ? {} : { details: fault.details }),
  };
  return {
    body: JSON.stringify({
      success: false,
      data: null,
      error,
      meta: { request_id: requestId, timestamp: new Date().toISOString() },
    }),
    headers: {
      'content-type': 'application/json',
      'x-request-id': requestId,
      ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }),
    },
  };
}

/** A success envelope around `data`, for a `raw` answer that stands for another service's. */
export function envelope(data: unknown): string {
  return JSON.stringify({
    success: true,
    data,
    meta: { request_id: `req_${randomBytes(6).toString('hex')}`, timestamp: new Date().toISOString() },
  });
}

export async function startProxy(target: string): Promise<Proxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: false });
  const requests: RecordedRequest[] = [];
  const injections: Injection[] = [];

  const take = (request: RecordedRequest): Fault | undefined => {
    for (const injection of injections) {
      if (injection.method !== undefined && injection.method !== request.method) continue;
      const { path } = injection;
      if (path !== undefined && !(typeof path === 'string' ? request.path.startsWith(path) : path.test(request.path)))
        continue;
      if (injection.when !== undefined && !injection.when(request)) continue;
      if (injection.times !== undefined) {
        if (injection.times <= 0) continue;
        injection.times -= 1;
      }
      return injection.fault;
    }
    return undefined;
  };

  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    recorded: RecordedRequest,
    body: Buffer,
    fault: Fault | undefined,
  ) => {
    const url = new URL(req.url ?? '/', upstream);
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host };
    if (fault?.type === 'ignore') {
      for (const name of fault.headers ?? []) delete headers[name];
      for (const name of fault.query ?? []) url.searchParams.delete(name);
    }
    const out = httpRequest(url, { method: req.method, headers, agent }, (answer) => {
      recorded.response = { status: answer.statusCode ?? 0, headers: answer.headers };
      if (fault?.type === 'late') {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const timer = setTimeout(() => {
            if (!res.destroyed) res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(chunks));
          }, fault.ms);
          res.on('close', () => clearTimeout(timer));
        });
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    // a client that leaves ends the request upstream too (a long-poll, a followed log)
    res.on('close', () => out.destroy());
    out.end(body);
  };

  const { server, url } = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const at = new URL(req.url ?? '/', 'http://127.0.0.1');
        let parsed: unknown;
        try {
          parsed = body.length === 0 ? undefined : JSON.parse(body.toString('utf8'));
        } catch {
          parsed = undefined;
        }
        const recorded: RecordedRequest = {
          method: req.method ?? 'GET',
          path: at.pathname,
          query: at.searchParams,
          headers: req.headers,
          body: parsed,
        };
        requests.push(recorded);
        const fault = take(recorded);
        switch (fault?.type) {
          case 'drop':
            req.socket.destroy();
            return;
          case 'raw':
            res.writeHead(fault.status, { 'content-type': fault.contentType ?? 'application/json' }).end(fault.body);
            return;
          case 'status': {
            const answer = envelopeError(fault);
            res.writeHead(fault.status, answer.headers).end(answer.body);
            return;
          }
          case 'slow':
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, fault.ms);
              res.on('close', () => {
                clearTimeout(timer);
                resolve();
              });
            });
            break;
          case 'hold':
            await Promise.race([fault.until, new Promise((resolve) => res.on('close', resolve))]);
            break;
        }
        if (res.destroyed) return;
        forward(req, res, recorded, body, fault);
      })();
    });
  });

  return {
    url,
    requests,
    requestsTo: (path, method) =>
      requests.filter(
        (r) =>
          (method === undefined || r.method === method) &&
          (typeof path === 'string' ? r.path === path : path.test(r.path)),
      ),
    inject: (injection) => void injections.push({ ...injection }),
    async close() {
      await closeServer(server);
      agent.destroy();
    },
  };
}
