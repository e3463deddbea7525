/**
 * Where a definition completes: the `complete:` of prompt arguments (or their `enum`) and of
 * URI-template variables. This module finds the module functions among them (their files are
 * shipped and checked like a module tool's) and checks what the schema cannot: a module needs
 * template custom and a JavaScript or TypeScript file, a variable that completes is one the URI
 * template has, listed values fit the argument's enum. Pure: reads the raw parsed YAML.
 */
import { parseUriTemplate } from './uri-template.js';
import { asArray, asRecord, asString, items, type CheckContext, type Path, type Rec } from './walk.js';

export interface CompletionModuleRef {
  /** the `complete` field that names the module */
  path: Path;
  module: string;
  export: string | undefined;
}

/** Every `complete: { module, export }` of the definition, prompt arguments first. */
export function listCompletionModules(def: Rec): CompletionModuleRef[] {
  const refs: CompletionModuleRef[] = [];
  const add = (value: unknown, path: Path) => {
    const ref = asRecord(value);
    const module = asString(ref?.module);
    if (module !== undefined) refs.push({ path, module, export: asString(ref?.export) });
  };
  for (const [i, prompt] of items(def.prompts)) {
    for (const [j, argument] of items(prompt.arguments))
      add(argument.complete, ['prompts', i, 'arguments', j, 'complete']);
  }
  for (const [i, resource] of items(def.resources)) {
    for (const [variable, value] of Object.entries(asRecord(resource.complete) ?? {}))
      add(value, ['resources', i, 'complete', variable]);
  }
  return refs;
}

export const MODULE_EXTENSIONS = /\.(m?js|cjs|m?ts|cts)$/;

export function checkCompletions({ def, error }: CheckContext): void {
  const template = asString(def.template);
  for (const ref of listCompletionModules(def)) {
    if (template !== undefined && template !== 'custom') {
      error(ref.path, `a completion module runs your own code and needs template: custom (this is ${template})`);
    } else if (!MODULE_EXTENSIONS.test(ref.module)) {
      error([...ref.path, 'module'], 'must be a .js, .mjs, .cjs, .ts, .mts or .cts file');
    }
  }
  for (const [i, prompt] of items(def.prompts)) {
    for (const [j, argument] of items(prompt.arguments)) {
      const allowed = asArray(argument.enum);
      if (allowed.length === 0) continue;
      asArray(argument.complete).forEach((value, k) => {
        if (typeof value === 'string' && !allowed.includes(value)) {
          error(
            ['prompts', i, 'arguments', j, 'complete', k],
            `"${value}" is not in the argument's enum, so the prompt would refuse it`,
          );
        }
      });
    }
  }
  for (const [i, resource] of items(def.resources)) {
    const complete = asRecord(resource.complete);
    const uri = asString(resource.uri);
    if (complete === undefined || uri === undefined) continue;
    const parsed = parseUriTemplate(uri);
    if ('error' in parsed) continue; // reported at the uri
    for (const variable of Object.keys(complete)) {
      if (parsed.variables.includes(variable)) continue;
      const known =
        parsed.variables.length === 0 ? `${uri} has no variables` : `its variables: ${parsed.variables.join(', ')}`;
      error(['resources', i, 'complete', variable], `"${variable}" is not a variable of the URI template (${known})`);
    }
  }
}
