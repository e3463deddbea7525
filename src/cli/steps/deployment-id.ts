/** The check every command that takes a deployment id makes first. */
import { DEPLOYMENT_ID_PATTERN } from '../../api/operations.js';
import { UserError } from '../../shared/errors.js';

/** Throws a UserError (exit 2) naming what the value looks like instead. */
export function requireDeploymentId(value: string): void {
  if (DEPLOYMENT_ID_PATTERN.test(value)) return;
  throw new UserError(`not a deployment id: ${value}`, {
    hint: value.startsWith('mcp_')
      ? 'that is a server id; `mcpctl ls --server <mcp_id>` shows its deployments'
      : 'deployment ids look like deploy_9x2m4k7q1c; `mcpctl ls` lists them',
  });
}
