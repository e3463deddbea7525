/**
 * JSON Schema validation of tool arguments and structured output. Each schema is compiled once,
 * when a definition is loaded, and the compiled function is reused by every request. `pattern`
 * and `patternProperties` run on a linear-time engine (shared/linear-regexp.ts).
 */
import type { ErrorObject, Options } from 'ajv';
import { ajvFor, schemaDialect, type AnyAjv, type Dialect } from '../../definition/json-schema.js';
import { linearRegExpEngine } from '../../shared/linear-regexp.js';

export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; problems: string[] };
export type Validator = (value: unknown) => ValidationResult;

/**
 * Schemas are checked against their meta-schema by one ajv per dialect for the whole process:
 * compiling a meta-schema costs more than compiling most servers' schemas, so it is done once
 * (a warm runtime process does it before it is given a bundle), not once per definition.
 */
const META_OPTIONS: Options = { allErrors: true, strict: false, validateFormats: false };
const metaCheckers = new Map<Dialect, AnyAjv>();

function checkSchema(schema: Record<string, unknown>, dialect: Dialect): void {
  const meta = ajvFor(dialect, META_OPTIONS, metaCheckers);
  // the message ajv's own check gives
  if (meta.validateSchema(schema) !== true) throw new Error(`schema is invalid: ${meta.errorsText(meta.errors)}`);
}

/** Compiles the meta-schema of the default dialect now, ahead of the first definition. */
export function prepareSchemaChecks(): void {
  checkSchema({ type: 'object' }, '2020-12');
}

/** One compiler per definition: ajv caches by schema, so equal schemas compile once. */
export function createSchemaCompiler(): (schema: Record<string, unknown>) => Validator {
  // defaults fill in missing arguments; formats are annotations here, as in most MCP servers
  // patterns run on RE2 (linear time), never on the backtracking RegExp
  const options: Options = {
    allErrors: true,
    strict: false,
    useDefaults: true,
    validateFormats: false,
    validateSchema: false,
    code: { regExp: linearRegExpEngine },
  };
  const compilers = new Map<Dialect, AnyAjv>();
  return (schema) => {
    // no $schema means 2020-12, as MCP specifies; `mcpctl validate` rejects unknown dialects
    const dialect = schemaDialect(schema) ?? '2020-12';
    const ajv = ajvFor(dialect, options, compilers);
    const { $schema: _dialect, ...rest } = schema;
    checkSchema(rest, dialect);
    const validate = ajv.compile(rest);
    // ajv writes into what it validates only to fill in defaults: a schema without any is checked as it is
    const fills = JSON.stringify(rest).includes('"default"');
    return (value) => {
      // validate a copy: defaults are written into it, never into the caller's object
      const copy: unknown = value === undefined ? {} : fills ? structuredClone(value) : value;
      if (validate(copy)) return { ok: true, value: copy as Record<string, unknown> };
      return { ok: false, problems: (validate.errors ?? []).map(describeError) };
    };
  };
}

/** `/items/0/name` → `items[0].name` */
function fieldPath(pointer: string, extra?: string): string {
  const segments =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) segments.push(extra);
  let out = '';
  for (const segment of segments) out += /^\d+$/.test(segment) ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  return out;
}

export function describeError(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${fieldPath(error.instancePath, String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${fieldPath(error.instancePath, String(params.additionalProperty))} is not an accepted argument`;
    case 'type':
      return `${fieldPath(error.instancePath) || 'arguments'} must be ${String(params.type)}`;
    case 'enum':
      return `${fieldPath(error.instancePath) || 'arguments'} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${fieldPath(error.instancePath) || 'arguments'} ${error.message ?? 'is invalid'}`;
  }
}
