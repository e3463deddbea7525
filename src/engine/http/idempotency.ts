/**
 * `Idempotency-Key` on POSTs: the first answer of a key is stored and replayed for the same body;
 * the same key with another body is `422 idempotency_mismatch`; the same key while the first
 * request still runs is `409 conflict`.
 */
import { createHash } from 'node:crypto';
import type { Store } from '../types.js';
import { HttpError } from './respond.js';

/** Up to 200 printable ASCII characters (docs/api.md). */
const KEY_PATTERN = /^[\x20-\x7e]{1,200}$/;

export interface IdempotencyClaim {
  /** stores the answer (when it is final) and releases the key */
  finish(reply: { status: number; body: unknown } | undefined): Promise<void>;
}

export type IdempotencyOutcome = { replay: { status: number; body: unknown } } | { claim: IdempotencyClaim };

export class Idempotency {
  private readonly running = new Set<string>();

  constructor(private readonly store: Store) {}

  /**
   * Looks the key up. `scope` separates keys of different callers and routes (API key, method,
   * path), so one key reused on another route is a new request, not a mismatch.
   */
  async begin(key: string, scope: string, rawBody: Buffer): Promise<IdempotencyOutcome> {
    if (!KEY_PATTERN.test(key)) {
      throw new HttpError('bad_request', 'Idempotency-Key must be 1 to 200 printable ASCII characters', {}, [
        { path: 'headers.idempotency-key', message: 'must be 1 to 200 printable ASCII characters' },
      ]);
    }
    const storeKey = createHash('sha256').update(scope).update('\n').update(key).digest('hex');
    const bodyHash = createHash('sha256').update(rawBody).digest('hex');
    if (this.running.has(storeKey)) {
      throw new HttpError('conflict', 'a request with this Idempotency-Key is still running; retry later', { 'Retry-After': '1' });
    }
    const stored = await this.store.getIdempotent(storeKey);
    if (stored !== undefined) {
      if (stored.bodyHash !== bodyHash) {
        throw new HttpError('idempotency_mismatch', 'this Idempotency-Key was used with a different request body; use a new key');
      }
      return { replay: { status: stored.status, body: stored.body } };
    }
    this.running.add(storeKey);
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
          }
        },
      },
    };
  }
}

/**
 * Answers worth replaying: not server errors, not rate limits, not conflicts (a state that may
 * change, so a retry should look again).
 */
function isFinal(status: number): boolean {
  return status < 500 && status !== 429 && status !== 409;
}
