/**
 * Where a definition's `${VAR}` references are (what the runtime resolves at start, and `deploy:`),
 * the variables a server needs to start, and references that cannot be parsed. Pure.
 */
import { formatPath } from '../shared/paths.js';
import { AUTH_ENV_FIELDS } from './auth.js';
import { findEnvSyntaxError, listEnvRefs } from './interpolate.js';
import { asRecord, items, strings, type CheckContext, type Path, type Rec } from './walk.js';

/** Every field whose `${VAR}` references are resolved (by the runtime at start, or by deploy). */
export function listEnvFields(def: Rec): Array<[Path, string]> {
  const fields: Array<[Path, string]> = [];
  const push = (value: unknown, path: Path) => fields.push(...strings(value, path));
  const auth = asRecord(def.auth);
  for (const key of AUTH_ENV_FIELDS) push(auth?.[key], ['auth', key]);
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    const base: Path = ['tools', i, 'handler'];
    if (handler?.type === 'http') for (const key of ['url', 'headers']) push(handler[key], [...base, key]);
    if (handler?.type === 'exec') push(handler.env, [...base, 'env']);
  }
  for (const [i, resource] of items(def.resources)) {
    const source = asRecord(resource.source);
    if (source?.type === 'url')
      for (const key of ['url', 'headers']) push(source[key], ['resources', i, 'source', key]);
  }
  push(def.deploy, ['deploy']);
  return fields;
}

/**
 * The variables a server needs when it starts: the `${VAR}` references without a default in
 * what the runtime resolves (not `deploy:`), each once, with the first field that uses it. A
 * deployment must pass each in its env_vars, or the server cannot start.
 */
export function requiredEnvVars(def: unknown): Array<{ name: string; field: string }> {
  const record = asRecord(def);
  if (record === undefined) return [];
  const found = new Map<string, string>();
  for (const [path, text] of listEnvFields(record)) {
    if (path[0] === 'deploy' || !text.includes('${')) continue;
    for (const name of listEnvRefs(text, { withoutDefault: true }))
      if (!found.has(name)) found.set(name, formatPath(path));
  }
  return [...found].map(([name, field]) => ({ name, field }));
}

export function checkEnvRefs({ def, error }: CheckContext): void {
  for (const [path, text] of listEnvFields(def)) {
    if (!text.includes('${')) continue;
    const problem = findEnvSyntaxError(text);
    if (problem !== undefined) error(path, problem);
  }
}
