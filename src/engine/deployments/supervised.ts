/**
 * The placement of a deployment whose instances the engine supervises itself (placement.ts): each
 * instance is a ManagedInstance run by the engine's Runner, started through the start queue,
 * health-checked, restarted with back-off, drained and stopped here. What to start and what to
 * drain is decided by decisions.ts; this class carries it out.
 */
import type { Deployment, DeploymentState } from '../../api/contract.js';
import { START_PRIORITY } from '../admission.js';
import type { Backend } from '../gateway/upstream.js';
import { launchOutcome, planScale, type LaunchOutcome } from './decisions.js';
import { ManagedInstance, type InstanceHooks } from './instance.js';
import type { DeploymentRecord } from '../records.js';
import { resourcesOf } from './limits.js';
import type { LiveContext } from './live-context.js';
import { describeAhead } from './log-lines.js';
import type { LaunchVerb, Placement } from './placement.js';
import { tasksOf } from './task-folder.js';
import { isActive } from './states.js';

/** What the placement needs of its deployment. */
export interface SupervisedOwner {
  readonly id: string;
  readonly environment: string;
  readonly status: DeploymentState;
  readonly record: DeploymentRecord;
  readonly ctx: LiveContext;
  instanceEnv(): Record<string, string>;
  hooks(): InstanceHooks;
  setStage(stage: string): void;
  changed(persist?: boolean): void;
  /** resolves with the first answer of `check` other than undefined, looking again at every change */
  until<T>(check: () => T | undefined): Promise<T>;
  /** how many sessions `instance` holds (a drain waits for them) */
  sessionsHeldBy(instance: ManagedInstance): number;
}

export class SupervisedPlacement implements Placement {
  instances: ManagedInstance[] = [];
  private nextInstance = 1;
  /** the launch in progress, for its stage */
  private launching: { verb: LaunchVerb; instances: ManagedInstance[] } | undefined;

  constructor(private readonly owner: SupervisedOwner) {}

  private createInstance(): ManagedInstance {
    const { owner } = this;
    const { ctx } = owner;
    const instance = new ManagedInstance(
      `i${this.nextInstance++}`,
      {
        owner: { engine: ctx.engine, deployment: owner.id },
        bundleDir: ctx.server.bundleDir,
        env: owner.instanceEnv(),
        logLevel: owner.environment === 'development' ? 'debug' : 'info',
        ...resourcesOf(owner.record.config.resources),
        ...tasksOf(owner),
      },
      { runner: ctx.runner, starts: ctx.starts, limits: ctx.limits, clock: ctx.clock, hooks: owner.hooks() },
    );
    this.instances.push(instance);
    return instance;
  }

  /**
   * Starts `count` instances, each through the start queue, each retried with back-off when its
   * start fails in a way that may pass (a time-out on a busy machine). How the launch stands is
   * launchOutcome's to say (decisions.ts).
   */
  async launch(count: number, verb: LaunchVerb): Promise<void> {
    const started = Array.from({ length: count }, () => this.createInstance());
    this.launching = { verb, instances: started };
    this.describeLaunch();
    const priority = START_PRIORITY[verb === 'restoring' ? 'restore' : verb === 'waking' ? 'wake' : 'deploy'];
    for (const instance of started) void instance.start({ retry: true, failFast: verb === 'starting', priority });
    try {
      const outcome = await this.owner.until<NonNullable<LaunchOutcome>>(() =>
        launchOutcome(verb, started, isActive(this.owner.status)),
      );
      if (!outcome.done) throw new Error(outcome.reason);
    } finally {
      this.launching = undefined;
    }
  }

  /** The stage of a launch: how many instances answer, or how long the queue is before the first start. */
  describeLaunch(): void {
    const launch = this.launching;
    if (launch === undefined || !isActive(this.owner.status)) return;
    const { verb, instances } = launch;
    const healthy = instances.filter((instance) => instance.serving).length;
    const queued = instances.map((instance) => instance.queued).filter((ahead): ahead is number => ahead !== undefined);
    const stage =
      healthy === 0 && queued.length === instances.length
        ? `queued: ${describeAhead(Math.min(...queued))}`
        : `${verb} instances ${healthy}/${instances.length}`;
    this.owner.setStage(stage);
  }

  healthy(): number {
    return this.instances.filter((instance) => instance.serving).length;
  }

  backends(): Backend[] {
    return this.instances;
  }

  scale(desired: number): void {
    const plan = planScale(this.instances, desired);
    for (let n = 0; n < plan.start; n += 1)
      void this.createInstance().start({ retry: true, priority: START_PRIORITY.scale });
    for (const victim of plan.drain) {
      void this.drain(victim).then(() => {
        this.instances = this.instances.filter((instance) => instance !== victim);
        this.owner.changed(true);
      });
    }
  }

  /** Lets an instance finish its requests and its sessions (bounded), then stops it. */
  drain(instance: ManagedInstance): Promise<void> {
    return instance.drain(() => this.owner.sessionsHeldBy(instance) > 0);
  }

  async drainAll(): Promise<void> {
    await Promise.all(this.instances.map((instance) => this.drain(instance)));
  }

  async park(): Promise<void> {
    const leaving = this.instances;
    await Promise.all(leaving.map((instance) => this.drain(instance)));
    this.instances = this.instances.filter((instance) => !leaving.includes(instance));
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.stop()));
  }

  describe(): NonNullable<Deployment['instances']> {
    return this.instances.map((instance) => ({
      id: instance.id,
      state: instance.state,
      ...(instance.port === undefined ? {} : { port: instance.port }),
      ...(instance.pid === undefined ? {} : { pid: instance.pid }),
      restarts: instance.restarts,
      ...(instance.lastCheck === undefined ? {} : { last_check: new Date(instance.lastCheck).toISOString() }),
    }));
  }
}
