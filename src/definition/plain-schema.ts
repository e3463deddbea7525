/**
 * A fast, certain "yes" for the JSON Schemas most tools declare (types, properties, required,
 * enums, bounds, combinators), so `mcpctl validate` need not load ajv and compile the meta-schema
 * for them. It never reports a problem: anything it does not recognise, or any value whose shape
 * it is unsure of, is "not sure" and goes to ajv, which gives the exact messages. Pure.
 */
import { asRecord, type Rec } from './walk.js';

type Shape = (value: unknown, depth: number) => boolean;

const TYPES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);

const isString: Shape = (v) => typeof v === 'string';
const isBoolean: Shape = (v) => typeof v === 'boolean';
const isNumber: Shape = (v) => typeof v === 'number' && Number.isFinite(v);
const isCount: Shape = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isAnything: Shape = () => true;
const isArray: Shape = (v) => Array.isArray(v);
const isSchema: Shape = (v, depth) => typeof v === 'boolean' || isPlainSchema(v, depth + 1);
const isSchemaMap: Shape = (v, depth) => {
  const record = asRecord(v);
  return record !== undefined && Object.values(record).every((item) => isSchema(item, depth));
};
const isSchemaList: Shape = (v, depth) => Array.isArray(v) && v.length > 0 && v.every((item) => isSchema(item, depth));
const isUniqueStrings: Shape = (v) => Array.isArray(v) && v.every(isString) && new Set(v).size === v.length;
const isType: Shape = (v) =>
  typeof v === 'string'
    ? TYPES.has(v)
    : Array.isArray(v) &&
      v.length > 0 &&
      v.every((t) => typeof t === 'string' && TYPES.has(t)) &&
      new Set(v).size === v.length;

/**
 * The keywords recognised, each with the shape the draft-07, 2019-09 and 2020-12 meta-schemas all
 * accept. `items` as an array, `$ref`, `$id`, `$defs` and the like are left to ajv.
 */
const KEYWORDS: Record<string, Shape> = {
  type: isType,
  title: isString,
  description: isString,
  $comment: isString,
  format: isString,
  pattern: isString,
  default: isAnything,
  const: isAnything,
  enum: isArray,
  examples: isArray,
  deprecated: isBoolean,
  readOnly: isBoolean,
  writeOnly: isBoolean,
  uniqueItems: isBoolean,
  minimum: isNumber,
  maximum: isNumber,
  exclusiveMinimum: isNumber,
  exclusiveMaximum: isNumber,
  multipleOf: (v, depth) => isNumber(v, depth) && (v as number) > 0,
  minLength: isCount,
  maxLength: isCount,
  minItems: isCount,
  maxItems: isCount,
  minProperties: isCount,
  maxProperties: isCount,
  required: isUniqueStrings,
  properties: isSchemaMap,
  additionalProperties: isSchema,
  items: isSchema,
  not: isSchema,
  anyOf: isSchemaList,
  oneOf: isSchemaList,
  allOf: isSchemaList,
};

/** True only when `value` is certainly a valid JSON Schema in all three dialects; false means "ask ajv". */
export function isPlainSchema(value: unknown, depth = 0): boolean {
  const record: Rec | undefined = asRecord(value);
  if (record === undefined || depth > 32) return false;
  for (const key in record) {
    const shape = KEYWORDS[key];
    if (shape === undefined || !shape(record[key], depth)) return false;
  }
  return true;
}
