/**
 * The bridge between Node's HTTP server and the SDK's web-standard MCP handler (`fetch(Request)`),
 * for a request whose body the HTTP front has already read and parsed. The SDK's own adapter
 * (`toNodeHandler`) would turn that parsed body back into JSON text, measure it and wrap it in a
 * stream for a `Request` nobody reads again (the handler is given the parsed body); this one hands
 * the handler a `Request` without a body. A JSON answer is written whole, with its length; an
 * event stream is copied as it comes, at the client's pace, and stops when the client goes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { firstHeader } from '../../shared/http.js';

/** The SDK handler's face: a web `Request` in, a `Response` out; `context` is what the caller passed along. */
export type FetchHandler<C = void> = (
  request: Request,
  options: { parsedBody?: unknown },
  context: C,
) => Promise<Response>;

/** Serves one request through `fetch`; `body` is the parsed body of a POST (undefined otherwise). */
export type NodeServe<C = void> = (
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  context: C,
) => Promise<void>;

export function bridgeToFetch<C = void>(fetch: FetchHandler<C>, onError: (error: Error) => void): NodeServe<C> {
  return async (req, res, body, context) => {
    const abort = new AbortController();
    let finished = false;
    res.once('close', () => {
      if (!finished) abort.abort();
    });
    let response: Response;
    try {
      const request = new Request(urlOf(req), {
        method: req.method ?? 'GET',
        headers: headersOf(req),
        signal: abort.signal,
      });
      response = await fetch(request, body === undefined ? {} : { parsedBody: body }, context);
    } catch (error) {
      onError(error instanceof Error ? error : new Error(String(error)));
      response = Response.json(
        { jsonrpc: '2.0', error: { code: ProtocolErrorCode.InternalError, message: 'Internal error' }, id: null },
        { status: 500 },
      );
    }
    try {
      await writeResponse(response, res, abort.signal);
    } finally {
      finished = true;
    }
  };
}

async function writeResponse(response: Response, res: ServerResponse, closed: AbortSignal): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  if (response.body === null) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!(headers['content-type'] ?? '').startsWith('text/event-stream')) {
    // a JSON answer: one write, with its length (no chunked framing)
    const whole = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = String(whole.length);
    res.writeHead(response.status, headers).end(whole);
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      if (closed.aborted) break;
      if (!res.write(chunk)) await drainedOrClosed(res, closed);
    }
  } catch {
    // the stream broke off (the server closed it, or the client went): the response ends here
  }
  res.end();
}

function drainedOrClosed(res: ServerResponse, closed: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      closed.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    closed.addEventListener('abort', done, { once: true });
  });
}

function urlOf(req: IncomingMessage): string {
  const host = firstHeader(req.headers.host) ?? 'localhost';
  return `http://${host}${req.url ?? '/'}`;
}

/** The request's headers; a body's framing headers are left out, since the `Request` has no body. */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':') || BODY_HEADERS.has(name)) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return headers;
}

const BODY_HEADERS = new Set(['content-length', 'transfer-encoding', 'content-encoding']);
