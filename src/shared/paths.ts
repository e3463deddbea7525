/**
 * How places are named to people: a field inside a document (`tools[0].inputSchema.required[1]`)
 * and a file on disk (relative to the working folder when it is inside it). Pure.
 */
import { isAbsolute, relative } from 'node:path';

/** A field's place inside a document: keys and array indexes, outermost first. */
export type FieldPath = ReadonlyArray<string | number>;

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** `['tools', 0, 'inputSchema', 'required', 1]` → `tools[0].inputSchema.required[1]`; other keys are quoted: `files["a b"]`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else {
      const key = String(segment);
      text += PLAIN_KEY.test(key) ? (text === '' ? key : `.${key}`) : `[${JSON.stringify(key)}]`;
    }
  }
  return text;
}

/** A file as shown in messages: relative to `cwd` when it is inside it, else as given (absolute). */
export function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel === '' || isAbsolute(rel) || rel.startsWith('..') ? path : rel;
}
