/**
 * The runner seam: how the engine starts, watches and stops the instances of its deployments,
 * whatever runs them. The supervision around it (health checks on an interval, restarts with
 * back-off, draining, scaling) is the engine's own (deployments/instance.ts) and means the same
 * on every runner. Today's runner runs each instance as a child process of the engine
 * (process-runner.ts).
 */

import type { Orchestrator } from './orchestrator.js';

/** The runner cannot be used as configured; the message says what to change. */
export class RunnerConfigError extends Error {
  override readonly name = 'RunnerConfigError';
}

/**
 * What identifies an instance wherever it runs. A runner marks each instance with these, so that
 * after an engine restart it finds the ones it still runs (and no instance is left behind).
 */
export interface InstanceLabels {
  /** the engine's home (MCPCTL_HOME): instances of other engines on the same host are never touched */
  engine: string;
  deployment: string;
  instance: string;
}

export interface InstanceLimits {
  /** how long the start may take until the instance listens */
  startTimeoutMs: number;
}

export interface StartInstanceSpec {
  labels: InstanceLabels;
  /** the content-addressed bundle the instance serves */
  bundleDir: string;
  /** the instance's environment (a deployment's env_vars) */
  env: Record<string, string>;
  logLevel: 'debug' | 'info';
  limits: InstanceLimits;
  /** the deployment's `resources`, for a runner that enforces them (docker); its defaults otherwise */
  resources?: { memoryMb?: number; cpus?: number };
  /**
   * A folder on the engine's host the deployment's instances share for the state of their tasks:
   * the runner lets each instance write there (and tells it where, in MCPCTL_TASKS_DIR).
   */
  tasksDir?: string;
  /** every line the instance writes once it listens (JSON log lines, and stderr as it is) */
  onLog(line: string): void;
}

/** How an instance ended. */
export interface ExitInfo {
  code: number | null;
  signal: string | null;
}

/** One running instance, as its runner sees it. */
export interface RunnerInstance {
  readonly labels: InstanceLabels;
  /** the process id, where the instance is a process on this host */
  readonly pid: number | undefined;
  /** where the gateway reaches it */
  readonly host: string;
  readonly port: number;
  /** a Unix socket it also listens on (the process runner's instances): the gateway reaches it there */
  readonly socketPath?: string;
  /** settles when it ends, however it ends */
  readonly exited: Promise<ExitInfo>;
  /** asks it to stop (in-flight requests finish), then kills it after `graceMs`; resolves once it is gone */
  stop(graceMs: number): Promise<void>;
  /** one health check: true when it answers within `timeoutMs` */
  health(timeoutMs: number): Promise<boolean>;
}

/** An instance a runner found still running for an engine (after that engine restarted). */
export interface FoundInstance {
  readonly labels: InstanceLabels;
  readonly pid: number | undefined;
  /**
   * Takes it over (its logs, its exit, its stop) when this runner can; undefined when it cannot,
   * and then the engine stops it and starts a new one.
   */
  adopt(onLog: (line: string) => void): Promise<RunnerInstance | undefined>;
  /** stops it (the grace period of a normal stop) */
  stop(graceMs: number): Promise<void>;
}

/**
 * Why a start failed. `transient` when trying again may work (a time-out on a busy machine, a
 * kill); false when it will not (the server refused to start: its definition cannot be served).
 */
export class RunnerStartError extends Error {
  override readonly name = 'RunnerStartError';
  constructor(
    message: string,
    readonly transient: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface Runner {
  /** `process` or `docker` */
  readonly kind: string;
  /**
   * What is done once per bundle before its instances start (the Docker runner builds its image),
   * outside the start time-out; rejects with RunnerStartError. Optional.
   */
  prepare?(bundleDir: string): Promise<void>;
  /** starts an instance and resolves once it listens (not yet once it is healthy); rejects with RunnerStartError */
  start(spec: StartInstanceSpec): Promise<RunnerInstance>;
  /** the instances of the engine with this home that run now (after an engine restart) */
  find(engine: string): Promise<FoundInstance[]>;
  /**
   * Removes what the runner keeps for a deployment beyond its instances (the Docker runner's task
   * volume) once the deployment is removed; nothing there is not done. Optional.
   */
  forget?(engine: string, deployment: string): Promise<void>;
  /** releases what the runner holds (a connection to its daemon) once the engine has stopped its instances */
  close?(): Promise<void>;
  /**
   * What runs whole deployments of some environments instead (orchestrator.ts): the docker runner
   * on a Swarm manager has one for production. Optional.
   */
  readonly orchestrator?: Orchestrator;
}

/** What runs a deployment of `environment` on this runner: its orchestrator's kind when it takes that environment. */
export function runnerKindFor(runner: Runner, environment: string): string {
  return runner.orchestrator?.handles(environment) === true ? runner.orchestrator.kind : runner.kind;
}
