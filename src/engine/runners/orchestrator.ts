/**
 * The orchestrator seam: how the engine hands a whole deployment to a system that runs it by
 * itself (a Docker Swarm service, a Kubernetes Deployment), instead of supervising its instances
 * one by one through a Runner (runner.ts). The orchestrator keeps the replicas running, restarts
 * them, rolls a new version out health-gated and rolls back by itself; the engine applies the
 * deployment's spec, maps the rollout to the deployment's states, routes the gateway to the
 * endpoints the orchestrator reports, follows their logs, and removes what it created.
 *
 * One workload per server and environment (a service, a Deployment), named and labelled so that a
 * restarted engine finds it: a redeploy of the same server and environment updates that workload
 * (the orchestrator rolls), and the deployment that last applied its spec owns it.
 *
 * Called from deployments/live-deployment.ts (launch, stop, scale, views) and deployments/restore.ts
 * (find and take over after an engine restart); chosen in runners/select.ts next to the runner.
 */

/** What a workload belongs to; an orchestrator keeps these as labels of the workload and its replicas. */
export interface WorkloadLabels {
  /** the engine's home (MCPCTL_HOME): workloads of other engines on the same cluster are never touched */
  engine: string;
  /** the server's name and the environment: one workload per pair */
  server: string;
  environment: string;
  /** the deployment whose spec it runs now (a redeploy changes it; a rollback by the orchestrator restores the old one) */
  deployment: string;
}

export interface WorkloadSpec {
  labels: WorkloadLabels;
  /** the content-addressed bundle (the orchestrator runs its image: prepare() built it) */
  bundleDir: string;
  /** the environment of every replica (a deployment's env_vars) */
  env: Record<string, string>;
  logLevel: 'debug' | 'info';
  /** how many replicas */
  replicas: number;
  /** the deployment's `resources` (memory and CPU limits of each replica); the orchestrator's defaults otherwise */
  resources?: { memoryMb?: number; cpus?: number };
  /** the deployment's domain, for an orchestrator that routes it itself (Kubernetes: an Ingress with a certificate) */
  domain?: string;
  /**
   * The definition has tools that run as tasks: the replicas keep the tasks' state where each of
   * them sees it (MCPCTL_TASKS_DIR), as far as the orchestrator can. `maxReplicas`: the most the
   * engine may scale the workload to (the deployment's max_instances).
   */
  tasks?: { maxReplicas: number };
}

/**
 * Where a rollout is, in words common to orchestrators (Swarm's UpdateStatus, Kubernetes'
 * Deployment conditions):
 * - `progressing`: replicas of the new spec are starting (a create, or an update under way)
 * - `completed`: every replica runs the new spec and is healthy → the deployment is `deployed`
 * - `rolling_back`: the orchestrator gave up on the new spec and is going back to the previous one
 * - `rolled_back`: it is back on the previous spec → the new deployment is `failed`, the previous one stays live
 * - `failed`: the new spec did not come up and there is nothing to roll back to (a first deploy) → `failed`
 * - `paused`: the rollout stopped half-way and waits for someone → `failed` (the engine does not wait)
 */
export type RolloutPhase = 'progressing' | 'completed' | 'rolling_back' | 'rolled_back' | 'failed' | 'paused';

export interface RolloutStatus {
  phase: RolloutPhase;
  /**
   * the orchestrator's explanation; for `rolled_back` and `failed` it becomes the deployment's
   * reason, so it says who rolled back and why: "Swarm rolled the update back: task … non-zero exit (1); last output: …"
   */
  message?: string;
}

/** One replica the gateway may route to. */
export interface Endpoint {
  /** stable for the replica's life (a task id, a pod name): the gateway tells replicas apart by it */
  readonly id: string;
  readonly host: string;
  readonly port: number;
  /** the deployment whose spec the replica runs (during a rollout both the old and the new one run) */
  readonly deployment: string;
  /**
   * true while the orchestrator wants it running and it runs (not once it is being shut down);
   * the engine also checks /health itself before it routes to a new one
   */
  readonly running: boolean;
  /** the orchestrator's word for its state (running, starting, shutdown, …), shown as the instance's state */
  readonly state: string;
}

export interface WorkloadHooks {
  /** a line a replica wrote (JSON log lines, and stderr as it is), with the replica's id */
  onLog(line: string, endpoint: string): void;
  /** the endpoints or the rollout changed */
  onChange(): void;
  /** something the user should know about how the workload runs (a warning in the deployment's log) */
  onNotice?(message: string): void;
}

/** One deployment's handle on its workload. */
export interface Workload {
  readonly labels: WorkloadLabels;
  /** where the rollout of this deployment's spec is now */
  rollout(): RolloutStatus;
  /** the replicas of the workload now (all of them: during a rollout, old and new) */
  endpoints(): Endpoint[];
  /** one health check of an endpoint: true when it answers within `timeoutMs` */
  health(endpoint: Endpoint, timeoutMs: number): Promise<boolean>;
  /** sets the number of replicas (the autoscaler) */
  scale(replicas: number): Promise<void>;
  /**
   * Removes the workload if this deployment still owns it (its spec is the one applied), and
   * resolves once its replicas are gone; when a newer deployment took the workload over (or the
   * orchestrator rolled back to an older one), it only stops watching. `graceMs`: each replica's
   * stop grace period.
   */
  remove(graceMs: number): Promise<void>;
  /** stops watching and following logs, and leaves the workload as it is */
  release(): void;
}

/** A workload of an engine found on the cluster (after that engine restarted). */
export interface FoundWorkload {
  readonly labels: WorkloadLabels;
  /** removes it and its replicas */
  remove(graceMs: number): Promise<void>;
}

export interface Orchestrator {
  /** `swarm` or `kubernetes`: the deployment's `runner` */
  readonly kind: string;
  /** what it takes, for `mcpctl engine status`: `production as Swarm services (spread over node.labels.region)` */
  readonly summary?: string;
  /** whether it runs deployments of this environment (the others go to the engine's runner) */
  handles(environment: string): boolean;
  /** what is done once per bundle before its workload is applied (build, push the image); rejects with a message */
  prepare?(bundleDir: string): Promise<void>;
  /**
   * Creates the workload of `spec.labels.server` and `.environment`, or updates it to this spec
   * (a rollout); resolves once the orchestrator accepted it, with a handle that reports the rollout.
   */
  apply(spec: WorkloadSpec, hooks: WorkloadHooks): Promise<Workload>;
  /**
   * After an engine restart: a handle on the workload that runs `labels.deployment`'s spec now,
   * without changing it (no rollout); undefined when there is none.
   */
  adopt(labels: WorkloadLabels, hooks: WorkloadHooks): Promise<Workload | undefined>;
  /** every workload of the engine with this home */
  find(engine: string): Promise<FoundWorkload[]>;
  /** releases what it holds (connections) once the engine has stopped its deployments */
  close?(): Promise<void>;
}

/** Whether a rollout is over, and how: the deployment's state it leads to. */
export function rolloutOutcome(
  status: RolloutStatus,
): { done: false } | { done: true; deployed: true } | { done: true; deployed: false; reason: string } {
  switch (status.phase) {
    case 'completed':
      return { done: true, deployed: true };
    case 'rolled_back':
      return { done: true, deployed: false, reason: status.message ?? 'the orchestrator rolled it back' };
    case 'failed':
      return { done: true, deployed: false, reason: status.message ?? 'its replicas did not come up' };
    case 'paused':
      return {
        done: true,
        deployed: false,
        reason: `the rollout paused${status.message === undefined ? '' : `: ${status.message}`}`,
      };
    default:
      return { done: false };
  }
}
