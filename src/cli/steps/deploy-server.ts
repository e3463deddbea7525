/**
 * Deploying a built server (`deploy`, `up`): the environment and config settled locally before
 * any request (a missing variable deploys nothing), POST /v1/deploy asking for an asynchronous
 * answer, and the deployment followed with progress until it settles.
 */
import type { ApiClient } from '../../api/client.js';
import type { DeployConfig, Deployment, Environment } from '../../api/operations.js';
import type { CommandContext } from '../context.js';
import { formatSeconds } from '../render/format.js';
import type { DefinitionFile } from './definition-file.js';
import {
  applyDeployFlags,
  checkRequiredEnv,
  configFromDefinition,
  readEnvFile,
  type DeployFlags,
} from './deploy-config.js';
import { endProgress, followDeployment, type EndMessages, type WaitOutcome } from './deployment-wait.js';

export interface DeployPlan {
  environment: Environment;
  config: DeployConfig;
}

/** The environment (flag, else the file's deploy.environment, else development) and the config for it. */
export async function planDeployment(
  ctx: CommandContext,
  file: DefinitionFile | undefined,
  flags: DeployFlags,
): Promise<DeployPlan> {
  const defaults = file?.loaded.definition.deploy;
  const environment: Environment = flags.env ?? defaults?.environment ?? 'development';
  const replaced = new Set([
    ...(flags.envVar ?? []),
    ...(flags.envFile === undefined ? [] : Object.keys(await readEnvFile(flags.envFile, ctx.io.cwd))),
  ]);
  const config = await applyDeployFlags(
    await configFromDefinition(defaults, environment, ctx.io.env, { replaced }),
    flags,
    ctx.io,
  );
  if (file !== undefined) await checkRequiredEnv(file, config, ctx.io.env);
  return { environment, config };
}

/** Deploys `mcpId` and follows it, unless --no-wait, with progress on stderr. */
export async function deployServer(
  ctx: CommandContext,
  client: ApiClient,
  mcpId: string,
  plan: DeployPlan,
  options: { wait?: boolean | undefined; timeoutSeconds: number; idempotencyKey?: string | undefined },
): Promise<WaitOutcome> {
  const { environment, config } = plan;
  const key = options.idempotencyKey;
  const progress = await ctx.out.progress(`deploying ${mcpId} to ${environment}`);
  let answer;
  try {
    // Ctrl-C while the request is on its way still waits for its answer: the deployment it
    // creates goes on, and the user must learn its id.
    answer = await client.deploy(
      { mcp_id: mcpId, environment, ...(Object.keys(config).length === 0 ? {} : { config }) },
      { async: true, finishOnAbort: true, ...(key === undefined ? {} : { idempotencyKey: key }) },
    );
  } catch (error) {
    progress.fail();
    throw error;
  }
  const deployment = answer.deployment;
  if (ctx.signal.aborted && deployment.status === 'deploying') {
    progress.stop();
    return { deployment, end: 'interrupted' as const };
  }
  const messages: EndMessages = {
    deployed: (d) => `deployed ${d.deployment_id} in ${formatSeconds(d.deploy_time) ?? '?'}`,
    timeout: (d) => `${d.deployment_id} still deploying after ${formatSeconds(options.timeoutSeconds) ?? ''}`,
  };
  if (options.wait === false || deployment.status !== 'deploying') {
    const settled = { deployment, end: 'settled' as const };
    endProgress(progress, settled, { ...messages, failed: (d) => `${d.deployment_id} failed` });
    return settled;
  }
  return followDeployment(ctx, client, progress, deployment, {
    timeoutSeconds: options.timeoutSeconds,
    etag: answer.etag,
    messages,
  });
}

/** The heading a settled deployment is shown under. */
export function deploymentHeading(d: Deployment, name: string, environment: Environment): string {
  switch (d.status) {
    case 'deployed':
      return `Deployed ${name} to ${d.environment ?? environment}`;
    case 'deploying':
      return `Deployment ${d.deployment_id} of ${name} accepted (deploying)`;
    case 'failed':
      return `Deployment ${d.deployment_id} of ${name} failed`;
    case 'stopped':
      return `Deployment ${d.deployment_id} of ${name} is ${d.status}`;
  }
}

/** What a pipeline reads from a deployment ($GITHUB_OUTPUT). */
export function deploymentOutputs(d: Deployment, mcpId: string | undefined): Record<string, string | undefined> {
  return { mcp_id: d.mcp_id ?? mcpId, deployment_id: d.deployment_id, url: d.url, status: d.status };
}
