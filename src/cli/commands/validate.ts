/**
 * `mcpctl validate <file>`: checks a definition offline (YAML, schema, semantic checks, and the
 * files it ships, as a build checks them: inside the folder, within the size limit, code that
 * compiles and exports what its tools name). Never touches the network. An invalid definition
 * is a UserError with every problem as `file:line:column  path  message`, exit 2.
 */
import { isAbsolute, relative } from 'node:path';
import type { CommandContext } from '../context.js';
import type { Problem } from '../errors.js';
import { formatProblem, plural } from '../render/format.js';

export interface ValidateResult {
  valid: true;
  file: string;
  name: string;
  template: string;
  tools: number;
  resources: number;
  prompts: number;
  warnings: Problem[];
}

export async function validateCommand(ctx: CommandContext, file: string): Promise<void> {
  const result = await validateDefinition(ctx.io.cwd, file);
  // --quiet prints nothing on success, but a warning is still said, on stderr
  if (ctx.out.quiet && !ctx.out.json) for (const warning of result.warnings) ctx.out.warn(formatProblem(warning));
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

/** Loads and checks a definition and the files it ships; throws a UserError when it is invalid. */
export async function validateDefinition(cwd: string, file: string): Promise<ValidateResult> {
  const [{ loadDefinition }, { toBuildRequest }] = await Promise.all([import('../../definition/load.js'), import('../../definition/build-request.js')]);
  const loaded = await loadDefinition(file, { cwd });
  // the request a build would send, made and thrown away: what a build refuses, validate refuses
  await toBuildRequest(loaded);
  const d = loaded.definition;
  const rel = relative(cwd, loaded.file);
  return {
    valid: true,
    file: rel === '' || isAbsolute(rel) ? loaded.file : rel,
    name: d.name,
    template: d.template,
    tools: d.tools?.length ?? 0,
    resources: d.resources?.length ?? 0,
    prompts: d.prompts?.length ?? 0,
    warnings: loaded.warnings,
  };
}
