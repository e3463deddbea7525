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

/** The time-weighted mean of requests in flight, measured from one tick to the next. */
export class LoadMeter {
  private inFlight = 0;
  private area = 0;
  private since: number;
  private tickStart: number;

  constructor(now: number) {
    this.since = this.tickStart = now;
  }

  /** Requests in flight went up or down by `delta`. */
  track(delta: number, now: number): void {
    this.area += this.inFlight * (now - this.since);
    this.since = now;
    this.inFlight += delta;
  }

  /** The mean since the last call (or `reset`), and a new measure from now. */
  take(now: number): number {
    this.track(0, now);
    const load = this.area / Math.max(1, now - this.tickStart);
    this.reset(now);
    return load;
  }

  reset(now: number): void {
    this.area = 0;
    this.since = this.tickStart = now;
  }
}
