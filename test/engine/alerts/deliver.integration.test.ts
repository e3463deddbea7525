/**
 * Delivery of alert messages to a receiver on loopback: again after 5xx, 429 or no answer, with
 * growing waits, a bounded number of times; never again after another 4xx; abandoned when the
 * engine stops; and the log names the channel, never its URL.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Channel } from '../../../src/engine/alerts/channels.js';
import { deliver, type RetryPolicy } from '../../../src/engine/alerts/deliver.js';
import { createLogger } from '../../../src/engine/engine-log.js';

const RETRY: RetryPolicy = { attempts: 4, firstDelayMs: 20, timeoutMs: 2_000 };
const MESSAGE = {
  body: '{"status":"firing"}',
  headers: { 'content-type': 'application/json', 'x-mcpctl-signature': 'sha256=00' },
};

let server: Server | undefined;

afterEach(async () => {
  if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

/** A receiver that answers each request with the next status of `statuses` (the last one after). */
async function receiver(statuses: number[]): Promise<{ channel: Channel; arrivals: number[]; bodies: string[] }> {
  const arrivals: number[] = [];
  const bodies: string[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      arrivals.push(Date.now());
      bodies.push(body);
      res.writeHead(statuses[Math.min(arrivals.length - 1, statuses.length - 1)]!).end();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    channel: { type: 'webhook', name: 'ops', url: `http://127.0.0.1:${port}/hook`, secret: 'x'.repeat(16) },
    arrivals,
    bodies,
  };
}

function logged(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger({ write: (line) => lines.push(line) }), lines };
}

describe('delivery', () => {
  it('tries again after 5xx and 429, waiting longer each time, until the receiver takes it', async () => {
    const { channel, arrivals, bodies } = await receiver([503, 429, 500, 204]);
    const { logger, lines } = logged();
    const result = await deliver(channel, MESSAGE, { retry: RETRY, logger, signal: new AbortController().signal });
    expect(result).toEqual({ delivered: true, attempts: 4, status: 204 });
    expect(bodies).toEqual(Array(4).fill(MESSAGE.body));
    const waits = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
    expect(waits[0]).toBeGreaterThanOrEqual(18);
    expect(waits[1]).toBeGreaterThanOrEqual(38);
    expect(waits[2]).toBeGreaterThanOrEqual(78);
    expect(lines).toEqual([]);
  });

  it('gives up after the attempts, and logs the channel without its URL', async () => {
    const { channel, arrivals } = await receiver([502]);
    const { logger, lines } = logged();
    const result = await deliver(channel, MESSAGE, { retry: RETRY, logger, signal: new AbortController().signal });
    expect(result).toEqual({ delivered: false, attempts: 4, status: 502 });
    expect(arrivals).toHaveLength(4);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      msg: 'an alert could not be delivered',
      channel: 'ops',
      attempts: 4,
    });
    expect(lines[0]).not.toContain(channel.url);
  });

  it('does not try again after a 4xx other than 429', async () => {
    const { channel, arrivals } = await receiver([401, 204]);
    const { logger, lines } = logged();
    const result = await deliver(channel, MESSAGE, { retry: RETRY, logger, signal: new AbortController().signal });
    expect(result).toEqual({ delivered: false, attempts: 1, status: 401 });
    expect(arrivals).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      msg: 'an alert channel refused a message',
      channel: 'ops',
      status: 401,
    });
  });

  it('tries again when nothing listens, and stops waiting when aborted', async () => {
    const { channel } = await receiver([204]);
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    const { logger } = logged();
    const aborts = new AbortController();
    const started = Date.now();
    const pending = deliver(channel, MESSAGE, {
      retry: { attempts: 3, firstDelayMs: 60_000, timeoutMs: 2_000 },
      logger,
      signal: aborts.signal,
    });
    setTimeout(() => aborts.abort(), 100);
    const result = await pending;
    expect(result.delivered).toBe(false);
    expect(result.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
