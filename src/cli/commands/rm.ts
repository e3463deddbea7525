/**
 * `mcpctl rm <target…>`: DELETE /v1/deploy/{id} for deployments (any name the other commands
 * take) and DELETE /v1/servers/{mcp_id} for builds. Every target is found first, so a wrong one
 * removes nothing; a running deployment is refused before anything is asked. Removal cannot be
 * undone: a terminal asks, and where no one can be asked `--yes` says it.
 */
import { MCP_ID_PATTERN, type Deployment, type McpServer } from '../../api/operations.js';
import type { ApiClient } from '../../api/client.js';
import { UserError } from '../../shared/errors.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { askConfirm, canPrompt } from '../prompt.js';
import { deploymentTargetOptions, resolveDeployment, stableNameOf } from '../steps/deployment-target.js';
import type { RmOptions } from '../specs/service.js';

/** What one target names: a deployment (with the name it is best called by) or a build. */
type Target = { kind: 'deployment'; id: string; name: string; status: string } | { kind: 'server'; id: string };

/** What `--json` prints: what was removed, as it was. */
export interface RmResult {
  removed: Array<{ kind: 'deployment'; deployment: Deployment } | { kind: 'server'; server: McpServer }>;
}

export async function rmCommand(ctx: CommandContext, values: string[], options: RmOptions): Promise<void> {
  const result = await withApi(ctx, async (client): Promise<RmResult> => {
    const targets = await findTargets(ctx, client, values);
    refuseRunning(targets);
    await confirm(ctx, targets, options.yes === true);
    const removed: RmResult['removed'] = [];
    for (const target of targets) {
      if (target.kind === 'deployment')
        removed.push({ kind: 'deployment', deployment: await client.removeDeployment(target.id) });
      else removed.push({ kind: 'server', server: await client.removeServer(target.id) });
    }
    return { removed };
  });
  ctx.out.result(result, (p) => {
    for (const item of result.removed) {
      if (item.kind === 'deployment') {
        const d = item.deployment;
        p.success(`Removed ${d.deployment_id}${nameOf(d)}: its record, log and metrics`);
      } else p.success(`Removed build ${item.server.mcp_id} (${item.server.name}) and its bundle`);
    }
  });
}

async function findTargets(ctx: CommandContext, client: ApiClient, values: readonly string[]): Promise<Target[]> {
  const targets = new Map<string, Target>();
  for (const raw of values) {
    const value = raw.trim();
    if (MCP_ID_PATTERN.test(value)) {
      targets.set(value, { kind: 'server', id: value });
      continue;
    }
    const deployment = await resolveDeployment(client, value, deploymentTargetOptions(ctx, { command: 'rm' }));
    const id = deployment.deployment_id;
    targets.set(id, { kind: 'deployment', id, name: `${id}${nameOf(deployment)}`, status: deployment.status });
  }
  // deployments first: a build is removable once the deployments that ran it are gone
  return [...targets.values()].sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'deployment' ? -1 : 1));
}

function refuseRunning(targets: readonly Target[]): void {
  const running = targets.filter(
    (t): t is Extract<Target, { kind: 'deployment' }> =>
      t.kind === 'deployment' && (t.status === 'deployed' || t.status === 'deploying'),
  );
  const [first] = running;
  if (first === undefined) return;
  throw new UserError(
    running.length === 1
      ? `${first.name} is ${first.status}; only a stopped or failed deployment can be removed`
      : `${running.length} of these deployments run; only stopped or failed ones can be removed`,
    {
      code: 'conflict',
      problems: running.length === 1 ? [] : running.map((t) => ({ message: `${t.name} is ${t.status}` })),
      hint: `stop ${running.length === 1 ? 'it' : 'them'} first: ${running.map((t) => `mcpctl stop ${t.id}`).join('; ')}`,
    },
  );
}

async function confirm(ctx: CommandContext, targets: readonly Target[], yes: boolean): Promise<void> {
  if (yes) return;
  const what = targets.map((t) => (t.kind === 'deployment' ? t.name : `build ${t.id}`)).join(', ');
  if (!canPrompt(ctx)) {
    throw new UserError(`removing ${what} cannot be undone, and no one can be asked here`, {
      code: 'confirmation_needed',
      hint: 'pass --yes to remove without asking',
    });
  }
  const ok = await askConfirm(ctx, {
    message: `Remove ${what}? This cannot be undone.`,
    flag: '--yes',
    default: false,
  });
  if (!ok)
    throw new UserError('nothing was removed', { code: 'cancelled', hint: 'pass --yes to remove without asking' });
}

function nameOf(deployment: Deployment): string {
  const name = stableNameOf(deployment);
  return name === undefined ? '' : ` (${name})`;
}
