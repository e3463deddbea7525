/**
 * Failed credentials counted per source address: after `maxFailures` refusals within `windowMs`,
 * the address is blocked for `windowMs`, and every request from it is refused (429), even one
 * with the right credential, so a guesser learns nothing while blocked. Other addresses are
 * unaffected. The table is bounded: entries expire, and when it is full the oldest give way.
 * Pure apart from the clock it is given.
 */
import { isIPv6 } from 'node:net';

export interface FailureLimitOptions {
  /** refusals from one address that block it; 0 turns the limit off */
  maxFailures: number;
  /** the window the refusals are counted in, and how long a block lasts */
  windowMs: number;
  /** most addresses remembered at once */
  maxEntries: number;
}

export const DEFAULT_FAILURE_LIMIT: FailureLimitOptions = { maxFailures: 10, windowMs: 60_000, maxEntries: 10_000 };

interface Entry {
  failures: number;
  windowStart: number;
  blockedUntil: number;
}

export class FailureLimiter {
  private readonly entries = new Map<string, Entry>();
  private readonly options: FailureLimitOptions;

  constructor(
    options: Partial<FailureLimitOptions> = {},
    private readonly clock: () => number = Date.now,
  ) {
    this.options = { ...DEFAULT_FAILURE_LIMIT, ...options };
  }

  /** Whole seconds until `address` may try again (for Retry-After), or 0 when it is not blocked. */
  blockedFor(address: string | undefined): number {
    if (this.options.maxFailures <= 0) return 0;
    const entry = this.entries.get(sourceKey(address));
    if (entry === undefined) return 0;
    const left = entry.blockedUntil - this.clock();
    return left > 0 ? Math.max(1, Math.ceil(left / 1000)) : 0;
  }

  /** Counts a refused credential from `address`; returns the seconds it is now blocked for (0: not blocked). */
  fail(address: string | undefined): number {
    if (this.options.maxFailures <= 0) return 0;
    const key = sourceKey(address);
    const now = this.clock();
    let entry = this.entries.get(key);
    if (entry === undefined || now - entry.windowStart >= this.options.windowMs) {
      if (entry === undefined) this.makeRoom(now);
      entry = { failures: 0, windowStart: now, blockedUntil: entry?.blockedUntil ?? 0 };
    }
    // re-inserted: the Map's order is then the order of last activity, oldest first
    this.entries.delete(key);
    this.entries.set(key, entry);
    entry.failures += 1;
    if (entry.failures >= this.options.maxFailures)
      entry.blockedUntil = Math.max(entry.blockedUntil, now + this.options.windowMs);
    return this.blockedFor(address);
  }

  /** The number of addresses remembered (for tests of the bound). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops expired entries; when still full, the least recently active. */
  private makeRoom(now: number): void {
    if (this.entries.size < this.options.maxEntries) return;
    for (const [key, entry] of this.entries) {
      if (entry.blockedUntil <= now && now - entry.windowStart >= this.options.windowMs) this.entries.delete(key);
    }
    for (const key of this.entries.keys()) {
      if (this.entries.size < this.options.maxEntries) break;
      this.entries.delete(key);
    }
  }
}

/**
 * The key an address is counted under: IPv4 as is (also when IPv4-mapped), IPv6 by its /64,
 * the block one host or network usually holds, so rotating through it does not reset the count.
 */
export function sourceKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
