/**
 * `mcpctl ls`: the built servers and the deployments of the service, newest first, as two tables
 * (or one JSON document `{ servers, deployments }`). Filters: --env, --status, --server (a name or
 * an mcp_… id); --servers or --deployments shows only one of the two, and --env or --status, which
 * filter deployments only, show the deployments alone.
 */
import { DEPLOYMENT_STATES, MCP_ID_PATTERN, type Deployment, type McpServer } from '../../api/operations.js';
import type { DeploymentFilter } from '../../api/client.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { UserError } from '../../shared/errors.js';
import type { Printer } from '../output.js';
import { instanceCounts, stableNameOf } from '../render/deployment.js';
import { serviceData } from '../render/service-text.js';
import type { LsOptions } from '../specs/service.js';

export interface LsResult {
  servers?: McpServer[];
  deployments?: Deployment[];
}

export async function lsCommand(ctx: CommandContext, options: LsOptions): Promise<void> {
  if (options.status !== undefined && !(DEPLOYMENT_STATES as readonly string[]).includes(options.status)) {
    throw new UserError(`--status ${options.status} is not a deployment state`, {
      hint: `use one of ${DEPLOYMENT_STATES.join(', ')}`,
    });
  }
  if (options.servers === true && options.deployments === true) {
    throw new UserError('--servers and --deployments each show one table; give one of them, or neither for both');
  }
  const byId = options.server !== undefined && MCP_ID_PATTERN.test(options.server);
  const deploymentFilter: DeploymentFilter = {
    ...(options.env === undefined ? {} : { environment: options.env }),
    ...(options.status === undefined ? {} : { status: options.status }),
    ...(options.server === undefined ? {} : byId ? { mcp_id: options.server } : { name: options.server }),
  };
  // --env and --status only say something about deployments: they ask for that table alone.
  const showServers = options.deployments !== true && options.env === undefined && options.status === undefined;
  const showDeployments = options.servers !== true;

  const { servers, deployments } = await withApi(ctx, async (client) => {
    // Every server is fetched even with a filter: the deployments table names their servers.
    const [all, found] = await Promise.all([
      client.listServers(),
      showDeployments ? client.listDeployments(deploymentFilter) : Promise.resolve([]),
    ]);
    return { servers: all, deployments: found };
  });
  const shownServers = servers.filter(
    (s) => options.server === undefined || (byId ? s.mcp_id === options.server : s.name === options.server),
  );
  const result: LsResult = {
    ...(showServers ? { servers: shownServers } : {}),
    ...(showDeployments ? { deployments } : {}),
  };
  ctx.out.result(
    result,
    (p) => {
      // names, versions and URLs come from the service: control characters are shown as text
      const names = new Map(serviceData(servers).map((s) => [s.mcp_id, s.name]));
      if (showServers) renderServers(p, serviceData(shownServers), options.server !== undefined);
      if (showServers && showDeployments) p.line();
      if (showDeployments)
        renderDeployments(p, serviceData(deployments), names, Object.keys(deploymentFilter).length > 0);
    },
    // the ids of the rows shown, one per line: servers first, then deployments
    {
      quiet: () => [
        ...(result.servers ?? []).map((s) => s.mcp_id),
        ...(result.deployments ?? []).map((d) => d.deployment_id),
      ],
    },
  );
}

function renderServers(p: Printer, servers: McpServer[], filtered: boolean): void {
  if (servers.length === 0) {
    p.line(filtered ? 'No server matches.' : 'No servers yet.');
    if (!filtered) p.next('build one: mcpctl build <file>');
    return;
  }
  p.table(
    ['SERVER', 'NAME', 'VERSION', 'TOOLS', 'RESOURCES', 'PROMPTS', 'BUILT'],
    servers.map((s) => [
      s.mcp_id,
      s.name,
      s.version ?? '',
      count(s.tools),
      count(s.resources),
      count(s.prompts),
      ago(s.created_at),
    ]),
  );
}

function renderDeployments(p: Printer, deployments: Deployment[], names: Map<string, string>, filtered: boolean): void {
  if (deployments.length === 0) {
    p.line(filtered ? 'No deployment matches.' : 'No deployments yet.');
    if (!filtered) p.next('deploy a server: mcpctl deploy <mcp_id|file> --env development');
    return;
  }
  // narrow enough for a 100-column terminal: the stable name stands for server and environment,
  // and the MCP URL is its path on the engine, named once below the table
  const bases = new Set<string>();
  p.table(
    ['NAME', 'DEPLOYMENT', 'STATUS', 'INST', 'UPDATED', 'MCP URL'],
    newestFirst(deployments).map((d) => {
      const counts = instanceCounts(d);
      const live = d.status === 'deployed' || d.status === 'deploying';
      const stable = live ? splitStableUrl(d) : undefined;
      if (stable !== undefined) bases.add(stable.base);
      const server = (d.mcp_id === undefined ? undefined : names.get(d.mcp_id)) ?? d.mcp_id ?? '';
      return [
        stableNameOf(d) ?? (d.environment === undefined ? server : `${server.toLowerCase()}.${d.environment}`),
        d.deployment_id,
        colour(p, d.status),
        live && counts !== undefined ? `${counts.healthy}/${counts.desired}` : '',
        ago(d.updated_at ?? d.created_at),
        // a stopped or failed deployment has no URL that reaches it
        stable?.path ?? (live ? d.url : ''),
      ];
    }),
  );
  if (bases.size === 1) p.line(p.style.dim(`MCP URLs are on ${[...bases][0]!}`));
}

/** Newest first by when each was made; the service's order where it does not say. */
function newestFirst(deployments: Deployment[]): Deployment[] {
  const time = (d: Deployment) => Date.parse(d.created_at ?? '') || 0;
  return deployments
    .map((d, index) => ({ d, index }))
    .sort((a, b) => time(b.d) - time(a.d) || a.index - b.index)
    .map(({ d }) => d);
}

/** The path-form stable URL (`http://host:port/d/notes.production/mcp`) as its base and its path. */
function splitStableUrl(d: Deployment): { base: string; path: string } | undefined {
  const url = d.stable_urls?.find((u) => /\/d\/[^/]+\/mcp$/.test(u));
  const at = url?.indexOf('/d/') ?? -1;
  return url === undefined || at === -1 ? undefined : { base: url.slice(0, at), path: url.slice(at) };
}

function colour(p: Printer, status: Deployment['status']): string {
  if (status === 'deployed') return p.style.green(status);
  if (status === 'failed') return p.style.red(status);
  if (status === 'deploying') return p.style.cyan(status);
  return p.style.dim(status);
}

function count(n: number | undefined): string {
  return n === undefined ? '' : String(n);
}

/** `12 s ago`, `5 min ago`, `3 h ago`, `2 d ago`. */
export function ago(iso: string | undefined, now: number = Date.now()): string {
  const then = iso === undefined ? Number.NaN : Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}
