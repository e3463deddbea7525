/** The deployment state machine of docs/api.md. Pure. */
import type { Deployment, DeploymentState } from '../../api/contract.js';

const NEXT: Record<DeploymentState, readonly DeploymentState[]> = {
  deploying: ['deployed', 'failed'],
  deployed: ['failed', 'stopped'],
  failed: [],
  stopped: [],
};

export function canTransition(from: DeploymentState, to: DeploymentState): boolean {
  return NEXT[from].includes(to);
}

/** States in which a deployment holds (or is starting) instances. */
export function isActive(status: DeploymentState): boolean {
  return status === 'deploying' || status === 'deployed';
}

/**
 * Records a transition on `deployment` (which it changes): status, the transition with its time
 * and reason, `deploy_time` when a deploy settles, and the stage. The caller checks
 * `canTransition` first.
 */
export function applyTransition(deployment: Deployment, to: DeploymentState, now: number, reason?: string): void {
  const at = new Date(now).toISOString();
  if (deployment.status === 'deploying' && deployment.created_at !== undefined) {
    deployment.deploy_time = Math.max(0, Math.round((now - Date.parse(deployment.created_at)) / 10) / 100);
  }
  deployment.status = to;
  deployment.transitions = [
    ...(deployment.transitions ?? []),
    { status: to, at, ...(reason === undefined ? {} : { reason }) },
  ];
  if (reason !== undefined) deployment.reason = reason;
  deployment.stage = to === 'deployed' ? 'running' : to;
  deployment.updated_at = at;
}

/**
 * The stage shown while a new state is on its way to the disk: answers still show the state on
 * disk, and the stage says what comes, not where the deployment was (`queued` when every instance
 * is already healthy).
 */
export function pendingStage(to: DeploymentState): string {
  switch (to) {
    case 'deployed':
      return 'instances healthy, going live';
    case 'failed':
      return 'failing';
    case 'stopped':
      return 'stopping';
    case 'deploying':
      return 'starting';
  }
}

/** Whether a deployment has ever been `deployed` (a candidate to roll back to). */
export function wasDeployed(deployment: Deployment): boolean {
  return (deployment.transitions ?? []).some((transition) => transition.status === 'deployed');
}
