/**
 * The autoscaler of one deployment: it measures the load the gateway reports, and every tick asks
 * `decideScale` (autoscale.ts) for the wanted count and tells the deployment when it changes.
 */
import type { DeploymentState } from '../../api/contract.js';
import { decideScale, LoadMeter } from './autoscale.js';
import type { DeploymentLimits } from './limits.js';

/** What the autoscaler sees of a deployment, and the one thing it asks of it. */
export interface Scalable {
  readonly status: DeploymentState;
  readonly desired: number;
  scaleTo(desired: number, load: number): void;
}

export interface ScalerContext {
  min: number;
  max: number;
  limits: Pick<DeploymentLimits, 'scaleIntervalMs' | 'targetOutstandingPerInstance' | 'scaleDownDelayMs'>;
  clock: () => number;
}

export class Scaler {
  private readonly load: LoadMeter;
  private lowSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly target: Scalable,
    private readonly ctx: ScalerContext,
  ) {
    this.load = new LoadMeter(ctx.clock());
  }

  /** Requests in flight went up or down by `delta` (the gateway's tries). */
  track(delta: number): void {
    this.load.track(delta, this.ctx.clock());
  }

  /** Starts ticking, when the range leaves room to scale. */
  start(): void {
    if (this.ctx.max <= this.ctx.min || this.timer !== undefined) return;
    this.load.reset(this.ctx.clock());
    this.timer = setInterval(() => this.tick(), this.ctx.limits.scaleIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (this.target.status !== 'deployed') return;
    const now = this.ctx.clock();
    const load = this.load.take(now);
    const decision = decideScale({
      current: this.target.desired,
      min: this.ctx.min,
      max: this.ctx.max,
      load,
      targetPerInstance: this.ctx.limits.targetOutstandingPerInstance,
      now,
      lowSince: this.lowSince,
      scaleDownDelayMs: this.ctx.limits.scaleDownDelayMs,
    });
    this.lowSince = decision.lowSince;
    if (decision.desired !== this.target.desired) this.target.scaleTo(decision.desired, load);
  }
}
