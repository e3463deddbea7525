/**
 * zod's issues turned into one problem per field, the one translator for every caller. By default
 * (a definition file) the messages say what to write instead: the one branch of a union that fits
 * the value, the field a missing value is, and "did you mean" for an unknown field (from the fields
 * the JSON Schema allows at that path). `plain` keeps zod's own words (the HTTP API's details).
 * Pure.
 */
import type { z } from 'zod';
import type { DefinitionIssue } from './errors.js';
import { toEditorJsonSchema } from './schema-builders.js';

type ZodIssue = z.core.$ZodIssue;

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = input;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function toFieldPath(path: ReadonlyArray<PropertyKey>): Array<string | number> {
  return path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
}

export interface DescribeOptions {
  /**
   * zod's own messages, "unknown field" without a suggestion, and of a union the branch with the
   * fewest problems: the wording of the HTTP API's `validation_failed` details
   */
  plain?: boolean;
}

/** zod's plain wording: what the HTTP API answers. */
function describePlain(
  issue: ZodIssue,
  path: PropertyKey[],
  fieldPath: Array<string | number>,
  options: DescribeOptions,
): DefinitionIssue[] {
  if (issue.code === 'unrecognized_keys')
    return issue.keys.map((key) => ({
      path: [...fieldPath, key],
      atKey: true,
      severity: 'error',
      message: 'unknown field',
    }));
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // the alternative that came closest (fewest problems) rather than "invalid input"
    const best = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
    if (best.length > 0) return describeZodIssues(best, undefined, path, options);
  }
  return [{ path: fieldPath, severity: 'error', message: issue.message }];
}

/** Turns zod's issues into one problem per field; by default, with messages that say what to write instead. */
export function describeZodIssues(
  issues: readonly ZodIssue[],
  input: unknown,
  prefix: ReadonlyArray<PropertyKey> = [],
  options: DescribeOptions = {},
): DefinitionIssue[] {
  const out: DefinitionIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    const fieldPath = toFieldPath(path);
    if (options.plain === true) {
      out.push(...describePlain(issue, path, fieldPath, options));
      continue;
    }
    const value = valueAt(input, path);
    const field = String(path.at(-1) ?? 'value');
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) {
          const suggestion = suggestKey(key, toFieldPath(path));
          out.push({
            path: [...fieldPath, key],
            atKey: true,
            severity: 'error',
            message: `unknown field "${key}"${suggestion === undefined ? '' : `: did you mean "${suggestion}"?`}`,
          });
        }
        break;
      case 'invalid_union': {
        if (issue.discriminator !== undefined && issue.errors.length === 0) {
          const options = ('options' in issue ? (issue.options ?? []) : []).map(String);
          const list = options.join(', ');
          out.push({
            path: fieldPath,
            severity: 'error',
            message:
              value === undefined ? `missing required field "${field}" (one of ${list})` : `must be one of ${list}`,
          });
          break;
        }
        // Keep the one branch whose shape fits the value, and report its own problems.
        const fitting = issue.errors.filter(
          (branch) =>
            !branch.some(
              (sub) => sub.path.length === 0 && (sub.code === 'invalid_type' || sub.code === 'invalid_value'),
            ),
        );
        if (fitting.length === 1) out.push(...describeZodIssues(fitting[0]!, input, path));
        else
          out.push({
            path: fieldPath,
            severity: 'error',
            message: 'does not match any of the allowed forms (see docs/definition.md)',
          });
        break;
      }
      case 'invalid_type':
        out.push({
          path: fieldPath,
          severity: 'error',
          message: !issue.message.startsWith('Invalid input')
            ? issue.message // the schema's own words (what a missing field is for)
            : value === undefined && path.length > 0
              ? `missing required field "${field}"`
              : issue.message.replace(/^Invalid input: /, '').replace(/, received /, ', got '),
        });
        break;
      case 'invalid_value':
        out.push({
          path: fieldPath,
          severity: 'error',
          message: issue.message.startsWith('Invalid')
            ? value === undefined && path.length > 0
              ? `missing required field "${field}" (${issue.values.map(String).join(', ')})`
              : issue.values.length === 1
                ? `must be ${JSON.stringify(issue.values[0])}`
                : `must be one of ${issue.values.map(String).join(', ')}`
            : issue.message,
        });
        break;
      case 'invalid_key':
        out.push({
          path: fieldPath,
          atKey: true,
          severity: 'error',
          message: `invalid key "${field}": ${issue.issues.map((sub) => sub.message).join('; ')}`,
        });
        break;
      default:
        out.push({ path: fieldPath, severity: 'error', message: issue.message });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// "did you mean": the fields the JSON Schema allows at a path

let editorSchema: Record<string, unknown> | undefined;

function suggestKey(key: string, parentPath: ReadonlyArray<string | number>): string | undefined {
  editorSchema ??= toEditorJsonSchema();
  const candidates = new Set<string>();
  collectKeys(editorSchema, parentPath, candidates);
  let best: string | undefined;
  let bestDistance = Infinity;
  const wanted = normalizeKey(key);
  for (const candidate of candidates) {
    const distance = normalizeKey(candidate) === wanted ? 0 : editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.min(2, Math.floor(key.length / 3)) ? best : undefined;
}

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

function collectKeys(schema: unknown, path: ReadonlyArray<string | number>, out: Set<string>): void {
  if (schema === null || typeof schema !== 'object') return;
  const node = schema as Record<string, unknown>;
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(node[key])) for (const branch of node[key] as unknown[]) collectKeys(branch, path, out);
  }
  const properties = node.properties as Record<string, unknown> | undefined;
  if (path.length === 0) {
    for (const key of Object.keys(properties ?? {})) out.add(key);
    return;
  }
  const [head, ...rest] = path;
  if (typeof head === 'number') collectKeys(node.items, rest, out);
  else if (properties?.[head!] !== undefined) collectKeys(properties[head!], rest, out);
  else if (typeof node.additionalProperties === 'object') collectKeys(node.additionalProperties, rest, out);
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}
