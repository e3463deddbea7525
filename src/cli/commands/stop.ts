/**
 * `mcpctl stop [deployment]`: POST /v1/deploy/{id}/stop, then the stopped deployment.
 *
 * Stopping is what a user asks to be true, not a transition to perform: a deployment that is
 * already stopped (or failed, so nothing of it runs) is a success that says so. The service
 * answers those with 409; the current state decides.
 */
import { ApiError } from '../../api/errors.js';
import type { Deployment } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { renderDeploymentFields } from '../render/deployment.js';
import { deploymentIdOf } from '../steps/deployment-target.js';
import type { StopOptions } from '../specs/service.js';

export interface StopOutcome {
  deployment: Deployment;
  /** true when nothing was running: the deployment was stopped or failed before */
  already: boolean;
}

export async function stopCommand(
  ctx: CommandContext,
  target: string | undefined,
  options: StopOptions,
): Promise<void> {
  const deploymentId = await deploymentIdOf(ctx, target, { file: options.file, command: 'stop' });
  const { deployment, already } = await withApi(ctx, async (client): Promise<StopOutcome> => {
    try {
      const stopped = await client.stop(
        deploymentId,
        options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey },
      );
      return { deployment: stopped, already: false };
    } catch (error) {
      if (!(error instanceof ApiError && error.kind === 'http' && error.status === 409 && !error.stillRunning))
        throw error;
      const current = (await client.status(deploymentId)).deployment;
      if (current === undefined || (current.status !== 'stopped' && current.status !== 'failed')) throw error;
      return { deployment: current, already: true };
    }
  });
  const id = deployment.deployment_id;
  ctx.out.result(deployment, (p) => {
    if (!already) p.success(`Stopped ${id}`);
    else if (deployment.status === 'stopped') p.success(`${id} is already stopped; nothing to do`);
    else p.success(`${id} has failed: none of it runs, nothing to stop`);
    renderDeploymentFields(p, deployment);
    p.next(`its log stays readable: mcpctl logs ${id}`);
  });
}
