/**
 * The limits docs/api.md promises: sizes and rates the HTTP layer enforces, and the checks of a
 * build request that the zod contract cannot express (counts, duplicate names), and the instance
 * bounds per environment that the deployment service applies (deployments/limits.ts). Pure.
 */
import type { BuildRequest } from '../api/contract.js';
import { LIMITS } from '../definition/schema.js';
import type { ErrorDetail } from '../api/contract.js';

export interface EngineLimits {
  /** largest request body, in bytes */
  bodyBytes: number;
  /** token bucket per API key: burst size and refill per second; a rate of 0 turns limiting off */
  rateCapacity: number;
  ratePerSecond: number;
  /** longest long-poll (`?wait=`) */
  maxWaitSeconds: number;
  /** how long a synchronous deploy or rollback waits before answering `202` with `deploying` */
  syncDeploySeconds: number;
  /** interval of the empty keep-alive lines of a followed log */
  keepAliveMs: number;
  /** how long an Idempotency-Key is remembered */
  idempotencyTtlMs: number;
}

export const DEFAULT_LIMITS: EngineLimits = {
  bodyBytes: 10 * 1024 * 1024,
  rateCapacity: 120,
  ratePerSecond: 40,
  maxWaitSeconds: 60,
  syncDeploySeconds: 120,
  keepAliveMs: 15_000,
  idempotencyTtlMs: 24 * 60 * 60 * 1000,
};

/** `MCPCTL_RATE_LIMIT=<per second>` sets the refill rate; the burst is three seconds' worth (at least 1). */
export function limitsFromEnv(env: Record<string, string | undefined>): EngineLimits {
  const raw = env.MCPCTL_RATE_LIMIT;
  if (raw === undefined || raw.trim() === '') return { ...DEFAULT_LIMITS };
  const rate = Number(raw);
  if (!Number.isFinite(rate) || rate < 0) {
    throw new Error(`MCPCTL_RATE_LIMIT must be a number of requests per second ≥ 0 (0 turns limiting off), not ${JSON.stringify(raw)}`);
  }
  return { ...DEFAULT_LIMITS, ratePerSecond: rate, rateCapacity: Math.max(1, Math.ceil(rate * 3)) };
}

/** Instance bounds of the local engine, per environment (docs/api.md, limits). */
export const INSTANCE_BOUNDS = {
  development: { min: 1, max: 1, defaultMin: 1, defaultMax: 1 },
  staging: { min: 1, max: 2, defaultMin: 1, defaultMax: 1 },
  production: { min: 2, max: 8, defaultMin: 2, defaultMax: 4 },
} as const;

/** Problems of a build request the item schemas do not catch: counts and duplicate names. */
export function checkBuildLimits(request: BuildRequest): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const count = (field: 'tools' | 'resources' | 'prompts', max: number) => {
    const length = request[field]?.length ?? 0;
    if (length > max) problems.push({ path: field, message: `at most ${max} ${field} per server (this one has ${length})` });
  };
  count('tools', LIMITS.tools);
  count('resources', LIMITS.resources);
  count('prompts', LIMITS.prompts);
  const duplicates = (field: 'tools' | 'resources' | 'prompts', key: (item: never) => string, what: string) => {
    const seen = new Map<string, number>();
    (request[field] ?? []).forEach((item, index) => {
      const value = key(item as never);
      const first = seen.get(value);
      if (first === undefined) seen.set(value, index);
      else problems.push({ path: `${field}[${index}]`, message: `${what} ${JSON.stringify(value)} is already used by ${field}[${first}]` });
    });
  };
  duplicates('tools', (t: { name: string }) => t.name, 'the tool name');
  duplicates('resources', (r: { uri: string }) => r.uri, 'the resource uri');
  duplicates('prompts', (p: { name: string }) => p.name, 'the prompt name');
  return problems;
}
