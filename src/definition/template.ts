/**
 * The `{{...}}` templates of handler content, URLs, paths and prompt messages: `{{args.name}}`,
 * `{{params.name}}`, `{{user.id}}`, `{{server.name}}`, and `{{args}}` for all arguments as JSON.
 * One grammar, read by the checker (which references a text makes, and which are malformed) and
 * by the runtime (templates compiled once when a definition is loaded, rendered per request).
 *
 * Pure: no IO.
 */

/** A `{{...}}` in a text: the expression inside (trimmed) and the text as written. */
export interface Placeholder {
  expression: string;
  raw: string;
}

/** A text cut into its literal pieces and its placeholders; `unclosed` when a `{{` has no `}}`. */
export function scanTemplate(text: string): { parts: Array<string | Placeholder>; unclosed: boolean } {
  const parts: Array<string | Placeholder> = [];
  let last = 0;
  let i = text.indexOf('{{');
  while (i !== -1) {
    const end = text.indexOf('}}', i + 2);
    if (end === -1) break;
    if (i > last) parts.push(text.slice(last, i));
    parts.push({ expression: text.slice(i + 2, end).trim(), raw: text.slice(i, end + 2) });
    last = end + 2;
    i = text.indexOf('{{', last);
  }
  if (last < text.length) parts.push(text.slice(last));
  return { parts, unclosed: i !== -1 };
}

export type TemplateRef =
  | { root: 'args'; name?: string }
  | { root: 'params'; name: string }
  | { root: 'user'; name: 'id' }
  | { root: 'server'; name: 'name' | 'version' };

/** The `{{...}}` references of a text, and the problems of malformed ones. */
export function parseTemplateRefs(text: string): { refs: TemplateRef[]; errors: string[] } {
  const refs: TemplateRef[] = [];
  const errors: string[] = [];
  const { parts, unclosed } = scanTemplate(text);
  for (const part of parts) {
    if (typeof part === 'string') continue;
    const ref = parseTemplateExpression(part.expression);
    if (ref === undefined) {
      errors.push(
        `{{${part.expression}}} is not a known value: use args.NAME, params.NAME, user.id, server.name or server.version`,
      );
    } else refs.push(ref);
  }
  if (unclosed) errors.push('has a {{ without a closing }}');
  return { refs, errors };
}

function parseTemplateExpression(expression: string): TemplateRef | undefined {
  if (expression === 'args') return { root: 'args' };
  let match = /^args\.([A-Za-z_][\w-]*)(\.[\w-]+)*$/.exec(expression);
  if (match !== null) return { root: 'args', name: match[1]! };
  match = /^params\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)$/.exec(expression);
  if (match !== null) return { root: 'params', name: match[1]! };
  if (expression === 'user.id') return { root: 'user', name: 'id' };
  if (expression === 'server.name' || expression === 'server.version')
    return { root: 'server', name: expression === 'server.name' ? 'name' : 'version' };
  return undefined;
}

/** The scope path a placeholder reads (`args.city` → ['args', 'city']), or undefined when it names no known value. */
function placeholderPath(placeholder: Placeholder): string[] | undefined {
  return parseTemplateExpression(placeholder.expression) === undefined ? undefined : placeholder.expression.split('.');
}

export interface TemplateScope {
  args?: Record<string, unknown>;
  params?: Record<string, unknown>;
  user?: { id?: string | undefined };
  server?: { name: string; version: string };
}

/** How a substituted value is written into the text. */
export type Encoder = (value: string) => string;

export interface Template {
  readonly source: string;
  /** true when the text holds at least one placeholder */
  readonly dynamic: boolean;
  /** the placeholder paths, such as `user.id` */
  readonly refs: string[];
  render(scope: TemplateScope, encode?: Encoder): string;
  /** the rendered text in pieces: literal text, and each inserted value with the placeholder it fills */
  renderPieces(scope: TemplateScope, encode?: Encoder): TemplatePiece[];
}

export interface TemplatePiece {
  text: string;
  /** the placeholder this piece fills (`args.id`); absent for literal text */
  ref?: string;
}

export function compileTemplate(source: string): Template {
  const parts = scanTemplate(source).parts.map((part) =>
    typeof part === 'string' ? part : (placeholderPath(part) ?? part.raw),
  );
  const refs = parts.filter((p): p is string[] => typeof p !== 'string').map((path) => path.join('.'));
  if (refs.length === 0) {
    return { source, dynamic: false, refs, render: () => source, renderPieces: () => [{ text: source }] };
  }
  const renderPieces = (scope: TemplateScope, encode?: Encoder): TemplatePiece[] =>
    parts.map((part) => {
      if (typeof part === 'string') return { text: part };
      const text = stringify(lookup(scope, part));
      return { text: encode === undefined ? text : encode(text), ref: part.join('.') };
    });
  return {
    source,
    dynamic: true,
    refs,
    render: (scope, encode) =>
      renderPieces(scope, encode)
        .map((piece) => piece.text)
        .join(''),
    renderPieces,
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
    const { parts } = scanTemplate(value);
    const path = parts.length === 1 && typeof parts[0] !== 'string' ? placeholderPath(parts[0]!) : undefined;
    if (path !== undefined) return (scope) => lookup(scope, path);
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
  else if (value !== null && typeof value === 'object')
    for (const item of Object.values(value)) collectRefs(item, into);
  return into;
}

/** Encodes a value for a URL: the whole value is one component, so `/`, `?` and `&` cannot change the URL's shape. */
export const encodeUrlValue: Encoder = (value) => encodeURIComponent(value);
