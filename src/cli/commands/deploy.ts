/**
 * `mcpctl deploy <mcp_id|file>`: build the file first if one is given, assemble the deployment
 * config (the file's `deploy:` section with `${VAR}` resolved now, then flags), POST /v1/deploy
 * asking for an asynchronous answer, and follow the deployment until it settles.
 */
import { MCP_ID_PATTERN } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { publishToGithub } from '../github.js';
import { deploymentSummary } from '../render/ci-summary.js';
import { chooseDefinition } from '../steps/definition-path.js';
import { buildDefinition, loadDefinitionFile, type DefinitionFile } from '../steps/definition-file.js';
import { locateDeployField } from '../steps/deploy-config.js';
import { deploymentHeading, deploymentOutputs, deployServer, planDeployment } from '../steps/deploy-server.js';
import { reportDeployment } from '../steps/deployment-wait.js';
import { checkReplacement, describeReplaced, type Replaced } from '../steps/replacement.js';
import type { DeployOptions } from '../specs/service.js';

export async function deployCommand(
  ctx: CommandContext,
  given: string | undefined,
  options: DeployOptions,
): Promise<void> {
  const byId = given !== undefined && MCP_ID_PATTERN.test(given);
  const target = byId ? given : await chooseDefinition(ctx, given);
  const file: DefinitionFile | undefined = byId ? undefined : await loadDefinitionFile(ctx, target);
  // Everything local is checked before the first request: a missing variable builds nothing.
  const plan = await planDeployment(ctx, file, options);
  const timeoutSeconds = options.timeout ?? 600;
  const key = options.idempotencyKey;
  let replaced: Replaced | undefined;

  const outcome = await withApi(
    ctx,
    async (client) => {
      const mcpId =
        file === undefined
          ? target
          : (
              await buildDefinition(ctx, client, file, {
                idempotencyKey: key === undefined ? undefined : `${key}.build`,
              })
            ).mcp_id;
      replaced = await checkReplacement(ctx, client, {
        server: file?.loaded.definition.name ?? (await client.getServer(mcpId)).name,
        environment: plan.environment,
        mcpId,
        file: file?.loaded.file,
        replace: options.replace === true,
      });
      return deployServer(ctx, client, mcpId, plan, { wait: options.wait, timeoutSeconds, idempotencyKey: key });
    },
    { env: ctx.io.env, ...(file === undefined ? {} : { locate: locateDeployField(file, plan.environment, options) }) },
  );

  const d = outcome.deployment;
  const name = file?.loaded.definition.name ?? d.mcp_id ?? target;
  await publishToGithub(ctx.io, (text) => ctx.out.warn(text), {
    summary: deploymentSummary(d, name),
    outputs: deploymentOutputs(d, byId ? target : undefined),
  });
  // a repeated request (the same idempotency key) answers with the deployment found running
  const also =
    replaced === undefined || replaced.deployment_id === d.deployment_id
      ? undefined
      : { key: 'replaced', data: replaced, line: describeReplaced(replaced) };
  reportDeployment(ctx, outcome, { heading: deploymentHeading(d, name, plan.environment), timeoutSeconds, also });
}
