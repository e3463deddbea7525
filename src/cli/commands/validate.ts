/**
 * `mcpctl validate <file>`: checks a definition offline (YAML, schema, semantic checks, files it
 * refers to) and lints it (descriptions an agent cannot choose by). Never touches the network. An
 * invalid definition is the UserError of the loader: every problem as
 * `file:line:column  path  message`, exit 2. Warnings do not fail it.
 */
import type { CommandContext } from '../context.js';
import { plural } from '../render/format.js';
import { validateDefinition } from '../steps/validate-definition.js';

export async function validateCommand(ctx: CommandContext, file: string): Promise<void> {
  const result = await validateDefinition(ctx.io.cwd, file);
  ctx.out.result(result, (p) => {
    const counts = [plural(result.tools, 'tool'), plural(result.resources, 'resource'), plural(result.prompts, 'prompt')].join(', ');
    p.success(`${result.file} is valid: ${result.name}, ${counts}`);
    for (const warning of result.warnings) {
      const where = warning.where === undefined ? '' : `${warning.where}  `;
      const path = warning.path === undefined ? '' : `${p.style.cyan(warning.path)}  `;
      p.warn(`${where}${path}${warning.message}`);
    }
  });
}
