/** `mcpctl build <file>`: load a definition, send it to POST /v1/build, show the built server. */
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { publishToGithub } from '../github.js';
import { shellQuote } from '../render/format.js';
import { chooseDefinition } from '../steps/definition-path.js';
import { buildDefinition, loadDefinitionFile, renderServerFields } from '../steps/definition-file.js';
import type { BuildOptions } from '../specs/service.js';

export async function buildCommand(
  ctx: CommandContext,
  given: string | undefined,
  options: BuildOptions,
): Promise<void> {
  const definition = await loadDefinitionFile(ctx, await chooseDefinition(ctx, given));
  const server = await withApi(
    ctx,
    (client) => buildDefinition(ctx, client, definition, { idempotencyKey: options.idempotencyKey }),
    {
      locate: definition.locate,
    },
  );
  await publishToGithub(ctx.io, (text) => ctx.out.warn(text), {
    outputs: { mcp_id: server.mcp_id, url: server.url, status: server.status },
  });
  const firstCase = definition.loaded.definition.tests?.cases[0]?.message;
  // a deploy by id knows nothing of the file: the variables the server needs go as flags
  const { requiredEnvVars } = await import('../../definition/env-refs.js');
  const envFlags = requiredEnvVars(definition.loaded.definition)
    .map((v) => ` --env-var ${v.name}`)
    .join('');
  ctx.out.result(
    server,
    (p) => {
      p.success(`${server.reused === true ? 'Reused' : 'Built'} ${server.name} (${server.mcp_id})`);
      renderServerFields(p, server);
      p.next(`mcpctl deploy ${server.mcp_id} --env development${envFlags}`);
      p.next(`mcpctl test ${server.mcp_id} -m ${shellQuote(firstCase ?? 'What can you do?')}`);
    },
    { quiet: () => server.mcp_id },
  );
}
