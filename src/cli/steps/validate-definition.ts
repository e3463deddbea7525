/**
 * Validating a definition offline (`validate`, `up`): YAML, schema and semantic checks, which
 * throw the loader's UserError with every problem, then the lint warnings (src/definition/lint.ts).
 */
import { isAbsolute, relative } from 'node:path';
import type { Problem } from '../errors.js';

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

/** Loads, checks and lints a definition; throws the loader's UserError when it is invalid. */
export async function validateDefinition(cwd: string, file: string): Promise<ValidateResult> {
  const [{ loadDefinition }, { lintDefinition }, { formatPath }] = await Promise.all([
    import('../../definition/load.js'),
    import('../../definition/lint.js'),
    import('../../definition/errors.js'),
  ]);
  const loaded = await loadDefinition(file, { cwd });
  const d = loaded.definition;
  const rel = relative(cwd, loaded.file);
  const shown = rel === '' || isAbsolute(rel) ? loaded.file : rel;
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
