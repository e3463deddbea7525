/**
 * Guessing the API key: refused keys are counted per source address, and after a few the address
 * gets 429 with Retry-After for every request, the right key included, while other addresses are
 * served as before. Real sockets; the second address is another loopback one (127.0.0.2).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_KEY, type TestApp } from '../../support/app.js';

let target: TestApp;

beforeAll(async () => {
  target = await startTestApp();
});
afterAll(async () => {
  await target.close();
});

/** GET /v1/servers with `key`, from `from`. */
function get(
  key: string,
  from: string,
): Promise<{ status: number; retryAfter: string | undefined; code: string | undefined }> {
  const url = new URL('/v1/servers', target.url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { localAddress: from, headers: { authorization: `Bearer ${key}` }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const body = JSON.parse(text) as { error?: { code?: string } };
          resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], code: body.error?.code });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('wrong API keys from one address', () => {
  it('get 429 rate_limited with Retry-After after 10, even with the right key, while another address is served', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 50; i += 1) {
      const answer = await get(`wrong-key-${i}-0123456789abcdef0123456789`, '127.0.0.2');
      statuses.push(answer.status);
      if (answer.status === 429) {
        expect(answer.code).toBe('rate_limited');
        expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(answer.retryAfter)).toBeLessThanOrEqual(60);
      }
    }
    expect(statuses.slice(0, 9)).toEqual(Array(9).fill(401));
    expect(statuses.slice(9)).toEqual(Array(41).fill(429));
    // blocked: guessing right now would not be recognised
    expect((await get(TEST_KEY, '127.0.0.2')).status).toBe(429);
    // another address is unaffected
    expect((await get(TEST_KEY, '127.0.0.1')).status).toBe(200);
    expect((await get('wrong-once-0123456789abcdef0123456789', '127.0.0.1')).status).toBe(401);
    expect((await get(TEST_KEY, '127.0.0.1')).status).toBe(200);
  });
});
