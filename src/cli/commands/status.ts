/**
 * `mcpctl status <deployment_id> [--watch]`: the status of a deployment, or, with `--watch`,
 * followed until it settles (steps/deployment-wait.ts).
 */
import { DEPLOYMENT_ID_PATTERN, type Deployment } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { UserError } from '../../shared/errors.js';
import { describeProgress } from '../render/deployment.js';
import { formatSeconds } from '../render/format.js';
import { serviceText } from '../render/service-text.js';
import { followDeployment, reportDeployment } from '../steps/deployment-wait.js';
import type { StatusOptions } from '../specs/service.js';

function headingFor(answer: Deployment): string {
  const d = { ...answer, deployment_id: serviceText(answer.deployment_id) };
  const env = d.environment === undefined ? '' : ` (${serviceText(d.environment)})`;
  switch (d.status) {
    case 'deployed':
      return `${d.deployment_id} is deployed${env}`;
    case 'deploying':
      return `${d.deployment_id} is deploying${env}`;
    case 'failed':
      return `${d.deployment_id} failed${env}`;
    case 'stopped':
      return `${d.deployment_id} is stopped${env}`;
  }
}

export async function statusCommand(ctx: CommandContext, deploymentId: string, options: StatusOptions): Promise<void> {
  if (!DEPLOYMENT_ID_PATTERN.test(deploymentId)) {
    throw new UserError(`not a deployment id: ${deploymentId}`, {
      hint: deploymentId.startsWith('mcp_')
        ? 'that is a server id; `mcpctl ls` shows its deployments'
        : 'deployment ids look like deploy_9x2m4k7q1c; `mcpctl ls` lists them',
    });
  }
  const timeoutSeconds = options.timeout ?? 600;
  const outcome = await withApi(ctx, async (client) => {
    const first = await client.status(deploymentId);
    const deployment = first.deployment!;
    if (options.watch !== true || deployment.status !== 'deploying') return { deployment, end: 'settled' as const };
    const progress = await ctx.out.progress(describeProgress(deployment));
    const result = await followDeployment(ctx, client, progress, deployment, {
      timeoutSeconds,
      etag: first.etag,
      messages: {
        deployed: (d) => describeProgress(d),
        timeout: () => `still deploying after ${formatSeconds(timeoutSeconds) ?? ''}`,
      },
    });
    return result;
  });
  reportDeployment(ctx, outcome, { heading: headingFor(outcome.deployment), timeoutSeconds, quiet: 'status' });
}
