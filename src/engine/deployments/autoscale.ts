/**
 * The autoscaler's decision, from the load measured over one tick. Pure.
 *
 * Load is the time-weighted mean of outstanding requests across the deployment. The wanted count
 * is ceil(load / target), clamped to [min, max]. Scaling up happens at once; scaling down only
 * after the load has stayed low for `scaleDownDelayMs`, one instance per tick, so a short lull
 * does not shed capacity that is needed again a moment later.
 */
export interface ScaleInput {
  current: number;
  min: number;
  max: number;
  /** mean outstanding requests over the last tick, whole deployment */
  load: number;
  targetPerInstance: number;
  now: number;
  /** since when the load has been low enough to remove an instance, if it has */
  lowSince: number | undefined;
  scaleDownDelayMs: number;
}

export interface ScaleDecision {
  desired: number;
  lowSince: number | undefined;
}

export function decideScale(input: ScaleInput): ScaleDecision {
  const { current, min, max, load, targetPerInstance, now, scaleDownDelayMs } = input;
  const wanted = clamp(Math.ceil(load / Math.max(targetPerInstance, Number.EPSILON)), min, max);
  if (wanted > current) return { desired: wanted, lowSince: undefined };
  if (current <= min) return { desired: clamp(current, min, max), lowSince: undefined };
  if (wanted < current) {
    const lowSince = input.lowSince ?? now;
    if (now - lowSince >= scaleDownDelayMs) return { desired: current - 1, lowSince: now };
    return { desired: current, lowSince };
  }
  return { desired: current, lowSince: undefined };
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, n));
}
