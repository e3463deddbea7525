/**
 * Validating a definition offline (`validate`, `up`): YAML, schema and semantic checks, and the
 * files it ships, as a build checks them (inside the folder, within the size limit, code that
 * compiles and exports what its tools name), which throw a UserError with every problem; then the
 * lint warnings (src/definition/lint.ts).
 */
import type { LoadedDefinition } from '../../definition/load.js';
import type { Problem } from '../../shared/errors.js';
import type { Printer } from '../output.js';
import { plural } from '../render/format.js';
import { displayPath } from '../../shared/paths.js';

/** A warning; lint warnings say which rule (similar_descriptions, short_description, undescribed_parameter). */
export type Warning = Problem & { rule?: string };

export interface ValidateResult {
  valid: true;
  file: string;
  name: string;
  template: string;
  tools: number;
  resources: number;
  prompts: number;
  warnings: Warning[];
}

/**
 * Loads, checks and lints a definition and the files it ships; throws a UserError when it is
 * invalid.
 */
export async function validateDefinition(cwd: string, file: string): Promise<ValidateResult> {
  const [{ loadDefinition }, { toBuildRequest }] = await Promise.all([
    import('../../definition/load.js'),
    import('../../api/build-request.js'),
  ]);
  const loaded = await loadDefinition(file, { cwd });
  // the request a build would send, made and thrown away: what a build refuses, validate refuses
  await toBuildRequest(loaded);
  return lintLoaded(loaded, displayPath(loaded.file, cwd));
}

/** The validation result of a loaded definition: its counts, and its warnings with the lint's. */
export async function lintLoaded(loaded: LoadedDefinition, shown: string): Promise<ValidateResult> {
  const [{ lintDefinition }, { formatPath }] = await Promise.all([
    import('../../definition/lint.js'),
    import('../../shared/paths.js'),
  ]);
  const d = loaded.definition;
  const lint: Array<Warning & { line: number; column: number }> = lintDefinition(d).map((issue) => {
    const at = loaded.locate(issue.path);
    return {
      ...(at === undefined ? {} : { where: `${shown}:${at.line}:${at.column}` }),
      path: formatPath(issue.path),
      message: issue.message,
      rule: issue.rule,
      line: at?.line ?? Number.MAX_SAFE_INTEGER,
      column: at?.column ?? 0,
    };
  });
  lint.sort((a, b) => a.line - b.line || a.column - b.column);
  return {
    valid: true,
    file: shown,
    name: d.name,
    template: d.template,
    tools: d.tools?.length ?? 0,
    resources: d.resources?.length ?? 0,
    prompts: d.prompts?.length ?? 0,
    warnings: [...loaded.warnings, ...lint.map(({ line: _line, column: _column, ...warning }) => warning)],
  };
}

/** The result as `validate` shows it: a check line with the counts, then each warning. */
export function renderValidation(p: Printer, result: ValidateResult): void {
  const counts = [
    plural(result.tools, 'tool'),
    plural(result.resources, 'resource'),
    plural(result.prompts, 'prompt'),
  ].join(', ');
  p.success(`${result.file} is valid: ${result.name}, ${counts}`);
  for (const warning of result.warnings) {
    const where = warning.where === undefined ? '' : `${warning.where}  `;
    const path = warning.path === undefined ? '' : `${p.style.cyan(warning.path)}  `;
    p.warn(`${where}${path}${warning.message}`);
  }
}
