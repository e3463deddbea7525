/**
 * `mcpctl usage [deployment] [--since 7d]`: who used a deployment and how, per UTC day as the
 * engine keeps it: calls per tool, requests per client (the MCP clientInfo), per user (where the
 * deployment checks credentials) and per day. `--json` prints the usage document.
 */
import type { Usage } from '../../api/usage.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import type { Printer } from '../output.js';
import { formatRate } from '../render/format.js';
import { deploymentIdOf } from '../steps/deployment-target.js';
import type { UsageOptions } from '../specs/service.js';

export async function usageCommand(
  ctx: CommandContext,
  target: string | undefined,
  options: UsageOptions,
): Promise<void> {
  const deploymentId = await deploymentIdOf(ctx, target, { file: options.file, command: 'usage' });
  const usage = await withApi(ctx, (client) => client.usage(deploymentId, options.since));
  ctx.out.result(usage, (p) => renderUsage(p, usage), {
    quiet: () => `requests=${usage.totals.requests} tool_calls=${usage.totals.tool_calls}`,
  });
}

export function renderUsage(p: Printer, u: Usage): void {
  p.line(p.style.bold(`${u.deployment_id}, since ${u.since.slice(0, 10)} (UTC days)`));
  const errorRate = (errors: number, calls: number) => (calls === 0 ? '–' : formatRate(errors / calls));
  p.fields([
    ['requests', u.totals.requests],
    ['errors', u.totals.errors],
    ['tool calls', u.totals.tool_calls],
    ['tool errors', `${u.totals.tool_errors} (${errorRate(u.totals.tool_errors, u.totals.tool_calls)})`],
  ]);
  if (u.totals.requests === 0) {
    p.next('no requests in this span; send some to the deployment’s URL + /mcp, or look further back with --since');
    return;
  }
  if (u.tools.length > 0) {
    p.line();
    p.table(
      ['TOOL', 'CALLS', 'ERRORS', 'ERROR RATE'],
      u.tools.map((t) => [t.name, t.calls, t.errors, errorRate(t.errors, t.calls)]),
    );
  }
  p.line();
  p.table(
    ['CLIENT', 'VERSION', 'REQUESTS', 'TOOL CALLS'],
    u.clients.map((c) => [c.name, c.version ?? '–', c.requests, c.tool_calls]),
  );
  p.line();
  if (u.users.length === 0) p.line(p.style.dim('no users: the deployment checks no credentials that name a user'));
  else
    p.table(
      ['USER', 'REQUESTS', 'TOOL CALLS'],
      u.users.map((x) => [x.user, x.requests, x.tool_calls]),
    );
  p.line();
  p.table(
    ['DAY', 'REQUESTS', 'ERRORS', 'TOOL CALLS', 'TOOL ERRORS'],
    u.days.map((d) => [d.day, d.requests, d.errors, d.tool_calls, d.tool_errors]),
  );
}
