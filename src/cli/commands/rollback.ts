/**
 * `mcpctl rollback <deployment_id>`: POST /v1/deploy/{id}/rollback asking for an asynchronous
 * answer, then follow the new deployment like `deploy` does (spinner, long-poll, exit codes).
 */
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { describeProgress } from '../render/deployment.js';
import { formatSeconds } from '../render/format.js';
import { requireDeploymentId } from '../steps/deployment-id.js';
import { reportDeployment, waitForDeployment, type WaitOutcome } from '../steps/deployment-wait.js';

export interface RollbackCommandOptions {
  /** false with --no-wait */
  wait?: boolean;
  /** seconds */
  timeout?: number;
  idempotencyKey?: string;
}

export async function rollbackCommand(ctx: CommandContext, deploymentId: string, options: RollbackCommandOptions = {}): Promise<void> {
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
    const result =
      ctx.signal.aborted && first.status === 'deploying'
        ? { deployment: first, end: 'interrupted' as const }
        : options.wait === false || first.status !== 'deploying'
        ? { deployment: first, end: 'settled' as const }
        : (progress.update(describeProgress(first)),
          await waitForDeployment(client, first, {
            timeoutMs: timeoutSeconds * 1000,
            signal: ctx.signal,
            etag: answer.etag,
            onChange: (d) => {
              if (d.status === 'deploying') progress.update(describeProgress(d));
            },
          }));
    const d = result.deployment;
    if (result.end === 'interrupted' || (result.end === 'settled' && d.status === 'deploying')) progress.stop();
    else if (result.end === 'timeout') progress.warn(`${d.deployment_id} still deploying after ${formatSeconds(timeoutSeconds) ?? ''}`);
    else if (d.status === 'deployed') progress.succeed(`rolled back: ${d.deployment_id} deployed in ${formatSeconds(d.deploy_time) ?? '?'}`);
    else progress.fail(`${d.deployment_id} failed`);
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
