/**
 * `mcpctl rollback [deployment]`: POST /v1/deploy/{id}/rollback asking for an asynchronous
 * answer, then follow the new deployment like `deploy` does (spinner, long-poll, exit codes).
 * A rollback already done (the service answers `unchanged`) says so and deploys nothing.
 */
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import type { Deployment } from '../../api/operations.js';
import { formatAge, formatSeconds } from '../render/format.js';
import { deploymentIdOf } from '../steps/deployment-target.js';
import {
  endProgress,
  followDeployment,
  reportDeployment,
  type EndMessages,
  type WaitOutcome,
} from '../steps/deployment-wait.js';
import type { RollbackOptions } from '../specs/service.js';

export async function rollbackCommand(
  ctx: CommandContext,
  target: string | undefined,
  options: RollbackOptions,
): Promise<void> {
  const deploymentId = await deploymentIdOf(ctx, target, { file: options.file, command: 'rollback' });
  const timeoutSeconds = options.timeout ?? 600;
  let unchanged = false;
  const outcome = await withApi(ctx, async (client): Promise<WaitOutcome> => {
    const progress = await ctx.out.progress(`rolling back ${deploymentId}`);
    let answer;
    try {
      answer = await client.rollback(deploymentId, {
        async: true,
        finishOnAbort: true,
        ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
      });
    } catch (error) {
      progress.fail();
      throw error;
    }
    const first = answer.deployment;
    // Already rolled back: the answer is the deployment that runs it; the heading says so.
    unchanged = first.unchanged === true;
    if (unchanged && first.status === 'deployed') {
      progress.stop();
      return { deployment: first, end: 'settled' };
    }
    const messages: EndMessages = {
      deployed: (d) => `rolled back: ${d.deployment_id} deployed in ${formatSeconds(d.deploy_time) ?? '?'}`,
      timeout: (d) => `${d.deployment_id} still deploying after ${formatSeconds(timeoutSeconds) ?? ''}`,
      failed: (d) => `${d.deployment_id} failed`,
    };
    if (options.wait !== false && first.status === 'deploying' && !ctx.signal.aborted) {
      return followDeployment(ctx, client, progress, first, { timeoutSeconds, etag: answer.etag, messages });
    }
    const result = {
      deployment: first,
      end: ctx.signal.aborted && first.status === 'deploying' ? ('interrupted' as const) : ('settled' as const),
    };
    endProgress(progress, result, messages);
    return result;
  });
  const d = unchanged ? { ...outcome.deployment, unchanged: true } : outcome.deployment;
  reportDeployment(ctx, { ...outcome, deployment: d }, { heading: rollbackHeading(d, deploymentId), timeoutSeconds });
}

/** `deploy_x (version 1.0.0, mcp_y, made 12 min ago)`: what a rollback went back to, as far as the service says. */
export function describeRollbackTarget(d: Deployment, now: number = Date.now()): string {
  const to = d.rolled_back_to;
  if (to === undefined) return `the build ${d.mcp_id ?? 'before it'}`;
  const age = formatAge(to.created_at, now);
  const about = [
    to.version === undefined ? undefined : `version ${to.version}`,
    to.mcp_id,
    age === undefined ? undefined : `made ${age} ago`,
  ];
  return `${to.deployment_id} (${about.filter((part) => part !== undefined).join(', ')})`;
}

function rollbackHeading(d: Deployment, asked: string): string {
  const target = describeRollbackTarget(d);
  if (d.unchanged === true) {
    return d.status === 'deploying'
      ? `Already rolling back to ${target}: ${d.deployment_id} is deploying it`
      : `Already rolled back to ${target}: ${d.deployment_id} runs it; nothing new was deployed`;
  }
  switch (d.status) {
    case 'deployed':
      return `Rolled back to ${target}: ${d.deployment_id} runs it`;
    case 'deploying':
      return `Rollback of ${asked} to ${target} accepted: ${d.deployment_id} is deploying`;
    default:
      return `Rollback of ${asked} to ${target} failed: ${d.deployment_id} is ${d.status}`;
  }
}
