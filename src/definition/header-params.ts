/**
 * Tool arguments a client also sends as HTTP headers (the 2026-07-28 revision's `x-mcp-header`
 * annotation on a property of a tool's inputSchema: the client sends `Mcp-Param-<Name>`, so a
 * proxy can route or filter on it without reading the body). Which properties are annotated, and
 * the checks of the definition: the annotation sits on a string, integer or boolean property
 * reached through `properties` alone, names an HTTP token, and no two names differ only in case.
 * Pure.
 */
import { asRecord, items, type CheckContext, type Path, type Rec } from './walk.js';

export const HEADER_PARAM_KEY = 'x-mcp-header';

/** One annotated argument: where it sits in the arguments, its header's name, and its JSON type. */
export interface HeaderParam {
  path: string[];
  header: string;
  type: 'string' | 'integer' | 'boolean';
}

// RFC 9110's token: what a header name may be made of.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const TYPES = new Set(['string', 'integer', 'boolean']);
// Keywords whose subschemas an argument is not statically at: an annotation there is refused.
const ELSEWHERE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
];
const MAPS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/** The annotated arguments of an inputSchema and the problems of its annotations (paths relative to it). */
export function scanHeaderParams(schema: unknown): {
  params: HeaderParam[];
  problems: Array<{ path: Path; message: string }>;
} {
  const params: HeaderParam[] = [];
  const problems: Array<{ path: Path; message: string }> = [];
  const seen = new Map<string, string>();
  const visit = (node: unknown, at: Path, args: string[] | undefined): void => {
    const record = asRecord(node);
    if (record === undefined) return;
    if (HEADER_PARAM_KEY in record) {
      const problem = annotationProblem(record, args, seen);
      if (problem !== undefined) problems.push({ path: [...at, HEADER_PARAM_KEY], message: problem });
      else
        params.push({
          path: args!,
          header: record[HEADER_PARAM_KEY] as string,
          type: record.type as HeaderParam['type'],
        });
    }
    for (const [name, sub] of Object.entries(asRecord(record.properties) ?? {}))
      visit(sub, [...at, 'properties', name], args === undefined ? undefined : [...args, name]);
    for (const key of ELSEWHERE) {
      const sub = record[key];
      if (Array.isArray(sub)) sub.forEach((branch, i) => visit(branch, [...at, key, i], undefined));
      else if (MAPS.has(key))
        for (const [name, branch] of Object.entries(asRecord(sub) ?? {})) visit(branch, [...at, key, name], undefined);
      else visit(sub, [...at, key], undefined);
    }
  };
  visit(schema, [], []);
  return { params, problems };
}

function annotationProblem(record: Rec, args: string[] | undefined, seen: Map<string, string>): string | undefined {
  if (args === undefined || args.length === 0)
    return `${HEADER_PARAM_KEY} belongs on a property reached through properties alone (not under items, anyOf, if, $defs and the like)`;
  const name = record[HEADER_PARAM_KEY];
  if (typeof name !== 'string' || !TOKEN.test(name))
    return `${HEADER_PARAM_KEY} must be a header name: letters, digits and !#$%&'*+-.^_\`|~, no spaces`;
  if (typeof record.type !== 'string' || !TYPES.has(record.type))
    return `${HEADER_PARAM_KEY} needs a property of type string, integer or boolean`;
  const earlier = seen.get(name.toLowerCase());
  if (earlier !== undefined) return `header names ignore case: "${name}" is the same header as "${earlier}"`;
  seen.set(name.toLowerCase(), name);
  return undefined;
}

/** The definition's check: each tool's annotations. */
export function checkHeaderParams({ def, error }: CheckContext): void {
  for (const [i, tool] of items(def.tools)) {
    if (asRecord(tool.inputSchema) === undefined) continue;
    for (const problem of scanHeaderParams(tool.inputSchema).problems)
      error(['tools', i, 'inputSchema', ...problem.path], problem.message);
  }
}
