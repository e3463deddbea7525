/**
 * Sends a message to a channel with undici, again after a failure (no answer, 429 or 5xx) with
 * back-off, a bounded number of times. Other answers are final. What is logged names the channel,
 * never its URL or secret.
 */
import { request } from 'undici';
import type { Logger } from '../engine-log.js';
import type { Channel } from './channels.js';
import type { Outgoing } from './messages.js';

export interface RetryPolicy {
  /** attempts in all, the first included */
  attempts: number;
  /** the wait before the second attempt, ms; doubled before each next one */
  firstDelayMs: number;
  /** each attempt's limit, ms */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, firstDelayMs: 2_000, timeoutMs: 10_000 };

/** What became of one message. */
export interface Delivery {
  delivered: boolean;
  attempts: number;
  /** the last answer's status; 0 when none came */
  status: number;
}

/** Posts `message` to `channel` until it is taken, the attempts run out, or `signal` aborts. */
export async function deliver(
  channel: Channel,
  message: Outgoing,
  options: { retry: RetryPolicy; logger: Logger; signal: AbortSignal },
): Promise<Delivery> {
  const { retry, logger, signal } = options;
  let status = 0;
  for (let attempt = 1; attempt <= retry.attempts; attempt++) {
    if (signal.aborted) return { delivered: false, attempts: attempt - 1, status };
    let problem: string;
    try {
      const answer = await request(channel.url, {
        method: 'POST',
        headers: message.headers,
        body: message.body,
        headersTimeout: retry.timeoutMs,
        bodyTimeout: retry.timeoutMs,
        signal: AbortSignal.any([signal, AbortSignal.timeout(retry.timeoutMs)]),
      });
      status = answer.statusCode;
      await answer.body.dump().catch(() => {});
      if (status >= 200 && status < 300) return { delivered: true, attempts: attempt, status };
      if (status !== 429 && status < 500) {
        logger.warn('an alert channel refused a message', { channel: channel.name, status });
        return { delivered: false, attempts: attempt, status };
      }
      problem = `status ${status}`;
    } catch (error) {
      status = 0;
      problem = error instanceof Error ? ((error as { code?: string }).code ?? error.name) : 'error';
    }
    if (attempt === retry.attempts) {
      logger.warn('an alert could not be delivered', { channel: channel.name, attempts: attempt, problem });
      break;
    }
    await wait(retry.firstDelayMs * 2 ** (attempt - 1), signal);
  }
  return { delivered: false, attempts: retry.attempts, status };
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
