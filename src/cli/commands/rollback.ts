/**
 * `mcpctl rollback <deployment_id>`: POST /v1/deploy/{id}/rollback asking for an asynchronous
 * answer, then follow the new deployment like `deploy` does (spinner, long-poll, exit codes).
 */
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { formatSeconds } from '../render/format.js';
import { requireDeploymentId } from '../steps/deployment-id.js';
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
  deploymentId: string,
  options: RollbackOptions,
): Promise<void> {
  requireDeploymentId(deploymentId);
  const timeoutSeconds = options.timeout ?? 600;
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
  const d = outcome.deployment;
  const heading =
    d.status === 'deployed'
      ? `Rolled back ${deploymentId}: ${d.deployment_id} runs ${d.mcp_id ?? 'the earlier build'}`
      : d.status === 'deploying'
        ? `Rollback of ${deploymentId} accepted: ${d.deployment_id} is deploying`
        : `Rollback of ${deploymentId} failed: ${d.deployment_id} is ${d.status}`;
  reportDeployment(ctx, outcome, { heading, timeoutSeconds });
}
