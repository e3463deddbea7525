/**
 * The decisions of alerting, pure: whether a rule's condition holds for a deployment now (and what
 * was measured), and how an alert moves between pending, firing and resolved. A rule fires once
 * its condition has held for its `for` duration and resolves at the first evaluation it no longer holds.
 */
import { describeRule, type AlertRule } from '../../definition/alerts-schema.js';
import type { DeploymentSnapshot } from '../observability/events.js';
import type { RestartWindows, WindowStats } from './windows.js';

/** What one evaluation of a rule found. */
export interface Condition {
  holds: boolean;
  /** percent, ms or a count; null when the rule does not measure (or had too few requests) */
  value: number | null;
  summary: string;
}

export interface ConditionInputs {
  snapshot: DeploymentSnapshot;
  /** the requests since `now - windowSeconds` */
  requests(windowSeconds: number): WindowStats;
  restarts: Pick<RestartWindows, 'count'>;
  now: number;
}

const PERCENTILES = { p50: 50, p95: 95, p99: 99 } as const;

/** Whether `rule` holds for the deployment of `inputs` (failed_rollout is decided from the store, not here). */
export function evaluateCondition(rule: AlertRule, inputs: ConditionInputs): Condition {
  const { snapshot } = inputs;
  const who = `${snapshot.server} (${snapshot.deploymentId}, ${snapshot.environment})`;
  switch (rule.type) {
    case 'error_rate': {
      const stats = inputs.requests(rule.windowSeconds);
      if (stats.requests < rule.minRequests)
        return { holds: false, value: null, summary: `${who}: too few requests to judge the error rate` };
      const rate = round((stats.errors / stats.requests) * 100);
      return {
        holds: rate > rule.threshold,
        value: rate,
        summary: `${who}: ${rate}% of ${stats.requests} requests failed in the last ${rule.windowText} (alert above ${rule.threshold}%)`,
      };
    }
    case 'latency': {
      const stats = inputs.requests(rule.windowSeconds);
      const percentile = rule.percentile ?? 'p95';
      const ms = stats.requests < rule.minRequests ? null : stats.percentile(PERCENTILES[percentile]);
      if (ms === null) return { holds: false, value: null, summary: `${who}: too few requests to judge latency` };
      return {
        holds: ms > rule.threshold,
        value: round(ms),
        summary: `${who}: ${percentile} latency ${round(ms)} ms over the last ${rule.windowText} (alert above ${rule.threshold} ms)`,
      };
    }
    case 'no_healthy_instance': {
      const healthy = snapshot.instances.filter((instance) => instance.state === 'healthy').length;
      const expected = snapshot.status === 'deployed' && snapshot.desired > 0;
      return {
        holds: expected && healthy === 0,
        value: healthy,
        summary: `${who}: ${healthy} healthy of ${snapshot.instances.length} instances (${snapshot.desired} wanted)`,
      };
    }
    case 'restarts': {
      const count = inputs.restarts.count(snapshot.deploymentId, inputs.now - rule.windowSeconds * 1000);
      return {
        holds: count > rule.threshold,
        value: count,
        summary: `${who}: ${count} instance restarts in the last ${rule.windowText} (alert above ${rule.threshold})`,
      };
    }
    case 'failed_rollout':
      return { holds: false, value: null, summary: `${who}: ${describeRule(rule)}` };
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/** One alert: a rule of a deployment whose condition holds or held. */
export interface AlertState {
  deploymentId: string;
  server: string;
  environment: string;
  rule: AlertRule;
  state: 'pending' | 'firing' | 'resolved';
  /** when the condition started to hold, ms */
  since: number;
  firedAt?: number;
  resolvedAt?: number;
  value: number | null;
  summary: string;
  /** when a message about it last went out, ms */
  sentAt?: number;
}

export type Transition = 'fired' | 'resolved' | undefined;

/**
 * The alert after one evaluation: `undefined` when there is none (the condition does not hold and
 * it was not firing), with the transition a message is sent for.
 */
export function stepAlert(
  previous: AlertState | undefined,
  condition: Condition,
  now: number,
  base: Pick<AlertState, 'deploymentId' | 'server' | 'environment' | 'rule'>,
): { alert: AlertState | undefined; transition: Transition } {
  const active = previous !== undefined && previous.state !== 'resolved' ? previous : undefined;
  if (!condition.holds) {
    if (active?.state === 'firing') {
      return {
        alert: { ...active, state: 'resolved', resolvedAt: now, summary: condition.summary },
        transition: 'resolved',
      };
    }
    return { alert: undefined, transition: undefined };
  }
  const since = active?.since ?? now;
  const measured = { value: condition.value, summary: condition.summary };
  if (active?.state === 'firing') return { alert: { ...active, ...measured }, transition: undefined };
  if (now - since >= base.rule.forSeconds * 1000) {
    return { alert: { ...base, state: 'firing', since, firedAt: now, ...measured }, transition: 'fired' };
  }
  return { alert: { ...base, state: 'pending', since, ...measured }, transition: undefined };
}

/** Whether a firing alert is due to be sent again. */
export function repeatDue(alert: AlertState, now: number, repeatMs: number): boolean {
  return alert.state === 'firing' && alert.sentAt !== undefined && now - alert.sentAt >= repeatMs;
}
