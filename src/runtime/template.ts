/**
 * `{{...}}` templates of handler content, URLs, paths and prompt messages: `{{args.name}}`,
 * `{{params.name}}`, `{{user.id}}`, `{{server.name}}`, and `{{args}}` for all arguments as JSON.
 * Templates are parsed once when a definition is loaded and rendered per request.
 *
 * Pure: no IO.
 */

export interface TemplateScope {
  args?: Record<string, unknown>;
  params?: Record<string, unknown>;
  user?: { id?: string | undefined };
  server?: { name: string; version: string };
}

/** How a substituted value is written into the text. */
export type Encoder = (value: string) => string;

type Part = string | { path: string[] };

const PLACEHOLDER = /\{\{\s*([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)\s*\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{\s*([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)\s*\}\}$/;

export interface Template {
  readonly source: string;
  /** true when the text holds at least one placeholder */
  readonly dynamic: boolean;
  /** the placeholder paths, such as `user.id` */
  readonly refs: string[];
  render(scope: TemplateScope, encode?: Encoder): string;
}

export function compileTemplate(source: string): Template {
  const parts: Part[] = [];
  let last = 0;
  for (const match of source.matchAll(PLACEHOLDER)) {
    if (match.index > last) parts.push(source.slice(last, match.index));
    parts.push({ path: match[1]!.split('.') });
    last = match.index + match[0].length;
  }
  if (last < source.length) parts.push(source.slice(last));
  const refs = parts.filter((p): p is { path: string[] } => typeof p !== 'string').map((p) => p.path.join('.'));
  if (refs.length === 0) {
    return { source, dynamic: false, refs, render: () => source };
  }
  return {
    source,
    dynamic: true,
    refs,
    render(scope, encode) {
      let out = '';
      for (const part of parts) {
        if (typeof part === 'string') out += part;
        else {
          const text = stringify(lookup(scope, part.path));
          out += encode === undefined ? text : encode(text);
        }
      }
      return out;
    },
  };
}

/** The value a path names in the scope, or undefined. */
export function lookup(scope: TemplateScope, path: readonly string[]): unknown {
  let value: unknown = scope;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/**
 * Compiles every string inside a JSON value. A string that is exactly one placeholder renders
 * to the raw value, so `"{{args.days}}"` stays a number in a JSON body.
 */
export function compileDeep(value: unknown): (scope: TemplateScope) => unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_PLACEHOLDER.exec(value);
    if (whole !== null) {
      const path = whole[1]!.split('.');
      return (scope) => lookup(scope, path);
    }
    const template = compileTemplate(value);
    return template.dynamic ? (scope) => template.render(scope) : () => value;
  }
  if (Array.isArray(value)) {
    const items = value.map(compileDeep);
    return (scope) => items.map((item) => item(scope));
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, item]) => [key, compileDeep(item)] as const);
    return (scope) => Object.fromEntries(entries.map(([key, item]) => [key, item(scope)]));
  }
  return () => value;
}

/** All placeholder paths used anywhere inside a JSON value. */
export function collectRefs(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') for (const ref of compileTemplate(value).refs) into.add(ref);
  else if (Array.isArray(value)) for (const item of value) collectRefs(item, into);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) collectRefs(item, into);
  return into;
}

/** Encodes a value for a URL: the whole value is one component, so `/`, `?` and `&` cannot change the URL's shape. */
export const encodeUrlValue: Encoder = (value) => encodeURIComponent(value);
