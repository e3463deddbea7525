/**
 * The limits docs/api.md promises: sizes and rates the HTTP layer enforces, and the checks of a
 * build request that the zod contract cannot express (counts, duplicate names), and the instance
 * bounds per environment that the deployment service applies (deployments/limits.ts). Pure
 * apart from reading the number of cores for the default sizes of the queues.
 */
import type { BuildRequest } from '../api/contract.js';
import { availableParallelism } from 'node:os';
import { LIMITS } from '../definition/schema.js';
import type { ErrorDetail } from '../api/contract.js';
import { SETTINGS, settingValue, type SettingsFile } from '../shared/settings.js';
import type { RecordRetention } from './store/record-retention.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The sizes of the engine's queues of work that needs a process (src/engine/admission.ts). */
export interface AdmissionLimits {
  /** instance starts (deploys, scale-ups, restarts, restores) at once */
  starts: number;
  /** build checks at once */
  builds: number;
  /** test runs at once */
  tests: number;
  /** items that may wait in each queue before new work is refused */
  maxWaiting: number;
}

/** One slot per core for each kind of work: a starting Node process keeps a core busy. */
export function defaultAdmissionLimits(cores = availableParallelism()): AdmissionLimits {
  const perCore = Math.max(1, cores);
  return { starts: perCore, builds: perCore, tests: perCore, maxWaiting: SETTINGS.queueMax.default };
}

export interface EngineLimits {
  /** largest request body, in bytes */
  bodyBytes: number;
  /** token bucket per API key: burst size and refill per second; a rate of 0 turns limiting off */
  rateCapacity: number;
  ratePerSecond: number;
  /** refused API keys from one address within a minute that block it for a minute (429); 0 turns this off */
  authFailures: number;
  /** longest long-poll (`?wait=`) */
  maxWaitSeconds: number;
  /** how long a synchronous deploy or rollback waits before answering `202` with `deploying` */
  syncDeploySeconds: number;
  /** interval of the empty keep-alive lines of a followed log */
  keepAliveMs: number;
  /** how long an Idempotency-Key is remembered */
  idempotencyTtlMs: number;
  /** a request (headers and body) must arrive within this; a slower one gets 408 */
  requestTimeoutMs: number;
  /** the bounded queues of work that needs a process (src/engine/admission.ts) */
  admission: AdmissionLimits;
  /** runtime processes kept loaded and waiting for a bundle (src/engine/runners/process/warm-pool.ts); 0 turns the pool off */
  warmPool: number;
  /** how long old development deployments and unused builds are kept (src/engine/store/record-retention.ts) */
  retention: RecordRetention;
  /** how often the engine removes what is past the retention (and once at start) */
  pruneEveryMs: number;
}

/** Enough warm processes for a build followed by a deploy; never more than the cores can load at once (at most 4). */
export function defaultWarmPoolSize(cores = availableParallelism()): number {
  return Math.max(1, Math.min(4, Math.floor(cores)));
}

/** The burst of a rate: three seconds' worth, at least 1. */
function rateCapacity(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond * 3));
}

export const DEFAULT_LIMITS: EngineLimits = {
  bodyBytes: 10 * 1024 * 1024,
  rateCapacity: rateCapacity(SETTINGS.rateLimit.default),
  ratePerSecond: SETTINGS.rateLimit.default,
  authFailures: SETTINGS.authFailureLimit.default,
  maxWaitSeconds: 60,
  syncDeploySeconds: 120,
  keepAliveMs: 15_000,
  idempotencyTtlMs: 24 * 60 * 60 * 1000,
  requestTimeoutMs: 60_000,
  admission: defaultAdmissionLimits(),
  warmPool: defaultWarmPoolSize(),
  retention: {
    developmentMs: SETTINGS.retentionDevelopmentDays.default * DAY_MS,
    buildMs: SETTINGS.retentionBuildDays.default * DAY_MS,
  },
  pruneEveryMs: 60 * 60 * 1000,
};

const ADMISSION_SETTINGS = {
  starts: SETTINGS.startConcurrency,
  builds: SETTINGS.buildConcurrency,
  tests: SETTINGS.testConcurrency,
  maxWaiting: SETTINGS.queueMax,
} as const;

/**
 * The limits the engine's environment and the `tuning` section of its settings file set (docs/tuning.md):
 * `MCPCTL_RATE_LIMIT=<per second>` sets the refill rate (the burst is three seconds' worth, at least 1);
 * the concurrency settings and `MCPCTL_QUEUE_MAX` size the queues; `MCPCTL_WARM_POOL` sizes the pool of
 * warm runtime processes (0 turns it off); `MCPCTL_AUTH_FAILURE_LIMIT` is the number of refused API keys
 * per minute that blocks an address; `MCPCTL_RETENTION_DEV_DAYS` and `MCPCTL_RETENTION_BUILD_DAYS` say how
 * long old development deployments and unused builds are kept. A bad value is an error naming the variable or the key.
 */
export function engineLimits(sources: { env: Record<string, string | undefined>; file?: SettingsFile }): EngineLimits {
  const limits: EngineLimits = { ...DEFAULT_LIMITS, admission: { ...DEFAULT_LIMITS.admission } };
  limits.ratePerSecond = settingValue(SETTINGS.rateLimit, sources);
  limits.rateCapacity = rateCapacity(limits.ratePerSecond);
  for (const key of Object.keys(ADMISSION_SETTINGS) as Array<keyof AdmissionLimits>) {
    limits.admission[key] = settingValue(ADMISSION_SETTINGS[key], sources) ?? limits.admission[key];
  }
  limits.authFailures = settingValue(SETTINGS.authFailureLimit, sources);
  limits.warmPool = settingValue(SETTINGS.warmPool, sources) ?? limits.warmPool;
  limits.retention = {
    developmentMs: settingValue(SETTINGS.retentionDevelopmentDays, sources) * DAY_MS,
    buildMs: settingValue(SETTINGS.retentionBuildDays, sources) * DAY_MS,
  };
  return limits;
}

const IDLES_ALREADY = (environment: string) =>
  `a ${environment} deployment holds no instance while idle anyway (config.scaling.idle_seconds); leave min_instances out`;

/**
 * Instance bounds of the local engine, per environment (docs/api.md, limits). Production may also
 * ask for `min_instances: 0`: scale to zero when idle, one instance or more while awake.
 */
export const INSTANCE_BOUNDS = {
  development: { min: 1, max: 1, defaultMin: 1, defaultMax: 1, zeroHint: IDLES_ALREADY('development') },
  staging: { min: 1, max: 2, defaultMin: 1, defaultMax: 1, zeroHint: IDLES_ALREADY('staging') },
  production: { min: 2, max: 8, defaultMin: 2, defaultMax: 4, zero: true },
} as const;

/** Problems of a build request the item schemas do not catch: counts and duplicate names. */
export function checkBuildLimits(request: BuildRequest): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const count = (field: 'tools' | 'resources' | 'prompts', max: number) => {
    const length = request[field]?.length ?? 0;
    if (length > max)
      problems.push({ path: field, message: `at most ${max} ${field} per server (this one has ${length})` });
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
      else
        problems.push({
          path: `${field}[${index}]`,
          message: `${what} ${JSON.stringify(value)} is already used by ${field}[${first}]`,
        });
    });
  };
  duplicates('tools', (t: { name: string }) => t.name, 'the tool name');
  duplicates('resources', (r: { uri: string }) => r.uri, 'the resource uri');
  duplicates('prompts', (p: { name: string }) => p.name, 'the prompt name');
  return problems;
}
