/**
 * Semantic checks: what the zod schema cannot say on its own (unique names, `required` entries
 * that exist, real JSON Schema, paths that stay inside the definition folder, template references
 * that resolve, what relies on auth, literal secrets). They read the raw parsed YAML defensively,
 * so they run even when the schema found problems and every problem is reported at once. Each
 * kind of check lives in its own module; this one runs them in order and holds the small ones.
 *
 * Pure: the one question about the file system (does this path exist?) is passed in.
 */
import { MODELS } from '../shared/models.js';
import { checkAuth } from './auth.js';
import { checkCacheScopes } from './cache-check.js';
import { checkCompletions, MODULE_EXTENSIONS } from './completion-refs.js';
import { checkEgress } from './egress-check.js';
import { checkEnvRefs } from './env-refs.js';
import type { DefinitionIssue } from './errors.js';
import { checkPaths } from './file-paths.js';
import { checkHeaderParams } from './header-params.js';
import { checkInputSchemas } from './json-schema.js';
import { scalingProblem } from './scaling.js';
import { checkSecrets } from './secrets.js';
import { checkTemplateRefs } from './template-refs.js';
import { checkUriTemplates, matchesUriTemplate, parseUriTemplate } from './uri-template.js';
import {
  asArray,
  asRecord,
  asString,
  items,
  type CheckContext,
  type CheckOptions,
  type Path,
  type Rec,
} from './walk.js';

export type { CheckOptions } from './walk.js';
// the engine asks for these through this module
export { requiredEnvVars } from './env-refs.js';

/** Runs every check and returns errors and warnings in the order found. */
export function checkDefinition(input: unknown, options: CheckOptions = {}): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const def = asRecord(input);
  if (def === undefined) return issues;
  const ctx: CheckContext = {
    def,
    options,
    error: (path, message) => void issues.push({ path, message, severity: 'error' }),
    warn: (path, message) => void issues.push({ path, message, severity: 'warning' }),
  };
  for (const check of CHECKS) check(ctx);
  // One message per place: the first check to speak about a field says what matters most.
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = issue.path.join('\u0000');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const CHECKS: Array<(ctx: CheckContext) => void> = [
  checkNotEmpty,
  checkUniqueNames,
  checkInputSchemas,
  checkHeaderParams,
  checkModuleHandlers,
  checkCompletions,
  checkPaths,
  checkUriTemplates,
  checkCacheScopes,
  checkTemplateRefs,
  checkAuth,
  checkEnvRefs,
  checkEgress,
  checkScaling,
  checkTests,
  checkSecrets,
];

// ---------------------------------------------------------------------------------------------
// Contents and names

function checkNotEmpty({ def, warn }: CheckContext): void {
  const count = (key: string) => asArray(def[key]).length;
  if (count('tools') + count('resources') + count('prompts') === 0) {
    warn([], 'the server declares no tools, resources or prompts: clients will find nothing to use');
  }
}

function checkUniqueNames({ def, error }: CheckContext): void {
  const unique = (list: string, key: string, label: string) => {
    const seen = new Map<string, number>();
    for (const [i, item] of items(def[list])) {
      const value = asString(item[key]);
      if (value === undefined) continue;
      const first = seen.get(value);
      if (first === undefined) seen.set(value, i);
      else error([list, i, key], `duplicate ${label} "${value}" (already declared by ${list}[${first}])`);
    }
  };
  unique('tools', 'name', 'tool name');
  unique('resources', 'uri', 'resource uri');
  unique('prompts', 'name', 'prompt name');
  for (const [i, prompt] of items(def.prompts)) {
    const seen = new Set<string>();
    for (const [j, arg] of items(prompt.arguments)) {
      const name = asString(arg.name);
      if (name === undefined) continue;
      if (seen.has(name)) error(['prompts', i, 'arguments', j, 'name'], `duplicate argument "${name}"`);
      seen.add(name);
    }
  }
  const tests = asRecord(def.tests);
  const seenCases = new Set<string>();
  for (const [i, testCase] of items(tests?.cases)) {
    const name = asString(testCase.name);
    if (name === undefined) continue;
    if (seenCases.has(name)) error(['tests', 'cases', i, 'name'], `duplicate test case "${name}"`);
    seenCases.add(name);
  }
}

// ---------------------------------------------------------------------------------------------
// Handlers

const JS_IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function checkModuleHandlers({ def, error }: CheckContext): void {
  const template = asString(def.template);
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    // the handler decides when the task starts (context.startTask()): only a module can
    if (asRecord(tool.task)?.start === 'handler' && handler?.type !== 'module')
      error(['tools', i, 'task', 'start'], 'start: handler needs a module handler (it calls context.startTask())');
    if (handler?.type !== 'module') continue;
    if (template !== undefined && template !== 'custom') {
      error(
        ['tools', i, 'handler', 'type'],
        `module handlers run your own code and need template: custom (this is ${template})`,
      );
    }
    const module = asString(handler.module);
    if (module !== undefined && !MODULE_EXTENSIONS.test(module)) {
      error(['tools', i, 'handler', 'module'], 'must be a .js, .mjs, .cjs, .ts, .mts or .cts file');
    }
    const name = asString(tool.name);
    if (handler.export === undefined && name !== undefined && !JS_IDENTIFIER.test(name)) {
      error(
        ['tools', i, 'handler'],
        `the tool name "${name}" is not a JavaScript identifier: set export to the function's name`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// deploy: and tests:

function checkScaling({ def, error }: CheckContext): void {
  const deploy = asRecord(def.deploy);
  if (deploy === undefined) return;
  const check = (target: Rec | undefined, path: Path) => {
    const problem = scalingProblem(asRecord(target?.scaling));
    if (problem !== undefined) error([...path, 'scaling', 'min_instances'], problem);
  };
  check(deploy, ['deploy']);
  for (const [env, target] of Object.entries(asRecord(deploy.environments) ?? {}))
    check(asRecord(target), ['deploy', 'environments', env]);
}

function checkTests({ def, error, warn }: CheckContext): void {
  const tests = asRecord(def.tests);
  if (tests === undefined) return;
  const tools = new Set(items(def.tools).map(([, t]) => asString(t.name)));
  const uris = items(def.resources).map(([, r]) => asString(r.uri) ?? '');
  const models: readonly string[] = MODELS.map((model) => model.id);
  const checkModel = (value: unknown, path: Path) => {
    if (typeof value === 'string' && !models.includes(value)) {
      warn(
        path,
        `unknown model "${value}": the built-in ones are ${models.join(', ')}; an engine's settings may add others (\`mcpctl models\` lists them)`,
      );
    }
  };
  checkModel(tests.model, ['tests', 'model']);
  checkModel(tests.judge, ['tests', 'judge']);
  for (const [i, testCase] of items(tests.cases)) {
    const base: Path = ['tests', 'cases', i];
    checkModel(testCase.model, [...base, 'model']);
    const expect = asRecord(testCase.expect);
    for (const key of ['tools', 'not_tools']) {
      asArray(expect?.[key]).forEach((name, k) => {
        if (typeof name === 'string' && !tools.has(name))
          error([...base, 'expect', key, k], `"${name}" is not a declared tool`);
      });
    }
    asArray(expect?.calls).forEach((call, k) => {
      const tool = asRecord(call)?.tool;
      if (typeof tool === 'string' && !tools.has(tool))
        error([...base, 'expect', 'calls', k, 'tool'], `"${tool}" is not a declared tool`);
    });
    asArray(expect?.resources).forEach((uri, k) => {
      if (typeof uri !== 'string') return;
      // a malformed template is reported at its uri; a case that names it is not blamed again
      const known = uris.some((u) => 'error' in parseUriTemplate(u) || matchesUriTemplate(u, uri));
      if (!known) error([...base, 'expect', 'resources', k], `"${uri}" is not a declared resource`);
    });
  }
}
