/**
 * A Kubernetes Deployment's rollout as one of the spec's deployment states, with the reason a user
 * reads. The same reading `kubectl rollout status` makes (observedGeneration first, then the
 * Progressing condition, then updated, old and available replicas), plus what only the pods say
 * early: an image that cannot be pulled, a Secret key that is missing, a container that keeps
 * crashing, a pod no node takes (a claim that cannot bind). Pure: the runner reads the objects, this decides.
 */

/** What is read of a Deployment (apps/v1), structurally: the API's own field names. */
export interface DeploymentView {
  metadata?: { generation?: number; deletionTimestamp?: unknown };
  spec?: { replicas?: number; paused?: boolean };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** What is read of a pod of the Deployment. */
export interface PodView {
  metadata?: { name?: string; deletionTimestamp?: unknown };
  status?: {
    phase?: string;
    /** PodScheduled False with reason Unschedulable: no node takes it (a claim that cannot bind, no room) */
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: {
      name?: string;
      restartCount?: number;
      state?: {
        waiting?: { reason?: string; message?: string };
        terminated?: { reason?: string; exitCode?: number; message?: string };
      };
      lastState?: { terminated?: { reason?: string; exitCode?: number; message?: string } };
    }[];
  };
}

export type RolloutState = 'deploying' | 'deployed' | 'failed';

export interface Rollout {
  state: RolloutState;
  /** one sentence: what the rollout waits for, or why it failed */
  reason: string;
  replicas: { desired: number; updated: number; ready: number; available: number };
}

/** Pod reasons that no wait mends: the rollout has failed. */
const FATAL_WAITING = new Set([
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
]);
/** Pod reasons that may pass (a registry down for a moment, a dependency starting): said, and waited for. */
const PASSING_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'CrashLoopBackOff',
  'RunContainerError',
  'ContainerCannotRun',
]);

/**
 * The state of a rollout. `wanted` is the least number of available instances that makes it
 * deployed (the deployment's min_instances): with an autoscaler the Deployment may start with fewer
 * replicas than that until the autoscaler raises them. `deployment` undefined: it does not exist.
 */
export function rolloutState(deployment: DeploymentView | undefined, pods: PodView[] = [], wanted = 1): Rollout {
  const status = deployment?.status ?? {};
  const desired = Math.max(deployment?.spec?.replicas ?? 1, 0);
  const replicas = {
    desired,
    updated: status.updatedReplicas ?? 0,
    ready: status.readyReplicas ?? 0,
    available: status.availableReplicas ?? 0,
  };
  const result = (state: RolloutState, reason: string): Rollout => ({ state, reason, replicas });

  if (deployment === undefined) return result('failed', 'the Deployment does not exist (deleted outside mcpctl?)');
  if (deployment.metadata?.deletionTimestamp !== undefined && deployment.metadata.deletionTimestamp !== null)
    return result('failed', 'the Deployment is being deleted');
  const generation = deployment.metadata?.generation ?? 0;
  if ((status.observedGeneration ?? 0) < generation)
    return result('deploying', 'waiting for the Deployment controller to see the new version');
  if (deployment.spec?.paused === true) return result('deploying', 'the rollout is paused (kubectl rollout resume)');

  const progressing = condition(deployment, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    const cause = podProblem(pods);
    return result(
      'failed',
      `the rollout made no progress before its deadline${cause === undefined ? '' : `: ${cause.text}`}`,
    );
  }
  const problem = podProblem(pods);
  if (problem?.fatal === true) return result('failed', problem.text);

  const want = Math.max(desired, wanted);
  const waiting = (text: string) => result('deploying', problem === undefined ? text : `${text}; ${problem.text}`);
  const replicaFailure = condition(deployment, 'ReplicaFailure');
  if (replicaFailure?.status === 'True')
    return waiting(`pods cannot be created: ${replicaFailure.message ?? replicaFailure.reason ?? 'ReplicaFailure'}`);
  if (replicas.updated < desired) return waiting(`${replicas.updated} of ${desired} instances updated`);
  const old = (status.replicas ?? 0) - replicas.updated;
  if (old > 0) return waiting(`${old} old ${old === 1 ? 'instance is' : 'instances are'} still stopping`);
  if (replicas.available < replicas.updated || replicas.available < want)
    return waiting(`${replicas.available} of ${want} instances available`);
  return result('deployed', `${replicas.available} of ${want} instances available`);
}

function condition(deployment: DeploymentView, type: string) {
  return deployment.status?.conditions?.find((c) => c.type === type);
}

/** The first thing a pod of the rollout says is wrong, and whether waiting can mend it. */
export function podProblem(pods: PodView[]): { fatal: boolean; text: string } | undefined {
  let passing: { fatal: boolean; text: string } | undefined;
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) continue;
    const name = pod.metadata?.name ?? 'a pod';
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable')
      passing ??= { fatal: false, text: `${name}: Unschedulable: ${oneLine(scheduled.message ?? 'no node takes it')}` };
    for (const container of pod.status?.containerStatuses ?? []) {
      const waiting = container.state?.waiting;
      const reason = waiting?.reason;
      if (reason === undefined) continue;
      const last = container.lastState?.terminated;
      const detail =
        waiting?.message ??
        (last === undefined
          ? undefined
          : `last exit ${last.exitCode ?? '?'}${last.reason === undefined ? '' : ` (${last.reason})`}`);
      const text = `${name}: ${reason}${detail === undefined || detail === '' ? '' : `: ${oneLine(detail)}`}`;
      if (FATAL_WAITING.has(reason)) return { fatal: true, text };
      if (PASSING_WAITING.has(reason)) passing ??= { fatal: false, text };
    }
  }
  return passing;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}

/** How many instances serve now: the available replicas (ready for minReadySeconds), whatever the version. */
export function availableInstances(deployment: DeploymentView | undefined): number {
  return deployment?.status?.availableReplicas ?? 0;
}
