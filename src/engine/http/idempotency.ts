/**
 * `Idempotency-Key` on POSTs: the first answer of a key is stored and replayed for the same body;
 * the same key with another body is `422 idempotency_mismatch`. The same key while the first
 * request still runs (a client that gave up waiting and retried) waits for that first request and
 * then replays its answer, so a retry never runs the work twice and never fails for being early.
 */
import { createHash } from 'node:crypto';
import type { Store } from '../store/store.js';
import { HttpError } from './respond.js';

/** Up to 200 printable ASCII characters (docs/api.md). */
const KEY_PATTERN = /^[\x20-\x7e]{1,200}$/;

export interface IdempotencyClaim {
  /** stores the answer (when it is final) and releases the key */
  finish(reply: { status: number; body: unknown } | undefined): Promise<void>;
}

export type IdempotencyOutcome = { replay: { status: number; body: unknown } } | { claim: IdempotencyClaim };

interface Running {
  bodyHash: string;
  /** settles when the first request has stored its answer (or not) and let go of the key */
  done: Promise<void>;
}

export class Idempotency {
  private readonly running = new Map<string, Running>();

  constructor(private readonly store: Store) {}

  /**
   * Looks the key up. `scope` separates keys of different callers and routes (API key, method,
   * path), so one key reused on another route is a new request, not a mismatch.
   */
  async begin(
    key: string,
    scope: string,
    rawBody: Buffer,
    options: { signal?: AbortSignal; onWait?: () => void } = {},
  ): Promise<IdempotencyOutcome> {
    const { signal } = options;
    if (!KEY_PATTERN.test(key)) {
      throw new HttpError('bad_request', 'Idempotency-Key must be 1 to 200 printable ASCII characters', {}, [
        { path: 'headers.idempotency-key', message: 'must be 1 to 200 printable ASCII characters' },
      ]);
    }
    const storeKey = createHash('sha256').update(scope).update('\n').update(key).digest('hex');
    const bodyHash = createHash('sha256').update(rawBody).digest('hex');
    for (let first = this.running.get(storeKey); first !== undefined; first = this.running.get(storeKey)) {
      if (first.bodyHash !== bodyHash) {
        throw new HttpError(
          'idempotency_mismatch',
          'this Idempotency-Key is in use by a request with a different body; use a new key',
        );
      }
      options.onWait?.();
      await untilSettledOrAborted(first.done, signal);
      if (signal?.aborted === true)
        throw new HttpError(
          'unavailable',
          'the client went away while an earlier request with this Idempotency-Key ran',
        );
    }
    const stored = await this.store.getIdempotent(storeKey);
    if (stored !== undefined) {
      if (stored.bodyHash !== bodyHash) {
        throw new HttpError(
          'idempotency_mismatch',
          'this Idempotency-Key was used with a different request body; use a new key',
        );
      }
      return { replay: { status: stored.status, body: stored.body } };
    }
    let release!: () => void;
    this.running.set(storeKey, { bodyHash, done: new Promise<void>((resolve) => (release = resolve)) });
    let done = false;
    return {
      claim: {
        finish: async (reply) => {
          if (done) return;
          done = true;
          try {
            if (reply !== undefined && isFinal(reply.status)) {
              await this.store.putIdempotent(storeKey, { bodyHash, status: reply.status, body: reply.body });
            }
          } finally {
            this.running.delete(storeKey);
            // those waiting look the key up again: a stored answer is replayed, else one of them runs
            release();
          }
        },
      },
    };
  }
}

function untilSettledOrAborted(done: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return done;
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => {
      signal.removeEventListener('abort', finish);
      resolve();
    };
    signal.addEventListener('abort', finish, { once: true });
    void done.then(finish);
  });
}

/**
 * Answers worth replaying: not server errors, not rate limits, not conflicts (a state that may
 * change, so a retry should look again).
 */
function isFinal(status: number): boolean {
  return status < 500 && status !== 429 && status !== 409;
}
