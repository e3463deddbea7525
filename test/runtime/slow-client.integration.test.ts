/**
 * A runtime's HTTP server (serve-bundle and dev use RUNTIME_SERVER_OPTIONS) does not let a client
 * hold a socket by sending its headers a byte at a time (slowloris): it answers 408 and closes
 * once the header time-out has passed.
 */
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RUNTIME_SERVER_OPTIONS } from '../../src/runtime/server/http-front.js';
import { closeServer, listen } from '../support/http.js';

describe('the runtime server and a slow client', () => {
  it('closes a connection whose headers trickle in, with 408, within its header time-out', async () => {
    const server = createServer(RUNTIME_SERVER_OPTIONS, (_req, res) => res.end('ok'));
    const { url } = await listen(server);
    try {
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      let answer = '';
      let closed = false;
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('close', () => (closed = true));
      socket.on('error', () => (closed = true));
      socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      // the trickle is the attack: one header byte every half second keeps the connection busy but never
      // finishes the headers; give up after twice the header time-out
      const limit = (2 * RUNTIME_SERVER_OPTIONS.headersTimeout) / 500;
      for (let i = 0; i < limit && !closed; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        if (!closed) socket.write('X');
      }
      socket.destroy();
      expect(closed).toBe(true);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await closeServer(server);
    }
  }, 60_000);
});
