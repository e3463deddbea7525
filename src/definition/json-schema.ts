/**
 * The JSON Schemas of tool arguments and results: which dialect a schema speaks, one ajv per
 * dialect and option set (compiled once, cached), and the problems of a schema as the checker
 * reports them. The runtime compiles its validators through the same `ajvFor`.
 */
import type { Ajv, ErrorObject, Options } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { createRequire } from 'node:module';
import { linearPatternProblem } from '../shared/linear-regexp.js';
import { isPlainSchema } from './plain-schema.js';
import { asArray, asRecord, items, type CheckContext, type Path, type Rec } from './walk.js';

// ajv (CommonJS) is required when first needed, not imported: loading it and compiling a
// meta-schema costs more than the rest of `mcpctl validate`, and most schemas do not need it.
const require = createRequire(import.meta.url);

export type Dialect = 'draft-07' | '2019-09' | '2020-12';
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

export type AnyAjv = Ajv | Ajv2019 | Ajv2020;

/** One ajv for a dialect and a set of options: made on first use, then reused (it caches what it compiles). */
export function ajvFor(dialect: Dialect, options: Options, cache: Map<Dialect, AnyAjv>): AnyAjv {
  let ajv = cache.get(dialect);
  if (ajv === undefined) {
    if (dialect === '2020-12') ajv = new (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020(options);
    else if (dialect === '2019-09')
      ajv = new (require('ajv/dist/2019.js') as { Ajv2019: typeof Ajv2019 }).Ajv2019(options);
    else ajv = new (require('ajv') as { Ajv: typeof Ajv }).Ajv(options);
    cache.set(dialect, ajv);
  }
  return ajv;
}

// Formats are not validated by the runtime either; an unknown keyword is the author's business.
const CHECK_OPTIONS: Options = { strict: false, allErrors: true, validateFormats: false, addUsedSchema: false };
const checkers = new Map<Dialect, AnyAjv>();

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
 * them: valid with the u flag, and within what the linear-time engine runs (shared/linear-regexp.ts).
 * Cheaper than compiling the whole schema for each tool.
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
      return;
    }
    const linear = linearPatternProblem(pattern);
    if (linear !== undefined) out.push({ path: at, message: linear });
  };
  for (const [key, item] of Object.entries(record)) {
    if (key === 'pattern' && typeof item === 'string') test(item, [...path, key]);
    else if (key === 'patternProperties' && asRecord(item) !== undefined) {
      for (const [pattern, sub] of Object.entries(item as Rec)) {
        test(pattern, [...path, key, pattern]);
        findBadPatterns(sub, [...path, key, pattern], out);
      }
    } else if (key !== 'enum' && key !== 'const' && key !== 'examples' && key !== 'default')
      findBadPatterns(item, [...path, key], out);
  }
}

/** Problems of one JSON Schema, with paths relative to it. */
export function validateJsonSchema(schema: Rec): Array<{ path: Path; message: string }> {
  const dialect = schemaDialect(schema);
  if (dialect === undefined) {
    return [
      {
        path: ['$schema'],
        message: 'unsupported $schema: use draft-07, 2019-09 or 2020-12 (or leave it out for 2020-12)',
      },
    ];
  }
  const { $schema: _declared, ...body } = schema;
  const problems: Array<{ path: Path; message: string }> = [];
  if (isPlainSchema(body)) {
    findBadPatterns(body, [], problems);
    return problems;
  }
  const ajv = ajvFor(dialect, CHECK_OPTIONS, checkers);
  if (ajv.validateSchema(body) !== true) return describeAjvErrors(ajv.errors ?? [], dialect);
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
      group.find((e) => e.keyword === 'enum') ??
      group.find((e) => !['anyOf', 'oneOf', 'if'].includes(e.keyword)) ??
      group[0]!;
    const allowed = (best.params as { allowedValues?: unknown[] }).allowedValues;
    const suffix = Array.isArray(allowed) ? ` (${allowed.map(String).join(', ')})` : '';
    out.push({
      path:
        pointer === ''
          ? []
          : pointer
              .slice(1)
              .split('/')
              .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
      message: `invalid JSON Schema (${dialect}): ${best.message ?? 'invalid'}${suffix}`,
    });
  }
  return out;
}

export function checkInputSchemas({ def, error }: CheckContext): void {
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
