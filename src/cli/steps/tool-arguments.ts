/**
 * The arguments of `mcpctl call`: `--arg key=value` pairs typed by the tool's input schema, under a
 * `--json '{…}'` object. A shell gives every value as text, so the schema decides what it becomes:
 * a number, an integer, a boolean, JSON for objects and arrays, and text for everything else. A key
 * given twice builds an array. Pure: the problems come back as `{ path, message }` for the caller.
 */
import type { Problem } from '../../shared/errors.js';

/** The part of a JSON Schema the conversion reads; anything else in it is left alone. */
export interface ArgumentSchema {
  type?: string | string[];
  items?: ArgumentSchema;
  properties?: Record<string, ArgumentSchema>;
  required?: string[];
  additionalProperties?: boolean | object;
}

export interface ToolArguments {
  /** the object sent as the call's `arguments` */
  values: Record<string, unknown>;
  /** keys the schema does not name, for a warning (the server decides whether it takes them) */
  unknown: string[];
  problems: Problem[];
}

/** The arguments of one call, from `--json` (an object, or undefined) and the `--arg` pairs in order. */
export function toolArguments(
  schema: ArgumentSchema | undefined,
  pairs: readonly string[],
  json: string | undefined,
): ToolArguments {
  const problems: Problem[] = [];
  const values = parseJsonObject(json, problems);
  const properties = schema?.properties ?? {};
  const given = new Map<string, string[]>();
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) {
      problems.push({ path: '--arg', message: `"${pair}" is not key=value (such as --arg city=Berlin)` });
      continue;
    }
    const key = pair.slice(0, equals);
    given.set(key, [...(given.get(key) ?? []), pair.slice(equals + 1)]);
  }
  const unknown: string[] = [];
  for (const [key, texts] of given) {
    const property = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (property === undefined && schema?.properties !== undefined) unknown.push(key);
    const value = convertAll(key, texts, property, problems);
    if (value !== undefined) values[key] = value;
  }
  if (schema?.properties !== undefined) {
    for (const key of Object.keys(values)) if (!given.has(key) && !Object.hasOwn(properties, key)) unknown.push(key);
  }
  return { values, unknown, problems };
}

/** The required properties no argument gives. */
export function missingArguments(schema: ArgumentSchema | undefined, values: Record<string, unknown>): string[] {
  return (schema?.required ?? []).filter((key) => !Object.hasOwn(values, key));
}

function parseJsonObject(json: string | undefined, problems: Problem[]): Record<string, unknown> {
  if (json === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    problems.push({ path: '--json', message: `not JSON: ${error instanceof Error ? error.message : String(error)}` });
    return {};
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push({ path: '--json', message: 'must be a JSON object, such as {"city": "Berlin"}' });
    return {};
  }
  return { ...(parsed as Record<string, unknown>) };
}

/** The value of a key given once or more: an array property collects them, anything else takes one. */
function convertAll(key: string, texts: string[], property: ArgumentSchema | undefined, problems: Problem[]): unknown {
  const types = typesOf(property);
  if (types.includes('array')) {
    // one value that is a JSON array is the whole array; otherwise each value is one item
    const only = texts[0];
    if (texts.length === 1 && only !== undefined && only.trimStart().startsWith('[')) {
      return convert(key, only, { type: 'array' }, problems);
    }
    return texts.map((text, i) => convert(`${key}[${i}]`, text, property?.items, problems));
  }
  if (texts.length > 1 && property !== undefined) {
    problems.push({ path: key, message: `given ${texts.length} times, but it takes one value, not a list` });
    return undefined;
  }
  // a key the schema does not name, given several times: a list is the likelier meaning
  if (texts.length > 1) return texts;
  return convert(key, texts[0] ?? '', property, problems);
}

function typesOf(schema: ArgumentSchema | undefined): string[] {
  if (schema?.type === undefined) return [];
  return (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t) => t !== 'null');
}

/** One text as the schema's type; the first type it fits when the schema allows several. */
function convert(path: string, text: string, schema: ArgumentSchema | undefined, problems: Problem[]): unknown {
  const types = typesOf(schema);
  if (types.length === 0) return text;
  for (const type of types) {
    const value = convertTo(type, text);
    if (value !== NO_FIT) return value;
  }
  problems.push({ path, message: `"${text}" is not ${describeTypes(types)}` });
  return undefined;
}

const NO_FIT = Symbol('no fit');

function convertTo(type: string, text: string): unknown {
  const trimmed = text.trim();
  switch (type) {
    case 'number': {
      const n = trimmed === '' ? Number.NaN : Number(trimmed);
      return Number.isFinite(n) ? n : NO_FIT;
    }
    case 'integer': {
      const n = trimmed === '' ? Number.NaN : Number(trimmed);
      return Number.isSafeInteger(n) ? n : NO_FIT;
    }
    case 'boolean': {
      const lower = trimmed.toLowerCase();
      if (lower === 'true' || lower === 'yes' || lower === '1') return true;
      if (lower === 'false' || lower === 'no' || lower === '0') return false;
      return NO_FIT;
    }
    case 'object':
    case 'array':
      return parseJsonOf(type, trimmed);
    default:
      return text;
  }
}

function parseJsonOf(type: 'object' | 'array', text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    const isArray = Array.isArray(value);
    const fits = type === 'array' ? isArray : value !== null && typeof value === 'object' && !isArray;
    return fits ? value : NO_FIT;
  } catch {
    return NO_FIT;
  }
}

function describeTypes(types: string[]): string {
  const names: Record<string, string> = {
    number: 'a number',
    integer: 'a whole number',
    boolean: 'true or false',
    object: 'a JSON object',
    array: 'a JSON array',
  };
  return types.map((t) => names[t] ?? t).join(' or ');
}
