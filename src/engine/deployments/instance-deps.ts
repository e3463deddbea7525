/** What a supervised instance (instance.ts) is given: what it runs, what runs it, and whom it tells. */
import type { WorkQueue } from '../admission.js';
import type { InstanceLabels, Runner } from '../runners/runner.js';
import type { StartRuntimeProcess } from '../services.js';
import type { ManagedInstance } from './instance.js';
import type { DeploymentLimits } from './limits.js';

export interface InstanceHooks {
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string, instance: string): void;
  /** a log line of the process (the runtime logs JSON objects: time, level, msg, fields) */
  output(line: Record<string, unknown>, instance: string): void;
  /** the state, pid or restart count changed */
  changed(): void;
  /** restarts are exhausted: the instance is `failed` for good */
  gaveUp(instance: ManagedInstance, reason: string): void;
}

export interface InstanceDeps {
  /** what runs it */
  runner?: Runner;
  /** without a runner: the process runner with this starter */
  startRuntime?: StartRuntimeProcess;
  /** the engine's start queue: at most so many instances start at once */
  starts: WorkQueue;
  limits: DeploymentLimits;
  clock: () => number;
  hooks: InstanceHooks;
}

export interface InstanceSpec {
  /** the engine and deployment it belongs to, for its runner's labels */
  owner?: Omit<InstanceLabels, 'instance'>;
  bundleDir: string;
  env: Record<string, string>;
  logLevel: 'debug' | 'info';
  /** the deployment's resources, for runners that enforce them */
  resources?: { memoryMb?: number; cpus?: number };
  /** the folder of task state the deployment's instances share (its tools run as tasks) */
  tasksDir?: string;
}

export interface StartOptions {
  /** on failure, restart with back-off (and resolve at once) instead of rejecting */
  retry: boolean;
  /** with retry: a failure that cannot go away by itself (the server refused to start) gives up at once */
  failFast?: boolean;
  /** priority in the start queue (START_PRIORITY) */
  priority?: number;
}
