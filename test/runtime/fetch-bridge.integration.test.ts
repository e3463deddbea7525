/**
 * The bridge from Node's HTTP server to a web-standard MCP handler (fetch-bridge.ts), on a real
 * loopback server: the handler gets the parsed body and a `Request` without one; a JSON answer
 * goes out whole with its length; an event stream reaches the client as it is written and its
 * `Request` is aborted when the client goes; a handler that throws is a JSON-RPC internal error.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { bridgeToFetch, type FetchHandler } from '../../src/runtime/server/fetch-bridge.js';
import { eventually } from '../support/wait.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function serve(fetch: FetchHandler, errors: Error[] = []): Promise<string> {
  const bridge = bridgeToFetch(fetch, (error) => errors.push(error));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      void bridge(req, res, text === '' ? undefined : JSON.parse(text));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server?.address() as AddressInfo).port}/mcp`;
}

describe('the Node-to-fetch bridge', () => {
  it('hands over the parsed body and a Request without one, and answers JSON whole with its length', async () => {
    const seen: {
      body: unknown;
      requestBody: unknown;
      method: string;
      header: string | null;
      length: string | null;
    }[] = [];
    const url = await serve(async (request, options) => {
      seen.push({
        body: options.parsedBody,
        requestBody: request.body,
        method: request.method,
        header: request.headers.get('mcp-method'),
        length: request.headers.get('content-length'),
      });
      return Response.json({ jsonrpc: '2.0', id: 1, result: { ok: true } });
    });
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-method': 'tools/call' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call' }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', id: 1, result: { ok: true } });
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(response.headers.get('transfer-encoding')).toBeNull();
    expect(seen).toEqual([
      {
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call' },
        requestBody: null,
        method: 'POST',
        header: 'tools/call',
        length: null,
      },
    ]);
  });

  it('streams an event stream as it is written, and aborts the Request when the client goes', async () => {
    let aborted = false;
    let push: ((text: string) => void) | undefined;
    const url = await serve(async (request) => {
      request.signal.addEventListener('abort', () => (aborted = true));
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => controller.enqueue(new TextEncoder().encode(text));
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
    });
    const received: string[] = [];
    const req = httpRequest(url, { method: 'GET' }, (res) => {
      expect(res.headers['content-type']).toBe('text/event-stream');
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => received.push(chunk));
    });
    req.end();
    await eventually(async () => expect(push).toBeDefined());
    push?.('data: one\n\n');
    await eventually(async () => expect(received.join('')).toBe('data: one\n\n'));
    push?.('data: two\n\n');
    await eventually(async () => expect(received.join('')).toBe('data: one\n\ndata: two\n\n'));
    req.destroy();
    await eventually(async () => expect(aborted).toBe(true));
  });

  it('answers a handler that throws with a JSON-RPC internal error, and reports it', async () => {
    const errors: Error[] = [];
    const url = await serve(async () => {
      throw new Error('broken handler');
    }, errors);
    const response = await fetch(url, { method: 'POST', body: '{"jsonrpc":"2.0","id":3,"method":"ping"}' });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32603, message: 'Internal error' },
      id: null,
    });
    expect(errors.map((error) => error.message)).toEqual(['broken handler']);
  });
});
