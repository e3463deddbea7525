/**
 * What supervision decides, as pure functions of what it observed: whether a failed instance is
 * restarted (and after how long) or given up, when its next health check comes, when a failing one
 * is replaced, how a launch stands, which instances a scale-down drains, which deployment a newer
 * one replaces, whether a deployment fails when an instance is given up, and which idle ones give up their instances.
 * The classes (instance.ts, supervised.ts, deployment-service.ts) observe and carry them out.
 */
import type { InstanceState } from './instance-states.js';
import { restartDelay, type DeploymentLimits } from './limits.js';

/** an idle, healthy instance is checked at most this many health intervals apart */
export const IDLE_CHECK_FACTOR = 8;

export type RestartDecision = { kind: 'restart'; delayMs: number } | { kind: 'giveUp'; why: string };

/**
 * After the `consecutive`th failure in a row: restart after the back-off, or give up (at once when
 * the failure cannot pass by itself, or after too many restarts in a row).
 */
export function decideRestart(
  consecutive: number,
  permanent: boolean,
  limits: Pick<DeploymentLimits, 'maxRestarts' | 'restartBackoffMs' | 'restartBackoffMaxMs'>,
): RestartDecision {
  if (permanent) return { kind: 'giveUp', why: 'not restarted: the server refused to start' };
  if (consecutive > limits.maxRestarts)
    return { kind: 'giveUp', why: `given up after ${limits.maxRestarts} restarts in a row` };
  return { kind: 'restart', delayMs: restartDelay(consecutive, limits) };
}

/** What a health tick saw. */
export interface CheckObservation {
  state: InstanceState;
  /** its process runs */
  running: boolean;
  /** the delay before this tick */
  checkDelay: number;
  intervalMs: number;
  now: number;
  lastCheck: number | undefined;
  answeredAt: number;
  requestedAt: number;
  outstanding: number;
}

/**
 * Whether an answer to a request since the last tick stands for this tick's check. An instance
 * that failed a check and still took requests (no other was serving) counts only the answers it
 * gave after that check.
 */
export function answerStandsForCheck(seen: CheckObservation): boolean {
  const since = seen.now - Math.max(seen.checkDelay, seen.intervalMs);
  const answeredSince = seen.state === 'unhealthy' ? Math.max(since, seen.lastCheck ?? 0) : since;
  return (seen.state === 'healthy' || seen.state === 'unhealthy') && seen.running && seen.answeredAt > answeredSince;
}

/**
 * The delay before the next check, before its ±10% spread: it doubles, up to IDLE_CHECK_FACTOR
 * intervals, while the instance is healthy and gets no requests; anything else brings it back to
 * the interval.
 */
export function nextCheckDelay(seen: CheckObservation, checked: boolean): number {
  if (!checked) return seen.intervalMs;
  const since = seen.now - Math.max(seen.checkDelay, seen.intervalMs);
  const idle = seen.state === 'healthy' && seen.outstanding === 0 && seen.requestedAt <= since;
  return idle
    ? Math.min(Math.max(seen.checkDelay, seen.intervalMs) * 2, seen.intervalMs * IDLE_CHECK_FACTOR)
    : seen.intervalMs;
}

/** Whether so many failed checks in a row call for a new process. */
export function shouldReplace(failedChecks: number, limits: Pick<DeploymentLimits, 'unhealthyThreshold'>): boolean {
  return failedChecks >= limits.unhealthyThreshold;
}

/** How a launch of `count` instances stands: done, failed with a reason, or still going (undefined). */
export type LaunchOutcome = { done: true } | { done: false; reason: string } | undefined;

/** What a launch watches of each instance it started. */
export interface LaunchedInstance {
  state: InstanceState;
  serving: boolean;
  failure: string | undefined;
}

/**
 * A deploy (`starting`) is done when every instance serves and fails at the first one given up. A
 * restore (and a wake) keeps every instance that came up: done when each one serves or was given
 * up, failed only when every one was given up.
 */
export function launchOutcome(
  verb: 'starting' | 'restoring' | 'waking',
  started: readonly LaunchedInstance[],
  deploymentActive: boolean,
): LaunchOutcome {
  const count = started.length;
  const serving = started.filter((instance) => instance.serving).length;
  const failed = started.filter((instance) => instance.state === 'failed');
  if (serving === count) return { done: true };
  if (verb !== 'starting' && serving > 0 && serving + failed.length === count) return { done: true };
  if (failed.length > 0 && (verb === 'starting' || failed.length === count))
    return { done: false, reason: failed[0]!.failure ?? 'it did not start' };
  if (!deploymentActive || started.every((instance) => instance.state === 'stopped'))
    return { done: false, reason: 'stopped while starting' };
  return undefined;
}

/** What a scale decision looks at of each instance. */
export interface ScalableInstance {
  state: InstanceState;
  serving: boolean;
  outstanding: number;
}

/**
 * How to reach `desired` instances: how many to start, and which to drain. The ones drained matter
 * least: not serving first, then the least busy, newest first. Draining and stopped ones do not count.
 */
export function planScale<T extends ScalableInstance>(
  instances: readonly T[],
  desired: number,
): { start: number; drain: T[] } {
  const active = instances.filter((instance) => instance.state !== 'draining' && instance.state !== 'stopped');
  if (active.length <= desired) return { start: desired - active.length, drain: [] };
  const leastNeeded = [...active]
    .reverse()
    .sort((a, b) => Number(a.serving) - Number(b.serving) || a.outstanding - b.outstanding);
  return { start: 0, drain: leastNeeded.slice(0, active.length - desired) };
}

/** Whether a deployment whose instance was just given up fails: when no instance is left alive. */
export function failsWhenGivenUp(instances: readonly { state: InstanceState }[]): boolean {
  return !instances.some((instance) => instance.state !== 'failed' && instance.state !== 'stopped');
}

/** What replacement looks at of a deployment. */
export interface Rival {
  id: string;
  createdAt: string;
}

/**
 * One active deployment per server name and environment: the newest deployed one wins. Given the
 * one just deployed and the other deployed ones of its name and environment, which to stop and by
 * which it is replaced, in order: the older rivals by the new one, until a newer rival comes, which
 * replaces the new one (and ends the list).
 */
export function planReplacement<T extends Rival>(live: T, rivals: readonly T[]): Array<{ stop: T; by: T }> {
  const stops: Array<{ stop: T; by: T }> = [];
  for (const other of rivals) {
    const older = other.createdAt < live.createdAt || (other.createdAt === live.createdAt && other.id < live.id);
    if (!older) return [...stops, { stop: live, by: other }];
    stops.push({ stop: other, by: live });
  }
  return stops;
}

/** What the idle check looks at of a deployment. */
export interface IdleCandidate {
  status: string;
  /** it holds no instance already */
  idle: boolean;
  lastActivity: number;
  busy: boolean;
  /** its idle period (idlePeriodMs); undefined: it never goes idle */
  periodMs: number | undefined;
}

/**
 * How long a deployment may go without a request before it holds no instance (scale to zero):
 * its `config.scaling.idle_seconds` (0: never), else its environment's default. Production keeps
 * its instances unless it asks for `min_instances: 0`.
 */
export function idlePeriodMs(
  environment: string,
  scaling: { min_instances?: number | undefined; idle_seconds?: number | undefined } | undefined,
  defaults: { devIdleMs: number; stagingIdleMs: number },
): number | undefined {
  const seconds = scaling?.idle_seconds;
  if (seconds === 0) return undefined;
  if (environment === 'production' && scaling?.min_instances !== 0) return undefined;
  if (seconds !== undefined) return seconds * 1000;
  return environment === 'development' ? defaults.devIdleMs : defaults.stagingIdleMs;
}

/** Whether a deployment gives up its instances now: deployed, not idle yet, no request for its idle period, none in flight. */
export function shouldIdle(live: IdleCandidate, now: number): boolean {
  return (
    live.periodMs !== undefined &&
    live.status === 'deployed' &&
    !live.idle &&
    now - live.lastActivity >= live.periodMs &&
    !live.busy
  );
}
