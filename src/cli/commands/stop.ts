/** `mcpctl stop <deployment_id>`: POST /v1/deploy/{id}/stop, then the stopped deployment. */
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { renderDeploymentFields } from '../render/deployment.js';
import { requireDeploymentId } from '../steps/deployment-id.js';

export interface StopCommandOptions {
  idempotencyKey?: string;
}

export async function stopCommand(ctx: CommandContext, deploymentId: string, options: StopCommandOptions = {}): Promise<void> {
  requireDeploymentId(deploymentId);
  const deployment = await withApi(ctx, (client) =>
    client.stop(deploymentId, options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
  );
  ctx.out.result(
    deployment,
    (p) => {
      if (ctx.out.quiet) p.line(deployment.deployment_id);
      else {
        p.success(`Stopped ${deployment.deployment_id}`);
        renderDeploymentFields(p, deployment);
        p.next(`its log stays readable: mcpctl logs ${deployment.deployment_id}`);
      }
    },
    { always: true },
  );
}
