/**
 * `mcpctl validate <file>`: checks a definition offline (YAML, schema, semantic checks, files it
 * refers to) and lints it (descriptions an agent cannot choose by). Never touches the network. An
 * invalid definition is the UserError of the loader: every problem as
 * `file:line:column  path  message`, exit 2. Warnings do not fail it.
 */
import type { CommandContext } from '../context.js';
import { annotateProblem } from '../steps/definition-file.js';
import { renderValidation, validateDefinition } from '../steps/validate-definition.js';

export async function validateCommand(ctx: CommandContext, file: string): Promise<void> {
  const result = await validateDefinition(ctx.io.cwd, file);
  ctx.out.result(result, (p) => renderValidation(p, result));
  for (const warning of result.warnings) annotateProblem(ctx, 'warning', warning);
}
