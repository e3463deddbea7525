/**
 * `mcpctl deploy <mcp_id|file>`: build the file first if one is given, assemble the deployment
 * config (the file's `deploy:` section with `${VAR}` resolved now, then flags), POST /v1/deploy
 * asking for an asynchronous answer, and follow the deployment until it settles.
 */
import { MCP_ID_PATTERN, type Environment } from '../../api/contract.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { describeProgress } from '../render/deployment.js';
import { formatSeconds } from '../render/format.js';
import { buildDefinition, loadDefinitionFile, type DefinitionFile } from '../steps/definition-file.js';
import { applyDeployFlags, configFromDefinition, locateDeployField, readEnvFile, type DeployFlags } from '../steps/deploy-config.js';
import { reportDeployment, waitForDeployment } from '../steps/deployment-wait.js';

export type DeployCommandOptions = DeployFlags;

export async function deployCommand(ctx: CommandContext, target: string, options: DeployCommandOptions = {}): Promise<void> {
  const byId = MCP_ID_PATTERN.test(target);
  const file: DefinitionFile | undefined = byId ? undefined : await loadDefinitionFile(ctx, target);
  const defaults = file?.loaded.definition.deploy;
  const environment: Environment = options.env ?? defaults?.environment ?? 'development';
  // Everything local is checked before the first request: a missing variable builds nothing.
  const replaced = new Set([...(options.envVar ?? []), ...(options.envFile === undefined ? [] : Object.keys(await readEnvFile(options.envFile, ctx.io.cwd)))]);
  const config = await applyDeployFlags(await configFromDefinition(defaults, environment, ctx.io.env, { replaced }), options, ctx.io);
  const timeoutSeconds = options.timeout ?? 600;
  const key = options.idempotencyKey;

  const outcome = await withApi(
    ctx,
    async (client) => {
      const mcpId = file === undefined ? target : (await buildDefinition(ctx, client, file, { idempotencyKey: key === undefined ? undefined : `${key}.build` })).mcp_id;
      const progress = await ctx.out.progress(`deploying ${mcpId} to ${environment}`);
      let answer;
      try {
        answer = await client.deploy(
          { mcp_id: mcpId, environment, ...(Object.keys(config).length === 0 ? {} : { config }) },
          { async: true, ...(key === undefined ? {} : { idempotencyKey: key }) },
        );
      } catch (error) {
        progress.fail();
        throw error;
      }
      const deployment = answer.deployment;
      if (options.wait === false || deployment.status !== 'deploying') {
        if (deployment.status === 'deployed') progress.succeed(`deployed ${deployment.deployment_id} in ${formatSeconds(deployment.deploy_time) ?? '?'}`);
        else if (deployment.status === 'failed') progress.fail(`${deployment.deployment_id} failed`);
        else progress.stop();
        return { deployment, end: 'settled' as const };
      }
      progress.update(describeProgress(deployment));
      const result = await waitForDeployment(client, deployment, {
        timeoutMs: timeoutSeconds * 1000,
        signal: ctx.signal,
        onChange: (d) => {
        if (d.status === 'deploying') progress.update(describeProgress(d));
      },
      });
      const d = result.deployment;
      if (result.end === 'interrupted') progress.stop();
      else if (result.end === 'timeout') progress.warn(`${d.deployment_id} still deploying after ${formatSeconds(timeoutSeconds) ?? ''}`);
      else if (d.status === 'deployed') progress.succeed(`deployed ${d.deployment_id} in ${formatSeconds(d.deploy_time) ?? '?'}`);
      else progress.fail();
      return result;
    },
    file === undefined ? {} : { locate: locateDeployField(file, environment, options) },
  );

  const d = outcome.deployment;
  const name = file?.loaded.definition.name ?? d.mcp_id ?? target;
  const heading =
    d.status === 'deployed'
      ? `Deployed ${name} to ${d.environment ?? environment}`
      : d.status === 'deploying'
        ? `Deployment ${d.deployment_id} of ${name} accepted (deploying)`
        : d.status === 'failed'
          ? `Deployment ${d.deployment_id} of ${name} failed`
          : `Deployment ${d.deployment_id} of ${name} is ${d.status}`;
  reportDeployment(ctx, outcome, { heading, timeoutSeconds });
}
