/**
 * The environment of each instance of a deployment: its env_vars, and for a server with OAuth the
 * URLs it is reached at, which its tokens name as their audience; when the engine exports traces,
 * the variable that has it report its spans; the deployment's request-state key (the runtime
 * takes it out of its environment at start).
 */
import { REQUEST_STATE_KEY_ENV } from '../../runtime/constants.js';
import { AUDIENCES_ENV } from '../../runtime/server/auth.js';
import type { DeploymentRecord } from '../records.js';
import { deploymentAudiences } from './addresses.js';
import type { LiveContext } from './live-context.js';

export function instanceEnvOf(id: string, record: DeploymentRecord, ctx: LiveContext): Record<string, string> {
  const env = { ...record.config.env_vars };
  const keys = ctx.requestStateKeys;
  if (keys !== undefined) env[REQUEST_STATE_KEY_ENV] = keys.keyOf(id);
  if (ctx.server.definition.auth?.type === 'oauth')
    env[AUDIENCES_ENV] = deploymentAudiences(record.deployment).join(' ');
  if (ctx.tracing !== undefined) Object.assign(env, ctx.tracing.instanceEnv);
  return env;
}
