/**
 * `mcpctl status [deployment] [--watch]`: the status of a deployment, or, with `--watch`,
 * followed until it settles (steps/deployment-wait.ts).
 */
import type { Deployment } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { describeProgress } from '../render/deployment.js';
import { formatSeconds } from '../render/format.js';
import { serviceText } from '../render/service-text.js';
import { deploymentIdOf } from '../steps/deployment-target.js';
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

export async function statusCommand(
  ctx: CommandContext,
  target: string | undefined,
  options: StatusOptions,
): Promise<void> {
  const deploymentId = await deploymentIdOf(ctx, target, { file: options.file, command: 'status' });
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
  // The notices (what the service could not honour) were said by the deploy; here only when asked.
  const notices = options.verbose === true;
  reportDeployment(ctx, outcome, { heading: headingFor(outcome.deployment), timeoutSeconds, quiet: 'status', notices });
}
