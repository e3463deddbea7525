/**
 * Literal secrets in a definition (warnings): a token, a key or a password written into the file
 * instead of taken from the environment. Pure.
 */
import { isSecretName } from '../shared/secret-name.js';
import { hasEnvRefs } from './interpolate.js';
import { asArray, asRecord, items, type CheckContext, type Path } from './walk.js';

const SECRET_VALUE =
  /^(sk|pk|rk)[-_][A-Za-z0-9]|^gh[pousr]_|^xox[abprs]-|^AKIA[0-9A-Z]{16}$|^eyJ[\w-]+\.[\w-]+\.|^Bearer\s+\S{8,}/;

/** True when a literal value under `name` looks like a secret that belongs in the environment. */
export function looksLikeSecret(name: string, value: string): boolean {
  if (value === '' || hasEnvRefs(value)) return false;
  return isSecretName(name) || SECRET_VALUE.test(value);
}

export function checkSecrets({ def, warn }: CheckContext): void {
  const auth = asRecord(def.auth);
  const tokens: Array<[Path, unknown]> = [
    [['auth', 'token'], auth?.token],
    ...asArray(auth?.tokens).map((t, i): [Path, unknown] => [['auth', 'tokens', i], t]),
  ];
  for (const [path, token] of tokens) {
    if (typeof token === 'string' && token !== '' && !hasEnvRefs(token)) {
      warn(
        path,
        'a literal token: anyone who can read this file can call the server; use ${MCP_AUTH_TOKEN} and set it at deploy time',
      );
    }
  }
  const map = (value: unknown, path: Path) => {
    for (const [key, item] of Object.entries(asRecord(value) ?? {})) {
      if (typeof item === 'string' && looksLikeSecret(key, item)) {
        warn([...path, key], 'looks like a literal secret: take it from the environment with a ${VAR} reference');
      }
    }
  };
  const deploy = asRecord(def.deploy);
  map(deploy?.env_vars, ['deploy', 'env_vars']);
  for (const [env, target] of Object.entries(asRecord(deploy?.environments) ?? {})) {
    map(asRecord(target)?.env_vars, ['deploy', 'environments', env, 'env_vars']);
  }
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    if (handler?.type === 'http') map(handler.headers, ['tools', i, 'handler', 'headers']);
    if (handler?.type === 'exec') map(handler.env, ['tools', i, 'handler', 'env']);
  }
  for (const [i, resource] of items(def.resources)) {
    const source = asRecord(resource.source);
    if (source?.type === 'url') map(source.headers, ['resources', i, 'source', 'headers']);
  }
}
