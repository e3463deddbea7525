/**
 * The per-address count of refused credentials: blocks after the limit for the window, forgets
 * after it, keeps its table bounded, and counts an IPv6 /64 as one source.
 */
import { describe, expect, it } from 'vitest';
import { FailureLimiter, sourceKey } from '../../../src/engine/http/failure-limit.js';

describe('FailureLimiter', () => {
  it('blocks an address after maxFailures within the window, for the window, and only that address', () => {
    let now = 1_000_000;
    const limiter = new FailureLimiter({ maxFailures: 3, windowMs: 60_000 }, () => now);
    expect(limiter.fail('10.0.0.1')).toBe(0);
    expect(limiter.fail('10.0.0.1')).toBe(0);
    expect(limiter.fail('10.0.0.1')).toBe(60);
    expect(limiter.blockedFor('10.0.0.1')).toBe(60);
    expect(limiter.blockedFor('10.0.0.2')).toBe(0);
    now += 59_500;
    expect(limiter.blockedFor('10.0.0.1')).toBe(1);
    now += 500;
    expect(limiter.blockedFor('10.0.0.1')).toBe(0);
    // a new window: counting starts again
    expect(limiter.fail('10.0.0.1')).toBe(0);
  });

  it('does not block failures spread over more than a window', () => {
    let now = 0;
    const limiter = new FailureLimiter({ maxFailures: 3, windowMs: 1_000 }, () => now);
    for (let i = 0; i < 10; i += 1) {
      expect(limiter.fail('10.0.0.1')).toBe(0);
      now += 600;
    }
  });

  it('keeps at most maxEntries addresses', () => {
    const limiter = new FailureLimiter({ maxFailures: 5, windowMs: 60_000, maxEntries: 100 }, () => 0);
    for (let i = 0; i < 1_000; i += 1) limiter.fail(`10.0.${Math.floor(i / 250)}.${i % 250}`);
    expect(limiter.size).toBeLessThanOrEqual(100);
  });

  it('is off with maxFailures 0', () => {
    const limiter = new FailureLimiter({ maxFailures: 0 }, () => 0);
    for (let i = 0; i < 100; i += 1) expect(limiter.fail('10.0.0.1')).toBe(0);
    expect(limiter.blockedFor('10.0.0.1')).toBe(0);
  });

  it('counts IPv4-mapped addresses as IPv4 and an IPv6 /64 as one source', () => {
    expect(sourceKey('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(sourceKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(sourceKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(sourceKey('::1')).toBe('0:0:0:0::/64');
    expect(sourceKey(undefined)).toBe('unknown');
  });
});
