/**
 * Waiting for a deployment to change, for the answers that hold a request open: the deploy that
 * answers once the deployment settles, and GET /v1/deploy/:id/status?wait= (a long-poll).
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Deployment } from '../../../api/contract.js';
import type { DeploymentService } from '../../services.js';

export interface WaitOptions {
  /** the wait ends once this holds */
  until: (deployment: Deployment) => boolean;
  /** milliseconds since the epoch, on `clock` */
  deadline: number;
  signal: AbortSignal;
  clock: () => number;
}

/**
 * The deployment once `until` holds, or as it is at the deadline or when the client goes away.
 * `first` is the view the wait starts from.
 */
export async function waitForDeployment(
  service: DeploymentService,
  first: Deployment,
  { until, deadline, signal, clock }: WaitOptions,
): Promise<Deployment> {
  const waiting = (deployment: Deployment) => !until(deployment);
  let current = first;
  while (waiting(current) && !signal.aborted) {
    const remaining = deadline - clock();
    if (remaining <= 0) break;
    const before = clock();
    current = (await service.waitForChange(current.deployment_id, remaining, signal, waiting)) ?? current;
    // A service that answers at once without a change must not make this loop spin.
    if (waiting(current) && clock() - before < 5) await sleep(50);
  }
  return current;
}

/**
 * The version of what a client watches: the deployment without the health checks' timestamps,
 * which change every few seconds and would wake every long-poll for nothing.
 */
export function etagOf(deployment: Deployment): string {
  const watched = {
    ...deployment,
    instances: deployment.instances?.map(({ last_check: _lastCheck, ...instance }) => instance),
  };
  return `"${createHash('sha256').update(JSON.stringify(watched)).digest('hex').slice(0, 20)}"`;
}
