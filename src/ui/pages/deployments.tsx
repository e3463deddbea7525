/** `#/`: every deployment, grouped by environment, refreshed every few seconds. */
import type { Deployment, McpServer } from '../api-types.js';
import { getJson } from '../api.js';
import { Badge, CopyButton, ErrorBox, Loading, Section, TableWrap } from '../components/common.js';
import { groupDeployments, instanceCounts, serverNames } from '../deployments-view.js';
import { formatAge } from '../format.js';
import { useNow, usePolling } from '../hooks.js';
import { routeHref } from '../route.js';

const REFRESH_MS = 3000;

async function loadAll(signal: AbortSignal): Promise<{ deployments: Deployment[]; servers: McpServer[] }> {
  const [deployments, servers] = await Promise.all([
    getJson<{ deployments: Deployment[] }>('/v1/deployments', { signal }),
    getJson<{ servers: McpServer[] }>('/v1/servers', { signal }),
  ]);
  return { deployments: deployments.deployments, servers: servers.servers };
}

export function DeploymentsPage() {
  const { data, error } = usePolling(loadAll, 'deployments', REFRESH_MS);
  const now = useNow();
  if (data === undefined) return error === undefined ? <Loading what="deployments" /> : <ErrorBox error={error} />;
  const names = serverNames(data.servers);
  const groups = groupDeployments(data.deployments);
  return (
    <>
      <h1>Deployments</h1>
      {error === undefined ? null : <ErrorBox error={error} title="Could not refresh" />}
      {groups.length === 0 ? (
        <p class="notice">
          Nothing is deployed yet. Deploy a server with <code>mcpctl deploy</code>; it shows here within seconds.
        </p>
      ) : null}
      {groups.map((group) => (
        <Section key={group.environment} title={group.environment}>
          {group.active.length === 0 ? <p class="muted">No running deployment.</p> : null}
          {group.active.length === 0 ? null : <DeploymentTable rows={group.active} names={names} now={now} />}
          {group.stopped.length === 0 ? null : (
            <details>
              <summary>
                {group.stopped.length} stopped {group.stopped.length === 1 ? 'deployment' : 'deployments'}
              </summary>
              <DeploymentTable rows={group.stopped} names={names} now={now} />
            </details>
          )}
        </Section>
      ))}
      <p class="muted small-print">{servers(data.servers.length)}</p>
    </>
  );
}

function servers(count: number): string {
  return `${count} ${count === 1 ? 'server' : 'servers'} built on this engine.`;
}

function DeploymentTable({ rows, names, now }: { rows: Deployment[]; names: Map<string, string>; now: number }) {
  return (
    <TableWrap label="Deployments">
      <thead>
        <tr>
          <th scope="col">Server</th>
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
              <td>
                <Badge state={deployment.status} />
                {deployment.status === 'deploying' && deployment.stage ? (
                  <div class="muted">{deployment.stage}</div>
                ) : null}
              </td>
              <td>{deployment.status === 'stopped' ? '—' : `${healthy}/${desired}`}</td>
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
