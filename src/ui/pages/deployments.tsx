/**
 * `#/`: the deployments that are running, deploying or failed, grouped by environment, refreshed
 * every few seconds; the stopped ones (an engine keeps every one it ever had) are counted, and
 * listed newest first, a page at a time, only when asked for.
 */
import { useState } from 'preact/hooks';
import type { Deployment, McpServer } from '../api-types.js';
import { getJson } from '../api.js';
import { Badge, CopyButton, ErrorBox, Loading, Section, TableWrap } from '../components/common.js';
import { ACTIVE_STATES, groupDeployments, instanceCounts, serverNames } from '../deployments-view.js';
import { formatAge } from '../format.js';
import { useNow, usePolling } from '../hooks.js';
import { routeHref } from '../route.js';

const REFRESH_MS = 3000;
/** Stopped deployments listed at first, and how many more each "show more" adds. */
const STOPPED_PAGE = 50;

const stoppedPath = (limit: number): string => `/v1/deployments?status=stopped&limit=${limit}`;

/** What this page reads first: main.tsx fetches them ahead when a log-in link opens the page. */
export const DEPLOYMENTS_PATHS = [`/v1/deployments?status=${ACTIVE_STATES.join(',')}`, '/v1/servers'] as const;

interface Listing {
  active: Deployment[];
  servers: McpServer[];
}

async function loadAll(signal: AbortSignal): Promise<Listing> {
  const [activePath, serversPath] = DEPLOYMENTS_PATHS;
  const [active, servers] = await Promise.all([
    getJson<{ deployments: Deployment[] }>(activePath, { signal }),
    getJson<{ servers: McpServer[] }>(serversPath, { signal }),
  ]);
  return { active: active.deployments, servers: servers.servers };
}

export function DeploymentsPage() {
  const { data, error } = usePolling(loadAll, 'deployments', REFRESH_MS);
  const now = useNow();
  if (data === undefined) return error === undefined ? <Loading what="deployments" /> : <ErrorBox error={error} />;
  const names = serverNames(data.servers);
  const groups = groupDeployments(data.active);
  return (
    <>
      <h1>Deployments</h1>
      {error === undefined ? null : <ErrorBox error={error} title="Could not refresh" />}
      {groups.length > 0 ? null : (
        <p class="notice">
          No deployment is running. Deploy a server with <code>mcpctl deploy</code>; it shows here within seconds.
        </p>
      )}
      {groups.map((group) => (
        <Section key={group.environment} title={group.environment}>
          <DeploymentTable rows={group.deployments} names={names} now={now} />
        </Section>
      ))}
      <Stopped names={names} now={now} />
      <p class="muted small-print">{servers(data.servers.length)}</p>
    </>
  );
}

/** How many deployments are stopped (counted apart: the list above does not wait for it), and them when asked. */
function Stopped({ names, now }: { names: Map<string, string>; now: number }) {
  const { data } = usePolling(
    (signal) => getJson<{ total: number }>(stoppedPath(0), { signal }),
    'stopped count',
    REFRESH_MS,
  );
  const [open, setOpen] = useState(false);
  if (data === undefined || data.total === 0) return null;
  return (
    <details open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>
        {data.total} stopped {data.total === 1 ? 'deployment' : 'deployments'}
      </summary>
      {open ? <StoppedDeployments names={names} now={now} /> : null}
    </details>
  );
}

/** The stopped deployments, newest first, STOPPED_PAGE more at a time. */
function StoppedDeployments({ names, now }: { names: Map<string, string>; now: number }) {
  const [limit, setLimit] = useState(STOPPED_PAGE);
  const { data, error } = usePolling(
    (signal) => getJson<{ deployments: Deployment[]; total: number }>(stoppedPath(limit), { signal }),
    `stopped ${limit}`,
    REFRESH_MS,
  );
  if (data === undefined)
    return error === undefined ? <Loading what="stopped deployments" /> : <ErrorBox error={error} />;
  const more = Math.min(STOPPED_PAGE, data.total - data.deployments.length);
  return (
    <>
      {error === undefined ? null : <ErrorBox error={error} title="Could not refresh" />}
      <DeploymentTable rows={data.deployments} names={names} now={now} withEnvironment />
      {more <= 0 ? null : (
        <button type="button" class="small" onClick={() => setLimit(limit + STOPPED_PAGE)}>
          Show {more} more
        </button>
      )}
    </>
  );
}

function servers(count: number): string {
  return `${count} ${count === 1 ? 'server' : 'servers'} built on this engine.`;
}

function DeploymentTable({
  rows,
  names,
  now,
  withEnvironment = false,
}: {
  rows: Deployment[];
  names: Map<string, string>;
  now: number;
  withEnvironment?: boolean;
}) {
  return (
    <TableWrap label="Deployments">
      <thead>
        <tr>
          <th scope="col">Server</th>
          {withEnvironment ? <th scope="col">Environment</th> : null}
          <th scope="col">State</th>
          <th scope="col">Instances healthy</th>
          <th scope="col">Stable URL</th>
          <th scope="col">Age</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((deployment) => {
          const { healthy, desired } = instanceCounts(deployment);
          const url = deployment.stable_urls?.[0] ?? `${deployment.url}/mcp`;
          const name = (deployment.mcp_id && names.get(deployment.mcp_id)) || deployment.mcp_id || 'unknown server';
          return (
            <tr key={deployment.deployment_id} data-deployment={deployment.deployment_id}>
              <td>
                <a href={routeHref({ page: 'deployment', id: deployment.deployment_id })}>{name}</a>
                <div class="muted mono">{deployment.deployment_id}</div>
              </td>
              {withEnvironment ? <td>{deployment.environment}</td> : null}
              <td>
                <Badge state={deployment.status} />
                {deployment.status === 'deploying' && deployment.stage ? (
                  <div class="muted">{deployment.stage}</div>
                ) : null}
              </td>
              <td>
                {deployment.status === 'stopped' ? '—' : deployment.idle === true ? 'idle' : `${healthy}/${desired}`}
              </td>
              <td class="url-cell">
                <code class="url">{url}</code> <CopyButton text={url} label={`Copy the URL of ${name}`} />
              </td>
              <td title={deployment.created_at}>{formatAge(deployment.created_at, now)}</td>
            </tr>
          );
        })}
      </tbody>
    </TableWrap>
  );
}
