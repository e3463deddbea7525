/**
 * The gateway's budget of request bodies held in memory at once, across every deployment: each
 * body is read into memory before it is passed on (to see what it calls), so without a budget
 * many large requests at once could exhaust the engine. One source address may hold a quarter of
 * the budget, so a single client holding slow uploads open cannot take it all. A request whose
 * body would take its address's share or the total over is refused at once (`busy`: 503 with
 * Retry-After) rather than queued; one over the per-request limit is `too large` (413).
 */
import type { IncomingMessage } from 'node:http';

/** Bytes of request bodies the gateway holds at once (a few bodies at the largest size an instance takes). */
export const DEFAULT_BODY_BUDGET_BYTES = 64 * 1024 * 1024;

export type BudgetedBody = { body: Buffer; release(): void } | 'too large' | 'busy' | 'gone';

export class BodyBudget {
  private held = 0;
  private readonly byClient = new Map<string, number>();
  private readonly share: number;

  constructor(readonly capacity: number = DEFAULT_BODY_BUDGET_BYTES) {
    this.share = Math.floor(capacity / 4);
  }

  /** Bytes held now (for tests and metrics). */
  get inUse(): number {
    return this.held;
  }

  /**
   * Reads `req`'s body within `maxBytes` and the budget. The bytes stay counted until `release()`
   * (the request was passed on and its body is no longer needed). A declared Content-Length is
   * charged before any byte is read, so a request that cannot fit is refused without reading it.
   */
  read(req: IncomingMessage, maxBytes: number, client: string): Promise<BudgetedBody> {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(this.drop(req, 'too large'));
    const upFront = Number.isFinite(declared) && declared > 0 ? declared : 0;
    // a share never smaller than one request of the largest size
    const share = Math.max(this.share, maxBytes);
    if (!this.take(client, upFront, share)) return Promise.resolve(this.drop(req, 'busy'));
    let charged = upFront;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.give(client, charged);
    };
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = (outcome: BudgetedBody) => {
        if (done) return;
        done = true;
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onGone);
        req.off('close', onClose);
        if (typeof outcome === 'string') {
          release();
          if (outcome !== 'gone') this.drop(req, outcome);
        }
        resolve(outcome);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return finish('too large');
        // a body longer than it declared, or one without a declared length, is charged as it comes
        if (size > charged) {
          if (!this.take(client, size - charged, share)) return finish('busy');
          charged = size;
        }
        chunks.push(chunk);
      };
      const onEnd = () => finish({ body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), release });
      const onGone = () => finish('gone');
      const onClose = () => {
        if (!req.complete) finish('gone');
      };
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onGone);
      req.on('close', onClose);
    });
  }

  private take(client: string, bytes: number, share: number): boolean {
    if (bytes <= 0) return true;
    const mine = this.byClient.get(client) ?? 0;
    if (this.held + bytes > this.capacity || mine + bytes > share) return false;
    this.held += bytes;
    this.byClient.set(client, mine + bytes);
    return true;
  }

  private give(client: string, bytes: number): void {
    if (bytes <= 0) return;
    this.held -= bytes;
    const left = (this.byClient.get(client) ?? 0) - bytes;
    if (left > 0) this.byClient.set(client, left);
    else this.byClient.delete(client);
  }

  /** The rest of a refused body is read and thrown away, so the answer reaches the client. */
  private drop(req: IncomingMessage, outcome: 'too large' | 'busy'): 'too large' | 'busy' {
    req.resume();
    return outcome;
  }
}
