/**
 * A token bucket per API key: `capacity` requests at once, refilled at `perSecond`. Pure apart
 * from the clock it is given.
 */
export interface RateDecision {
  allowed: boolean;
  /** whole seconds until a request would be allowed (for Retry-After); 0 when allowed */
  retryAfter: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly capacity: number,
    private readonly perSecond: number,
    private readonly clock: () => number = Date.now,
  ) {}

  take(key: string): RateDecision {
    if (this.perSecond <= 0) return { allowed: true, retryAfter: 0 };
    const now = this.clock();
    const bucket = this.buckets.get(key) ?? { tokens: this.capacity, at: now };
    const elapsed = Math.max(0, now - bucket.at) / 1000;
    bucket.tokens = Math.min(this.capacity, bucket.tokens + elapsed * this.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfter: 0 };
    }
    return { allowed: false, retryAfter: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond)) };
  }
}
