/**
 * Semantic checks: what the zod schema cannot say on its own (unique names, `required` entries
 * that exist, real JSON Schema, paths that stay inside the definition folder, template references
 * that resolve, literal secrets). They read the raw parsed YAML defensively, so they run even when
 * the schema found problems and every problem is reported at once.
 *
 * Pure: the one question about the file system (does this path exist?) is passed in.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { posix } from 'node:path';
import { MODELS } from '../shared/models.js';
import { formatPath, type FieldPath } from '../shared/paths.js';
import { isSecretName } from '../shared/secret-name.js';
import type { DefinitionIssue } from './errors.js';
import { findEnvSyntaxError, hasEnvRefs, listEnvRefs } from './interpolate.js';

export interface CheckOptions {
  /** what is at a path relative to the definition folder; omit to skip existence checks */
  stat?: (relativePath: string) => 'file' | 'dir' | undefined;
}

type Path = Array<string | number>;
type Rec = Record<string, unknown>;

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

interface CheckContext {
  def: Rec;
  options: CheckOptions;
  error: (path: FieldPath, message: string) => void;
  warn: (path: FieldPath, message: string) => void;
}

const CHECKS: Array<(ctx: CheckContext) => void> = [
  checkNotEmpty,
  checkUniqueNames,
  checkInputSchemas,
  checkModuleHandlers,
  checkPaths,
  checkUriTemplates,
  checkTemplateRefs,
  checkEnvRefs,
  checkScaling,
  checkTests,
  checkSecrets,
];

// ---------------------------------------------------------------------------------------------
// Reading the raw document defensively

function asRecord(value: unknown): Rec | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Rec) : undefined;
}
function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
/** The items of a list field that are maps, with their index. */
function items(value: unknown): Array<[number, Rec]> {
  const out: Array<[number, Rec]> = [];
  asArray(value).forEach((item, i) => {
    const record = asRecord(item);
    if (record !== undefined) out.push([i, record]);
  });
  return out;
}
/** Every string inside a value, with its path. */
function* strings(value: unknown, path: Path): Generator<[Path, string]> {
  if (typeof value === 'string') yield [path, value];
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* strings(value[i], [...path, i]);
  else if (asRecord(value) !== undefined) for (const [k, v] of Object.entries(value as Rec)) yield* strings(v, [...path, k]);
}

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
// JSON Schema of tool arguments and results

type Dialect = 'draft-07' | '2019-09' | '2020-12';
const DIALECTS: Record<string, Dialect> = {
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'https://json-schema.org/draft-07/schema': 'draft-07',
  'http://json-schema.org/draft-06/schema': 'draft-07',
  'https://json-schema.org/draft-06/schema': 'draft-07',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'http://json-schema.org/draft/2019-09/schema': '2019-09',
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'http://json-schema.org/draft/2020-12/schema': '2020-12',
};

/** The dialect a schema declares; no `$schema` means 2020-12, as MCP specifies. */
export function schemaDialect(schema: Rec): Dialect | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return undefined;
  return DIALECTS[declared.replace(/#$/, '')];
}

type AnyAjv = Ajv | Ajv2019 | Ajv2020;
const validators = new Map<Dialect, AnyAjv>();
function validatorFor(dialect: Dialect): AnyAjv {
  let ajv = validators.get(dialect);
  if (ajv === undefined) {
    // Formats are not validated by the runtime either; an unknown keyword is the author's business.
    const options = { strict: false, allErrors: true, validateFormats: false, addUsedSchema: false } as const;
    ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
    validators.set(dialect, ajv);
  }
  return ajv;
}

/** Keys whose presence means compiling can find more than the meta-schema can. */
const COMPILE_KEYS = new Set(['$ref', '$dynamicRef', '$recursiveRef', '$id', '$anchor']);
function needsCompile(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(needsCompile);
  const record = asRecord(value);
  if (record === undefined) return false;
  return Object.entries(record).some(([k, v]) => COMPILE_KEYS.has(k) || needsCompile(v));
}

/**
 * Regular expressions of `pattern` and `patternProperties`, checked as the validator will build
 * them (with the u flag). Cheaper than compiling the whole schema for each tool.
 */
function findBadPatterns(value: unknown, path: Path, out: Array<{ path: Path; message: string }>): void {
  if (Array.isArray(value)) return value.forEach((item, i) => findBadPatterns(item, [...path, i], out));
  const record = asRecord(value);
  if (record === undefined) return;
  const test = (pattern: string, at: Path) => {
    try {
      new RegExp(pattern, 'u');
    } catch (error) {
      out.push({ path: at, message: `invalid JSON Schema: ${error instanceof Error ? error.message : String(error)}` });
    }
  };
  for (const [key, item] of Object.entries(record)) {
    if (key === 'pattern' && typeof item === 'string') test(item, [...path, key]);
    else if (key === 'patternProperties' && asRecord(item) !== undefined) {
      for (const [pattern, sub] of Object.entries(item as Rec)) {
        test(pattern, [...path, key, pattern]);
        findBadPatterns(sub, [...path, key, pattern], out);
      }
    } else if (key !== 'enum' && key !== 'const' && key !== 'examples' && key !== 'default') findBadPatterns(item, [...path, key], out);
  }
}

/** Problems of one JSON Schema, with paths relative to it. */
export function validateJsonSchema(schema: Rec): Array<{ path: Path; message: string }> {
  const dialect = schemaDialect(schema);
  if (dialect === undefined) {
    return [{ path: ['$schema'], message: 'unsupported $schema: use draft-07, 2019-09 or 2020-12 (or leave it out for 2020-12)' }];
  }
  const ajv = validatorFor(dialect);
  const { $schema: _declared, ...body } = schema;
  if (ajv.validateSchema(body) !== true) return describeAjvErrors(ajv.errors ?? [], dialect);
  const problems: Array<{ path: Path; message: string }> = [];
  findBadPatterns(body, [], problems);
  if (problems.length > 0 || !needsCompile(body)) return problems;
  try {
    ajv.compile(body);
    return [];
  } catch (error) {
    return [{ path: [], message: `invalid JSON Schema: ${error instanceof Error ? error.message : String(error)}` }];
  }
}

function describeAjvErrors(errors: ErrorObject[], dialect: Dialect): Array<{ path: Path; message: string }> {
  const byPath = new Map<string, ErrorObject[]>();
  for (const error of errors) byPath.set(error.instancePath, [...(byPath.get(error.instancePath) ?? []), error]);
  const out: Array<{ path: Path; message: string }> = [];
  for (const [pointer, group] of byPath) {
    // One message per place: an enum error says most, combinator errors say least.
    const best =
      group.find((e) => e.keyword === 'enum') ?? group.find((e) => !['anyOf', 'oneOf', 'if'].includes(e.keyword)) ?? group[0]!;
    const allowed = (best.params as { allowedValues?: unknown[] }).allowedValues;
    const suffix = Array.isArray(allowed) ? ` (${allowed.map(String).join(', ')})` : '';
    out.push({
      path: pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
      message: `invalid JSON Schema (${dialect}): ${best.message ?? 'invalid'}${suffix}`,
    });
  }
  return out;
}

function checkInputSchemas({ def, error }: CheckContext): void {
  for (const [i, tool] of items(def.tools)) {
    for (const key of ['inputSchema', 'outputSchema']) {
      const schema = asRecord(tool[key]);
      if (schema === undefined) continue;
      const base: Path = ['tools', i, key];
      checkRequired(schema, base, error);
      for (const problem of validateJsonSchema(schema)) error([...base, ...problem.path], problem.message);
    }
  }
}

/** `required` names declared properties, here and in nested object schemas. */
function checkRequired(schema: Rec, path: Path, error: CheckContext['error']): void {
  const properties = asRecord(schema.properties);
  const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
  asArray(schema.required).forEach((name, k) => {
    if (typeof name !== 'string' || open || schema.patternProperties !== undefined) return;
    if (properties === undefined || !(name in properties)) {
      error([...path, 'required', k], `"${name}" is required but not declared in properties`);
    }
  });
  for (const [name, sub] of Object.entries(properties ?? {})) {
    const record = asRecord(sub);
    if (record !== undefined) checkRequired(record, [...path, 'properties', name], error);
  }
  const itemSchema = asRecord(schema.items);
  if (itemSchema !== undefined) checkRequired(itemSchema, [...path, 'items'], error);
}

// ---------------------------------------------------------------------------------------------
// Handlers

const JS_IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MODULE_EXTENSIONS = /\.(m?js|cjs|m?ts|cts)$/;

function checkModuleHandlers({ def, error }: CheckContext): void {
  const template = asString(def.template);
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    if (handler?.type !== 'module') continue;
    if (template !== undefined && template !== 'custom') {
      error(['tools', i, 'handler', 'type'], `module handlers run your own code and need template: custom (this is ${template})`);
    }
    const module = asString(handler.module);
    if (module !== undefined && !MODULE_EXTENSIONS.test(module)) {
      error(['tools', i, 'handler', 'module'], 'must be a .js, .mjs, .cjs, .ts, .mts or .cts file');
    }
    const name = asString(tool.name);
    if (handler.export === undefined && name !== undefined && !JS_IDENTIFIER.test(name)) {
      error(['tools', i, 'handler'], `the tool name "${name}" is not a JavaScript identifier: set export to the function's name`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Paths: relative, inside the definition folder, and present

/** Why a path cannot be used (absolute, outside the folder, backslashes), or undefined. */
export function checkRelativePath(path: string): string | undefined {
  const literal = path.replace(/\{\{[^}]*\}\}/g, 'x');
  if (literal.includes('\\')) return 'use / as the path separator';
  if (literal.startsWith('/') || /^[A-Za-z]:/.test(literal)) return 'must be relative to the definition folder, not absolute';
  const normalized = posix.normalize(literal);
  if (normalized === '..' || normalized.startsWith('../')) return 'must stay inside the definition folder (no ..)';
  return undefined;
}

interface PathRef {
  path: Path;
  value: string;
  kind: 'file' | 'dir' | 'any';
}

/** Every path a definition refers to, relative to the definition folder. */
export function listPathRefs(def: Rec): PathRef[] {
  const refs: PathRef[] = [];
  const media = (content: unknown, path: Path) => {
    const item = asRecord(content);
    const value = asString(item?.path);
    if (value !== undefined && (item?.type === 'image' || item?.type === 'audio')) refs.push({ path: [...path, 'path'], value, kind: 'file' });
  };
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    const base: Path = ['tools', i, 'handler'];
    if (handler?.type === 'static') asArray(handler.content).forEach((c, j) => media(c, [...base, 'content', j]));
    if (handler?.type === 'module') {
      const value = asString(handler.module);
      if (value !== undefined) refs.push({ path: [...base, 'module'], value, kind: 'file' });
    }
    if (handler?.type === 'exec') {
      const cwd = asString(handler.cwd);
      if (cwd !== undefined) refs.push({ path: [...base, 'cwd'], value: cwd, kind: 'dir' });
      asArray(handler.command).forEach((arg, k) => {
        // `./script` arguments are files of the definition, shipped with the build.
        if (typeof arg === 'string' && arg.startsWith('./')) {
          refs.push({ path: [...base, 'command', k], value: posix.join(cwd ?? '.', arg), kind: 'file' });
        }
      });
    }
  }
  for (const [i, resource] of items(def.resources)) {
    const source = asRecord(resource.source);
    const value = asString(source?.path);
    if (source?.type === 'file' && value !== undefined) refs.push({ path: ['resources', i, 'source', 'path'], value, kind: 'file' });
  }
  for (const [i, prompt] of items(def.prompts)) {
    for (const [j, message] of items(prompt.messages)) media(message.content, ['prompts', i, 'messages', j, 'content']);
  }
  asArray(def.include).forEach((value, i) => {
    if (typeof value === 'string') refs.push({ path: ['include', i], value, kind: 'any' });
  });
  return refs;
}

function checkPaths({ def, options, error }: CheckContext): void {
  // Once an exec cwd is wrong, the ./ paths under it would only repeat the news.
  const badCwd = new Set<string>();
  const handlerOf = (path: Path) => path.slice(0, 3).join('.');
  for (const ref of listPathRefs(def)) {
    if (ref.path.at(-2) === 'command' && badCwd.has(handlerOf(ref.path))) continue;
    const problem = checkRelativePath(ref.value) ?? findMissing(ref, options);
    if (problem === undefined) continue;
    error(ref.path, problem);
    if (ref.path.at(-1) === 'cwd') badCwd.add(handlerOf(ref.path));
  }
}

function findMissing(ref: PathRef, options: CheckOptions): string | undefined {
  if (options.stat === undefined || ref.value.includes('{{')) return undefined;
  const found = options.stat(posix.normalize(ref.value));
  if (found === undefined) return `${ref.value} does not exist (paths are relative to the definition's folder)`;
  if (ref.kind === 'file' && found !== 'file') return `${ref.value} is a folder, not a file`;
  if (ref.kind === 'dir' && found !== 'dir') return `${ref.value} is a file, not a folder`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// URI templates (RFC 6570 expressions: {var}, {+var}, {?a,b}, {var*}, {var:3})

const URI_OPERATORS = '+#./;?&';
const URI_VARSPEC = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*(\*|:[1-9][0-9]{0,3})?$/;

/** The variables of a URI template, or the reason it is malformed. */
export function parseUriTemplate(uri: string): { variables: string[] } | { error: string } {
  const variables: string[] = [];
  let i = 0;
  while (i < uri.length) {
    const ch = uri[i];
    if (ch === '}') return { error: 'has a } without a matching {' };
    if (ch !== '{') {
      i += 1;
      continue;
    }
    const end = uri.indexOf('}', i + 1);
    if (end === -1) return { error: 'has a { without a matching }' };
    let body = uri.slice(i + 1, end);
    if (body.includes('{')) return { error: 'has a nested {: URI templates use single braces, such as notes://{id}' };
    if (body !== '' && URI_OPERATORS.includes(body[0]!)) body = body.slice(1);
    if (body === '') return { error: 'has an empty expression {}' };
    for (const spec of body.split(',')) {
      if (!URI_VARSPEC.test(spec)) return { error: `has an invalid variable "${spec}" (letters, digits and _ only)` };
      const name = spec.replace(/(\*|:\d+)$/, '');
      if (variables.includes(name)) return { error: `uses the variable "${name}" twice` };
      variables.push(name);
    }
    i = end + 1;
  }
  return { variables };
}

function uriTemplateToRegExp(uri: string): RegExp {
  let pattern = '';
  for (const piece of uri.split(/(\{[^}]*\})/)) {
    if (piece.startsWith('{')) pattern += piece.startsWith('{+') || piece.startsWith('{#') ? '.*' : '[^/?#]*';
    else pattern += piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${pattern}$`);
}

function checkUriTemplates({ def, error }: CheckContext): void {
  for (const [i, resource] of items(def.resources)) {
    const uri = asString(resource.uri);
    if (uri === undefined) continue;
    const parsed = parseUriTemplate(uri);
    if ('error' in parsed) error(['resources', i, 'uri'], `URI template ${parsed.error}`);
  }
}

// ---------------------------------------------------------------------------------------------
// {{...}} templates

export type TemplateRef =
  | { root: 'args'; name?: string }
  | { root: 'params'; name: string }
  | { root: 'user'; name: 'id' }
  | { root: 'server'; name: 'name' | 'version' };

/** The `{{...}}` references of a text, and the problems of malformed ones. */
export function parseTemplateRefs(text: string): { refs: TemplateRef[]; errors: string[] } {
  const refs: TemplateRef[] = [];
  const errors: string[] = [];
  let i = text.indexOf('{{');
  while (i !== -1) {
    const end = text.indexOf('}}', i + 2);
    if (end === -1) {
      errors.push('has a {{ without a closing }}');
      break;
    }
    const expression = text.slice(i + 2, end).trim();
    const ref = parseTemplateExpression(expression);
    if (ref === undefined) {
      errors.push(`{{${expression}}} is not a known value: use args.NAME, params.NAME, user.id, server.name or server.version`);
    } else refs.push(ref);
    i = text.indexOf('{{', end + 2);
  }
  return { refs, errors };
}

function parseTemplateExpression(expression: string): TemplateRef | undefined {
  if (expression === 'args') return { root: 'args' };
  let match = /^args\.([A-Za-z_][\w-]*)(\.[\w-]+)*$/.exec(expression);
  if (match !== null) return { root: 'args', name: match[1]! };
  match = /^params\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)$/.exec(expression);
  if (match !== null) return { root: 'params', name: match[1]! };
  if (expression === 'user.id') return { root: 'user', name: 'id' };
  if (expression === 'server.name' || expression === 'server.version') return { root: 'server', name: expression === 'server.name' ? 'name' : 'version' };
  return undefined;
}

type TemplateScope = 'tool' | 'resource' | 'prompt';
interface TemplateField {
  path: Path;
  text: string;
  scope: TemplateScope;
  /** the tool, resource or prompt the field belongs to */
  owner: Rec;
}

/** Every field whose text is rendered with `{{...}}` at runtime. */
export function listTemplateFields(def: Rec): TemplateField[] {
  const fields: TemplateField[] = [];
  const push = (scope: TemplateScope, owner: Rec, value: unknown, path: Path) => {
    for (const [p, text] of strings(value, path)) fields.push({ path: p, text, scope, owner });
  };
  const content = (scope: TemplateScope, owner: Rec, item: unknown, path: Path) => {
    if (typeof item === 'string') return push(scope, owner, item, path);
    const record = asRecord(item);
    if (record?.type === 'text' || record?.type === 'resource') push(scope, owner, record.text, [...path, 'text']);
    if (record?.type === 'json') push(scope, owner, record.json, [...path, 'json']);
  };
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    const base: Path = ['tools', i, 'handler'];
    if (handler?.type === 'static') asArray(handler.content).forEach((c, j) => content('tool', tool, c, [...base, 'content', j]));
    if (handler?.type === 'error') push('tool', tool, handler.message, [...base, 'message']);
    if (handler?.type === 'http') {
      push('tool', tool, handler.url, [...base, 'url']);
      push('tool', tool, handler.headers, [...base, 'headers']);
      push('tool', tool, handler.body, [...base, 'body']);
    }
  }
  for (const [i, resource] of items(def.resources)) {
    const source = asRecord(resource.source);
    const base: Path = ['resources', i, 'source'];
    if (source?.type === 'text') push('resource', resource, source.text, [...base, 'text']);
    if (source?.type === 'file') push('resource', resource, source.path, [...base, 'path']);
    if (source?.type === 'url') {
      push('resource', resource, source.url, [...base, 'url']);
      push('resource', resource, source.headers, [...base, 'headers']);
    }
  }
  for (const [i, prompt] of items(def.prompts)) {
    for (const [j, message] of items(prompt.messages)) content('prompt', prompt, message.content, ['prompts', i, 'messages', j, 'content']);
  }
  return fields;
}

/** Argument names a tool's inputSchema declares, or undefined when it accepts more than it lists. */
function declaredToolArgs(tool: Rec): Set<string> | undefined {
  const schema = asRecord(tool.inputSchema);
  if (schema === undefined) return new Set();
  const open = ['additionalProperties', 'patternProperties', 'allOf', 'anyOf', 'oneOf', '$ref', 'unevaluatedProperties'].some(
    (k) => schema[k] !== undefined && schema[k] !== false,
  );
  return open ? undefined : new Set(Object.keys(asRecord(schema.properties) ?? {}));
}

function checkTemplateRefs({ def, error, warn }: CheckContext): void {
  const usesUser = new Set<Rec>();
  for (const field of listTemplateFields(def)) {
    if (!field.text.includes('{{')) continue;
    const { refs, errors } = parseTemplateRefs(field.text);
    for (const message of errors) error(field.path, message);
    for (const ref of refs) {
      if (ref.root === 'args' && field.scope === 'resource') {
        error(field.path, `resources have no arguments: use {{params.NAME}} for URI template variables`);
      } else if (ref.root === 'args' && ref.name !== undefined && field.scope === 'tool') {
        const declared = declaredToolArgs(field.owner);
        if (declared !== undefined && !declared.has(ref.name)) {
          error(field.path, `{{args.${ref.name}}} is not a property of this tool's inputSchema`);
        }
      } else if (ref.root === 'args' && ref.name !== undefined && field.scope === 'prompt') {
        const declared = new Set(items(field.owner.arguments).map(([, a]) => asString(a.name)));
        if (!declared.has(ref.name)) error(field.path, `{{args.${ref.name}}} is not a declared argument of this prompt`);
      } else if (ref.root === 'params') {
        if (field.scope !== 'resource') {
          error(field.path, `{{params.${ref.name}}} is only available in resource sources`);
          continue;
        }
        const parsed = parseUriTemplate(asString(field.owner.uri) ?? '');
        if ('error' in parsed) continue; // the uri itself is reported
        const variables = parsed.variables;
        if (!variables.includes(ref.name)) {
          error(
            field.path,
            variables.length === 0
              ? `{{params.${ref.name}}} needs a URI template variable, such as ${asString(field.owner.uri) ?? 'notes://'}/{${ref.name}}`
              : `{{params.${ref.name}}} is not a variable of the URI template (${variables.join(', ')})`,
          );
        }
      } else if (ref.root === 'user' && field.scope === 'resource') {
        usesUser.add(field.owner);
        if (field.owner.per_user !== true) error(field.path, '{{user.id}} in a resource needs per_user: true');
      }
    }
  }
  for (const [i, resource] of items(def.resources)) {
    if (resource.per_user === true && resource.source !== undefined && !usesUser.has(resource)) {
      warn(['resources', i, 'per_user'], 'per_user is set but the source never uses {{user.id}}: every user sees the same content');
    }
  }
}

// ---------------------------------------------------------------------------------------------
// ${VAR} references

/** Every field whose `${VAR}` references are resolved (by the runtime at start, or by deploy). */
export function listEnvFields(def: Rec): Array<[Path, string]> {
  const fields: Array<[Path, string]> = [];
  const push = (value: unknown, path: Path) => fields.push(...strings(value, path));
  push(asRecord(def.auth)?.token, ['auth', 'token']);
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    const base: Path = ['tools', i, 'handler'];
    if (handler?.type === 'http') for (const key of ['url', 'headers']) push(handler[key], [...base, key]);
    if (handler?.type === 'exec') push(handler.env, [...base, 'env']);
  }
  for (const [i, resource] of items(def.resources)) {
    const source = asRecord(resource.source);
    if (source?.type === 'url') for (const key of ['url', 'headers']) push(source[key], ['resources', i, 'source', key]);
  }
  push(def.deploy, ['deploy']);
  return fields;
}

/**
 * The variables a server needs when it starts: the `${VAR}` references without a default in
 * what the runtime resolves (not `deploy:`), each once, with the first field that uses it. A
 * deployment must pass each in its env_vars, or the server cannot start.
 */
export function requiredEnvVars(def: unknown): Array<{ name: string; field: string }> {
  const record = asRecord(def);
  if (record === undefined) return [];
  const found = new Map<string, string>();
  for (const [path, text] of listEnvFields(record)) {
    if (path[0] === 'deploy' || !text.includes('${')) continue;
    for (const name of listEnvRefs(text, { withoutDefault: true })) if (!found.has(name)) found.set(name, formatPath(path));
  }
  return [...found].map(([name, field]) => ({ name, field }));
}

function checkEnvRefs({ def, error }: CheckContext): void {
  for (const [path, text] of listEnvFields(def)) {
    if (!text.includes('${')) continue;
    const problem = findEnvSyntaxError(text);
    if (problem !== undefined) error(path, problem);
  }
}

// ---------------------------------------------------------------------------------------------
// deploy: and tests:

function checkScaling({ def, error }: CheckContext): void {
  const deploy = asRecord(def.deploy);
  if (deploy === undefined) return;
  const check = (target: Rec | undefined, path: Path) => {
    const scaling = asRecord(target?.scaling);
    const min = scaling?.min_instances;
    const max = scaling?.max_instances;
    if (typeof min === 'number' && typeof max === 'number' && min > max) {
      error([...path, 'scaling', 'min_instances'], `min_instances (${min}) is greater than max_instances (${max})`);
    }
  };
  check(deploy, ['deploy']);
  for (const [env, target] of Object.entries(asRecord(deploy.environments) ?? {})) check(asRecord(target), ['deploy', 'environments', env]);
}

function checkTests({ def, error, warn }: CheckContext): void {
  const tests = asRecord(def.tests);
  if (tests === undefined) return;
  const tools = new Set(items(def.tools).map(([, t]) => asString(t.name)));
  const uris = items(def.resources).map(([, r]) => asString(r.uri) ?? '');
  const models: readonly string[] = MODELS.map((model) => model.id);
  const checkModel = (value: unknown, path: Path) => {
    if (typeof value === 'string' && !models.includes(value)) {
      warn(path, `unknown model "${value}": the service accepts ${models.join(', ')}`);
    }
  };
  checkModel(tests.model, ['tests', 'model']);
  for (const [i, testCase] of items(tests.cases)) {
    const base: Path = ['tests', 'cases', i];
    checkModel(testCase.model, [...base, 'model']);
    const expect = asRecord(testCase.expect);
    for (const key of ['tools', 'not_tools']) {
      asArray(expect?.[key]).forEach((name, k) => {
        if (typeof name === 'string' && !tools.has(name)) error([...base, 'expect', key, k], `"${name}" is not a declared tool`);
      });
    }
    asArray(expect?.resources).forEach((uri, k) => {
      if (typeof uri !== 'string') return;
      const known = uris.some(
        (u) => u === uri || 'error' in parseUriTemplate(u) || (u.includes('{') && uriTemplateToRegExp(u).test(uri)),
      );
      if (!known) error([...base, 'expect', 'resources', k], `"${uri}" is not a declared resource`);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Literal secrets (warnings)

const SECRET_VALUE = /^(sk|pk|rk)[-_][A-Za-z0-9]|^gh[pousr]_|^xox[abprs]-|^AKIA[0-9A-Z]{16}$|^eyJ[\w-]+\.[\w-]+\.|^Bearer\s+\S{8,}/;

/** True when a literal value under `name` looks like a secret that belongs in the environment. */
export function looksLikeSecret(name: string, value: string): boolean {
  if (value === '' || hasEnvRefs(value)) return false;
  return isSecretName(name) || SECRET_VALUE.test(value);
}

function checkSecrets({ def, warn }: CheckContext): void {
  const token = asString(asRecord(def.auth)?.token);
  if (token !== undefined && !hasEnvRefs(token)) {
    warn(['auth', 'token'], 'a literal token: anyone who can read this file can call the server; use ${MCP_AUTH_TOKEN} and set it at deploy time');
  }
  const map = (value: unknown, path: Path) => {
    for (const [key, item] of Object.entries(asRecord(value) ?? {})) {
      if (typeof item === 'string' && looksLikeSecret(key, item)) {
        warn([...path, key], 'looks like a literal secret: take it from the environment with a ${VAR} reference');
      }
    }
  };
  const deploy = asRecord(def.deploy);
  map(deploy?.env_vars, ['deploy', 'env_vars']);
  for (const [env, target] of Object.entries(asRecord(deploy?.environments) ?? {})) {
    map(asRecord(target)?.env_vars, ['deploy', 'environments', env, 'env_vars']);
  }
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    if (handler?.type === 'http') map(handler.headers, ['tools', i, 'handler', 'headers']);
    if (handler?.type === 'exec') map(handler.env, ['tools', i, 'handler', 'env']);
  }
  for (const [i, resource] of items(def.resources)) {
    const source = asRecord(resource.source);
    if (source?.type === 'url') map(source.headers, ['resources', i, 'source', 'headers']);
  }
}
