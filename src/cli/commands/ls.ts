/**
 * `mcpctl ls`: the built servers and the deployments of the service, newest first, as two tables
 * (or one JSON document `{ servers, deployments }`). Filters: --env, --status, --server (a name or
 * an mcp_… id); --servers or --deployments shows only one of the two, and --env or --status, which
 * filter deployments only, show the deployments alone.
 */
import { DEPLOYMENT_STATES, MCP_ID_PATTERN, type Deployment, type McpServer } from '../../api/operations.js';
import type { DeploymentFilter } from '../../api/client.js';
import type { UnreadableRecord } from '../../api/engine-health.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { UserError } from '../../shared/errors.js';
import { visibleLength, type Printer } from '../output.js';
import { instanceCounts, stableNameOf } from '../render/deployment.js';
import { formatAgo } from '../render/format.js';
import { serviceData } from '../render/service-text.js';
import type { LsOptions } from '../specs/service.js';

export interface LsResult {
  servers?: McpServer[];
  deployments?: Deployment[];
  /** the service's records it could not read (moved aside): missing from both lists */
  unreadable_records?: UnreadableRecord[];
}

/** The widest a table is, unless --wide: a terminal narrower than this gets its own width. */
export const LS_MAX_COLUMNS = 100;

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

  const { servers, deployments, unreadable, local } = await withApi(ctx, async (client, connection) => {
    // Every server is fetched even with a filter: the deployments table names their servers.
    const [all, found, health] = await Promise.all([
      client.listServers(),
      showDeployments ? client.listDeployments(deploymentFilter) : Promise.resolve([]),
      // records the service could not read are missing from both lists; a service without it says nothing
      client.health().catch(() => undefined),
    ]);
    const aside = health?.unreadable_records ?? [];
    return { servers: all, deployments: found, unreadable: aside, local: connection.local };
  });
  const shownServers = servers.filter(
    (s) => options.server === undefined || (byId ? s.mcp_id === options.server : s.name === options.server),
  );
  const result: LsResult = {
    ...(showServers ? { servers: shownServers } : {}),
    ...(showDeployments ? { deployments } : {}),
    ...(unreadable.length === 0 ? {} : { unreadable_records: unreadable }),
  };
  const width = options.wide === true ? Number.POSITIVE_INFINITY : tableWidth(ctx);
  ctx.out.result(
    result,
    (p) => {
      // names, versions and URLs come from the service: control characters are shown as text
      const names = new Map(serviceData(servers).map((s) => [s.mcp_id, s.name]));
      if (showServers) renderServers(p, serviceData(shownServers), options.server !== undefined, width);
      if (showServers && showDeployments) p.line();
      if (showDeployments)
        renderDeployments(p, serviceData(deployments), names, Object.keys(deploymentFilter).length > 0, width);
      if (unreadable.length > 0) {
        const howMany = unreadable.length === 1 ? '1 record' : `${unreadable.length} records`;
        const where = local ? 'mcpctl engine status' : 'GET /v1/health of the service lists them';
        p.warn(`${howMany} could not be read and ${unreadable.length === 1 ? 'was' : 'were'} moved aside: ${where}`);
      }
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

function renderServers(p: Printer, servers: McpServer[], filtered: boolean, width: number): void {
  if (servers.length === 0) {
    p.line(filtered ? 'No server matches.' : 'No servers yet.');
    if (!filtered) p.next('build one: mcpctl build <file>');
    return;
  }
  const table = fitTable(
    ['SERVER', 'NAME', 'VERSION', 'TOOLS', 'RESOURCES', 'PROMPTS', 'BUILT'],
    servers.map((s) => [
      s.mcp_id,
      s.name,
      s.version ?? '',
      count(s.tools),
      count(s.resources),
      count(s.prompts),
      formatAgo(s.created_at) ?? '',
    ]),
    width,
    // the names and versions give way, widest first; ids, counts and times stay whole
    [1, 2],
  );
  p.table(table.headers, table.rows);
}

function renderDeployments(
  p: Printer,
  deployments: Deployment[],
  names: Map<string, string>,
  filtered: boolean,
  width: number,
): void {
  if (deployments.length === 0) {
    p.line(filtered ? 'No deployment matches.' : 'No deployments yet.');
    if (!filtered) p.next('deploy a server: mcpctl deploy <mcp_id|file> --env development');
    return;
  }
  // narrow enough for a 100-column terminal: the stable name stands for server and environment,
  // and the MCP URL is its path on the engine, named once below the table
  const bases = new Set<string>();
  const table = fitTable(
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
        d.idle === true ? 'idle' : live && counts !== undefined ? `${counts.healthy}/${counts.desired}` : '',
        formatAgo(d.updated_at ?? d.created_at) ?? '',
        // a stopped or failed deployment has no URL that reaches it
        stable?.path ?? (live ? d.url : ''),
      ];
    }),
    width,
    // long names give way first, then URLs (whose ends, the name's and `/mcp`, are kept)
    [0, 5],
  );
  p.table(table.headers, table.rows);
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

/** The width tables fit: LS_MAX_COLUMNS, or a narrower terminal's own (never under 60). */
function tableWidth(ctx: CommandContext): number {
  const columns = ctx.io.stdout.isTTY === true ? ctx.io.stdout.columns : undefined;
  return columns === undefined || columns <= 0 ? LS_MAX_COLUMNS : Math.max(60, Math.min(LS_MAX_COLUMNS, columns));
}

/** Cells no narrower than this are shortened no further (nor their header). */
const MIN_SHRUNK = 12;

/**
 * A table whose rows fit `width` columns (two spaces between columns, as Printer.table draws them):
 * the columns in `shrink` give way, the widest first, down to MIN_SHRUNK; a cut cell ends in `…` (a
 * URL keeps its end). Other cells, coloured ones among them, are never cut.
 */
export function fitTable(
  headers: string[],
  rows: string[][],
  width: number,
  shrink: number[],
): { headers: string[]; rows: string[][] } {
  const widths = headers.map((header, i) =>
    Math.max(visibleLength(header), ...rows.map((row) => visibleLength(row[i] ?? ''))),
  );
  let over = widths.reduce((sum, w) => sum + w, 0) + 2 * (headers.length - 1) - width;
  while (over > 0) {
    const widest = shrink
      .filter((i) => (widths[i] ?? 0) > Math.max(MIN_SHRUNK, headers[i]?.length ?? 0))
      .sort((a, b) => (widths[b] ?? 0) - (widths[a] ?? 0))[0];
    if (widest === undefined) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
    over -= 1;
  }
  const cut = (cell: string, i: number): string => {
    const max = widths[i] ?? 0;
    if (!shrink.includes(i) || visibleLength(cell) <= max) return cell;
    if (!cell.includes('/')) return `${cell.slice(0, max - 1)}…`;
    const tail = Math.ceil((max - 1) / 2);
    return `${cell.slice(0, max - 1 - tail)}…${cell.slice(cell.length - tail)}`;
  };
  return { headers, rows: rows.map((row) => row.map(cut)) };
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
