/**
 * Which values of a runtime process's environment are the deployment's own, and so secrets
 * (`serve-bundle --env-is-secret`): every one but the variables a process is given whatever the
 * deployment (PATH, auth's URLs and public keys, what a container, its base image or Kubernetes set).
 */
import { AUDIENCES_ENV, LOCAL_JWKS_ENV } from '../server/auth.js';

/**
 * Variables a process is given besides the deployment's own: not secrets (auth's are URLs and public
 * keys; the rest are what a container, its base image or Kubernetes set, whatever the deployment).
 */
const SYSTEM_VARIABLES = new Set([
  'PATH',
  'SystemRoot',
  AUDIENCES_ENV,
  LOCAL_JWKS_ENV,
  'HOME',
  'HOSTNAME',
  'NODE_ENV',
  'NODE_VERSION',
  'YARN_VERSION',
  'TERM',
  'LANG',
  'PWD',
  'SHLVL',
]);
/** Kubernetes' own (KUBERNETES_SERVICE_HOST, KUBERNETES_PORT_443_TCP...): addresses of the cluster's API. */
const SYSTEM_PREFIX = 'KUBERNETES_';

export function environmentValues(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        !SYSTEM_VARIABLES.has(name) && !name.startsWith(SYSTEM_PREFIX) && value !== undefined && value !== '',
    )
    .map(([, value]) => value!);
}
