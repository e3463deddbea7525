/** What a running deployment (live-deployment.ts) is given by the deployment service. */
import type { WorkQueue } from '../admission.js';
import type { Logger } from '../engine-log.js';
import type { ServerRecord } from '../records.js';
import type { Store } from '../store/store.js';
import type { Runner } from '../runners/runner.js';
import type { Orchestrator } from '../runners/orchestrator.js';
import type { DeploymentLimits } from './limits.js';
import type { LogBook } from './log-book.js';
import type { SecretRegistry } from '../secret-registry.js';
import type { Observers } from '../observability/events.js';
import type { Tracing } from '../observability/tracing.js';
import type { RequestStateKeys } from './request-state-keys.js';

export interface LiveContext {
  server: ServerRecord;
  routeName: string;
  min: number;
  max: number;
  store: Store;
  /** what runs its instances */
  runner: Runner;
  /** what runs whole deployments of some environments (a Swarm service), when the engine has one */
  orchestrator?: Orchestrator;
  /** the engine's home, a label of its instances */
  engine: string;
  /** the engine's start queue */
  starts: WorkQueue;
  limits: DeploymentLimits;
  clock: () => number;
  logs: LogBook;
  logger: Logger;
  /** the engine's values to hide: the deployment adds its env_vars values while it is in memory */
  secrets: SecretRegistry;
  /** the record may be written (false once the service is closed) */
  writable: () => boolean;
  /** the engine's observers of requests, when it has any */
  observers?: Observers | undefined;
  /** the engine's traces, when it exports them (src/engine/observability/tracing.ts) */
  tracing?: Tracing | undefined;
  /** the keys its instances sign input-required request states with, one per deployment */
  requestStateKeys?: RequestStateKeys | undefined;
}
