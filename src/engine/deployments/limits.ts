/**
 * Instance bounds per environment and the timing knobs of the supervisor. Pure.
 * The bounds are the ones docs/api.md ("Limits") promises; a scaling outside them is a 422.
 */
import type { DeployConfig, Environment } from '../../api/contract.js';
import { resolveScalingRange, type ScalingRange } from '../../definition/scaling.js';
import { INSTANCE_BOUNDS } from '../engine-limits.js';

/** The bounds are the engine's (src/engine/limits.ts), so the HTTP check and this one agree. */
export { INSTANCE_BOUNDS };

export interface FieldProblem {
  path: string;
  message: string;
}

export type ScalingResult = ScalingRange;

/**
 * Applies the environment's defaults and checks the bounds, naming each bad field. Given the kind of
 * runner that would run it, a scale to zero (min_instances 0) is refused where an orchestrator runs
 * the instances: only the engine's own runners (process, docker) give them up while idle.
 */
export function resolveScaling(
  environment: Environment,
  scaling: DeployConfig['scaling'],
  runner?: string,
): ScalingResult {
  const range = resolveScalingRange(INSTANCE_BOUNDS[environment], environment, scaling);
  const refusal = range.ok && range.zero === true ? ORCHESTRATED_ZERO[runner ?? ''] : undefined;
  if (refusal === undefined) return range;
  return { ok: false, problems: [{ path: 'config.scaling.min_instances', message: refusal }] };
}

/** Why a runner that hands the instances to an orchestrator cannot scale a deployment to zero. */
const ORCHESTRATED_ZERO: Record<string, string> = {
  swarm:
    'must not be 0 here: this engine runs production as a Swarm service, which keeps its tasks running (no scale to zero); set min_instances from 2 to 8, or run production as containers (MCPCTL_SWARM=off)',
  kubernetes:
    'must not be 0 here: the kubernetes runner keeps the Deployment’s replicas running (no scale to zero); set min_instances from 2 to 8, or scale to zero on the cluster (for example KEDA’s HTTP add-on)',
};

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** A custom domain must be a host name that cannot be mistaken for the engine's own address. */
export function checkDomain(domain: string): FieldProblem | undefined {
  if (!HOST_NAME.test(domain) || IPV4.test(domain)) {
    return { path: 'config.domain', message: 'must be a host name such as mcp.example.com (no scheme, port or path)' };
  }
  if (domain.toLowerCase() === 'localhost')
    return { path: 'config.domain', message: 'localhost is the engine’s own address' };
  return undefined;
}

/** Timing of the supervisor, gateway and autoscaler. Tests shorten them; defaults suit people. */
export interface DeploymentLimits {
  /** how often each instance's /health is checked */
  healthIntervalMs: number;
  /** a health check that takes longer has failed */
  healthTimeoutMs: number;
  /** consecutive failed checks after which an instance is restarted */
  unhealthyThreshold: number;
  /** an instance that is not healthy this long after its start has failed to start */
  startTimeoutMs: number;
  /** first restart delay; doubled for each consecutive restart */
  restartBackoffMs: number;
  restartBackoffMaxMs: number;
  /** consecutive restarts after which an instance is given up */
  maxRestarts: number;
  /** healthy this long after a start resets the consecutive restart count */
  stableAfterMs: number;
  /** how long `stop` waits for a process to exit before SIGKILL */
  stopGraceMs: number;
  /** autoscaler tick */
  scaleIntervalMs: number;
  /** outstanding requests per instance the autoscaler aims for */
  targetOutstandingPerInstance: number;
  /** load must stay low this long before an instance is removed */
  scaleDownDelayMs: number;
  /** how long a removed instance may finish its requests (and its sessions end) */
  drainTimeoutMs: number;
  /** a session the gateway has not seen a request of for this long is forgotten */
  sessionIdleMs: number;
  /** live sessions one source address may hold per deployment (0: no cap; default in upstream.ts) */
  sessionsPerClient?: number;
  /** a development deployment with no request for this long holds no instance until the next (scale to zero) */
  devIdleMs: number;
  /** the same for staging */
  stagingIdleMs: number;
  /** how often idle deployments are looked for */
  idleCheckMs: number;
  /** a synchronous deploy answers `deploying` after this */
  syncDeployTimeoutMs: number;
  /** request bodies through the gateway: what an instance accepts (src/runtime/server/server.ts) */
  maxBodyBytes: number;
  /** bytes of request bodies the gateway holds at once, all requests together (default in body-budget.ts) */
  bodyBudgetBytes?: number;
  /** in-memory log lines kept per deployment */
  logLinesKept: number;
  /** request samples kept per deployment for metrics */
  samplesKept: number;
}

export const DEFAULT_LIMITS: DeploymentLimits = {
  healthIntervalMs: 1500,
  healthTimeoutMs: 1000,
  unhealthyThreshold: 3,
  startTimeoutMs: 30_000,
  restartBackoffMs: 500,
  restartBackoffMaxMs: 30_000,
  maxRestarts: 5,
  stableAfterMs: 60_000,
  stopGraceMs: 5000,
  scaleIntervalMs: 5000,
  targetOutstandingPerInstance: 4,
  scaleDownDelayMs: 60_000,
  drainTimeoutMs: 30_000,
  sessionIdleMs: 60 * 60_000,
  devIdleMs: 5 * 60_000,
  stagingIdleMs: 10 * 60_000,
  idleCheckMs: 1_000,
  syncDeployTimeoutMs: 120_000,
  maxBodyBytes: 4 * 1024 * 1024,
  logLinesKept: 5000,
  samplesKept: 200_000,
};

/** MCPCTL_DEV_IDLE_MINUTES, when it is a positive number. */
export function devIdleFromEnv(env: Record<string, string | undefined>): number | undefined {
  const minutes = Number(env.MCPCTL_DEV_IDLE_MINUTES);
  return env.MCPCTL_DEV_IDLE_MINUTES !== undefined && Number.isFinite(minutes) && minutes > 0
    ? minutes * 60_000
    : undefined;
}

/** Restart delay for the n-th consecutive restart (1-based). */
export function restartDelay(
  attempt: number,
  limits: Pick<DeploymentLimits, 'restartBackoffMs' | 'restartBackoffMaxMs'>,
): number {
  return Math.min(limits.restartBackoffMs * 2 ** Math.max(0, attempt - 1), limits.restartBackoffMaxMs);
}

/** A deployment's `resources` as its instances' runner takes them. */
export function resourcesOf(resources: { memory_mb?: number; cpus?: number } | undefined): {
  resources?: { memoryMb?: number; cpus?: number };
} {
  if (resources === undefined) return {};
  return {
    resources: {
      ...(resources.memory_mb === undefined ? {} : { memoryMb: resources.memory_mb }),
      ...(resources.cpus === undefined ? {} : { cpus: resources.cpus }),
    },
  };
}
