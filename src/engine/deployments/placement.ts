/**
 * Where a deployment's instances run, as the deployment (live-deployment.ts) sees it. Two kinds:
 * instances the engine supervises itself, each run by a Runner (supervised.ts), and workloads an
 * orchestrator runs and supervises (orchestrated.ts). The deployment asks its placement to launch,
 * scale, drain and stop, and the gateway asks it for backends; neither looks at which kind it is.
 */
import type { Deployment } from '../../api/contract.js';
import type { Backend } from '../gateway/upstream.js';
import type { ManagedInstance } from './instance.js';

/** a deploy, a restore after an engine restart, or a request's wake of an idle deployment */
export type LaunchVerb = 'starting' | 'restoring' | 'waking';

export interface Placement {
  /** the instances the engine supervises itself (none when an orchestrator runs the deployment) */
  readonly instances: readonly ManagedInstance[];
  /**
   * Brings up `count` instances (an orchestrator: the deployment's replicas); resolves once they
   * serve as the verb requires, rejects with the reason when they did not.
   */
  launch(count: number, verb: LaunchVerb): Promise<void>;
  /** how many serve now */
  healthy(): number;
  /** what the gateway may route to */
  backends(): Backend[];
  /** moves towards `desired` instances (started at once; removed ones drain first) */
  scale(desired: number): void;
  /** lets every instance finish its requests and sessions (bounded), then stops it */
  drainAll(): Promise<void>;
  /**
   * drains and forgets every instance, leaving none (scale to zero; a later launch starts afresh);
   * absent where an orchestrator runs the deployment (its own scaling is the orchestrator's)
   */
  park?(): Promise<void>;
  /** stops everything it runs */
  stop(): Promise<void>;
  /** the instances as the API shows them */
  describe(): NonNullable<Deployment['instances']>;
}
