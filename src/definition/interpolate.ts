/**
 * `${VAR}` environment references: `${VAR}`, `${VAR:-default}` (used when VAR is unset or empty),
 * and `$${` for a literal `${`. References resolve when they are needed (deploy time in the CLI,
 * start time in the runtime), never when a definition is loaded. Pure: the environment is passed in.
 */
import { ENV_NAME_PATTERN } from './names.js';
import { formatPath, type FieldPath } from '../shared/paths.js';
import { EnvSyntaxError, MissingEnvVarError } from './errors.js';

export type Env = Readonly<Record<string, string | undefined>>;

export type EnvPart = { kind: 'text'; text: string } | { kind: 'ref'; name: string; fallback?: string };

/**
 * Splits a string into literal text and references. Throws EnvSyntaxError for an unclosed `${`
 * or a name that is not an environment variable name.
 */
export function parseEnvRefs(value: string, field = ''): EnvPart[] {
  const parts: EnvPart[] = [];
  let text = '';
  let i = 0;
  while (i < value.length) {
    if (value.startsWith('$${', i)) {
      text += '${';
      i += 3;
      continue;
    }
    if (!value.startsWith('${', i)) {
      text += value[i];
      i += 1;
      continue;
    }
    const end = value.indexOf('}', i + 2);
    if (end === -1) throw new EnvSyntaxError(`unclosed \${ in "${value}"`, field);
    const inner = value.slice(i + 2, end);
    const sep = inner.indexOf(':-');
    const name = sep === -1 ? inner : inner.slice(0, sep);
    if (!ENV_NAME_PATTERN.test(name)) {
      throw new EnvSyntaxError(`"\${${inner}}" is not a variable reference: "${name}" is not a variable name`, field);
    }
    if (text !== '') parts.push({ kind: 'text', text });
    text = '';
    parts.push(sep === -1 ? { kind: 'ref', name } : { kind: 'ref', name, fallback: inner.slice(sep + 2) });
    i = end + 1;
  }
  if (text !== '') parts.push({ kind: 'text', text });
  return parts;
}

/** The syntax error of a string's references, or undefined when it has none. */
export function findEnvSyntaxError(value: string): string | undefined {
  try {
    parseEnvRefs(value);
    return undefined;
  } catch (error) {
    if (error instanceof EnvSyntaxError) return error.message;
    throw error;
  }
}

/** True when the string holds at least one `${VAR}` reference. */
export function hasEnvRefs(value: string): boolean {
  if (!value.includes('${')) return false;
  try {
    return parseEnvRefs(value).some((part) => part.kind === 'ref');
  } catch {
    return false;
  }
}

/**
 * Replaces the references of one string. A variable that is unset (or empty, for `:-`) without a
 * default throws MissingEnvVarError naming the variable and `path`.
 */
export function resolveEnvRefs(value: string, env: Env, path = ''): string {
  if (!value.includes('${')) return value;
  let out = '';
  for (const part of parseEnvRefs(value, path)) {
    if (part.kind === 'text') {
      out += part.text;
      continue;
    }
    const set = env[part.name];
    if (set !== undefined && (set !== '' || part.fallback === undefined)) out += set;
    else if (part.fallback !== undefined) out += part.fallback;
    else throw new MissingEnvVarError(part.name, path);
  }
  return out;
}

/**
 * Resolves every string inside `value` (objects and arrays, recursively; keys are kept as they are).
 * `basePath` names where `value` sits, so an error says `deploy.env_vars.API_KEY`.
 */
export function resolveEnvDeep<T>(value: T, env: Env, basePath: string | FieldPath = []): T {
  const base = typeof basePath === 'string' ? (basePath === '' ? [] : [basePath]) : [...basePath];
  return resolveAt(value, env, base) as T;
}

function resolveAt(value: unknown, env: Env, path: Array<string | number>): unknown {
  if (typeof value === 'string') return resolveEnvRefs(value, env, formatPath(path));
  if (Array.isArray(value)) return value.map((item, i) => resolveAt(item, env, [...path, i]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = resolveAt(item, env, [...path, key]);
    return out;
  }
  return value;
}

/**
 * The variable names referenced anywhere inside `value`, each once, in order of first use; with
 * `withoutDefault`, only those referenced without a `:-default` somewhere (they must be set).
 */
export function listEnvRefs(value: unknown, options: { withoutDefault?: boolean } = {}): string[] {
  const names = new Set<string>();
  const visit = (item: unknown): void => {
    if (typeof item === 'string') {
      if (!item.includes('${')) return;
      try {
        for (const part of parseEnvRefs(item)) {
          if (part.kind === 'ref' && (options.withoutDefault !== true || part.fallback === undefined))
            names.add(part.name);
        }
      } catch {
        // a malformed reference is reported by the checks, not here
      }
    } else if (Array.isArray(item)) item.forEach(visit);
    else if (item !== null && typeof item === 'object') Object.values(item).forEach(visit);
  };
  visit(value);
  return [...names];
}
