/**
 * `mcpctl validate <file>`: checks a definition offline (YAML, schema, semantic checks, and the
 * files it ships, as a build checks them: inside the folder, within the size limit, code that
 * compiles and exports what its tools name) and lints it (descriptions an agent cannot choose by).
 * Never touches the network. An invalid definition is a UserError with every problem as
 * `file:line:column  path  message`, exit 2. Warnings do not fail it.
 */
import type { CommandContext } from '../context.js';
import { formatProblem } from '../render/format.js';
import { chooseDefinition } from '../steps/definition-path.js';
import { annotateProblem } from '../steps/definition-file.js';
import { renderValidation, validateDefinition } from '../steps/validate-definition.js';

export async function validateCommand(ctx: CommandContext, given: string | undefined): Promise<void> {
  const result = await validateDefinition(ctx.io.cwd, await chooseDefinition(ctx, given));
  // --quiet prints nothing on success, but a warning is still said, on stderr
  if (ctx.out.quiet && !ctx.out.json) for (const warning of result.warnings) ctx.out.warn(formatProblem(warning));
  ctx.out.result(result, (p) => renderValidation(p, result));
  for (const warning of result.warnings) annotateProblem(ctx, 'warning', warning);
}
