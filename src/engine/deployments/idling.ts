/**
 * Scale to zero of one deployment whose instances the engine supervises: after its idle period
 * (decisions.ts, idlePeriodMs) it drains and stops its instances but stays `deployed`, with its
 * record, URLs and sessions' fate as the spec allows (a 2025 session ends: 404, initialize again);
 * the first request after that waits while an instance starts (from the warm pool when there is
 * one) and is then served. `idle` is part of the record, so an engine restart keeps it idle.
 */
import type { DeploymentRecord } from '../records.js';
import type { Placement } from './placement.js';

/** What idling needs of its deployment (LiveDeployment). */
export interface IdleOwner {
  readonly id: string;
  readonly status: string;
  readonly record: DeploymentRecord;
  readonly placement: Placement;
  /** the instances a wake starts */
  readonly wakeCount: number;
  log(level: 'info' | 'warn' | 'error', text: string): void;
  setStage(stage: string): void;
  changed(persist?: boolean): void;
  noteActivity(): void;
  startAutoscaler(): void;
  stopAutoscaler(): void;
}

export class Idling {
  private parking: Promise<void> | undefined;
  private waking: Promise<void> | undefined;

  constructor(private readonly owner: IdleOwner) {}

  /** deployed, holding no instance: the next request wakes it */
  get idle(): boolean {
    return this.owner.record.deployment.idle === true;
  }

  /** whether its instances can be given up here (not where an orchestrator runs them) */
  get possible(): boolean {
    return this.owner.placement.park !== undefined;
  }

  /** Gives up its instances (their requests and sessions drain first); `why` goes to its log. */
  park(why: string): Promise<void> {
    const { owner } = this;
    const park = owner.placement.park?.bind(owner.placement);
    if (park === undefined || this.idle || owner.status !== 'deployed') return this.parking ?? Promise.resolve();
    owner.record.deployment.idle = true;
    owner.record.deployment.stage = 'idle';
    // a wake starts wakeCount instances: that is what it wants then, whatever the autoscaler had reached
    owner.record.deployment.desired_instances = owner.wakeCount;
    owner.log('info', `${why}: its instances stop until the next request, which starts one`);
    owner.stopAutoscaler();
    owner.changed(true);
    this.parking = park()
      .then(() => owner.changed())
      .finally(() => (this.parking = undefined));
    return this.parking;
  }

  /**
   * Starts its instances for a request that arrived while it was idle; every request that
   * arrives meanwhile waits for the same start. Rejects with the reason when none came up (it
   * stays idle, and the next request tries again).
   */
  wake(): Promise<void> {
    if (!this.idle) return Promise.resolve();
    this.waking ??= this.start().finally(() => (this.waking = undefined));
    return this.waking;
  }

  private async start(): Promise<void> {
    const { owner } = this;
    await this.parking;
    const started = performance.now();
    try {
      await owner.placement.launch(owner.wakeCount, 'waking');
    } catch (error) {
      await owner.placement.park?.();
      const reason = error instanceof Error ? error.message : String(error);
      owner.log('error', `could not wake for a request: ${reason}`);
      throw new Error(reason, { cause: error });
    }
    if (owner.status !== 'deployed') return;
    delete owner.record.deployment.idle;
    owner.record.deployment.stage = 'running';
    owner.noteActivity();
    owner.log('info', `woken by a request in ${(performance.now() - started).toFixed(0)} ms`);
    owner.changed(true);
    owner.startAutoscaler();
  }
}
