/** The smaller blocks of a deployment's page: notices, instances, transitions, its alerts and its usage. */
import { useState } from 'preact/hooks';
import type { Alerts, Deployment, Transition, Usage } from '../api-types.js';
import { ApiError, getJson } from '../api.js';
import { AlertTable } from '../components/alert-table.js';
import { Badge, ErrorBox, Loading, Section, TableWrap } from '../components/common.js';
import { formatAge, formatCount, formatRate, formatTime } from '../format.js';
import { usePolling } from '../hooks.js';

export function Notices({ notices }: { notices: string[] }) {
  if (notices.length === 0) return null;
  return (
    <Section title="Notices">
      <ul class="notices">
        {notices.map((notice) => (
          <li key={notice}>{notice}</li>
        ))}
      </ul>
    </Section>
  );
}

export function Instances({ deployment, now }: { deployment: Deployment; now: number }) {
  const instances = deployment.instances ?? [];
  return (
    <Section
      title={
        deployment.idle === true
          ? 'Instances (0: idle, wakes on request)'
          : `Instances (${instances.length} of ${deployment.desired_instances ?? instances.length} wanted)`
      }
    >
      {instances.length === 0 ? (
        <p class="muted">
          {deployment.idle === true ? 'Idle: no instance runs until a request starts one.' : 'No instance runs.'}
        </p>
      ) : (
        <TableWrap label="Instances">
          <thead>
            <tr>
              <th scope="col">Instance</th>
              <th scope="col">State</th>
              <th scope="col">Last check</th>
              <th scope="col">Restarts</th>
              <th scope="col">Port</th>
            </tr>
          </thead>
          <tbody>
            {instances.map((instance) => (
              <tr key={instance.id}>
                <td class="mono">{instance.id}</td>
                <td>
                  <Badge state={instance.state} />
                </td>
                <td title={instance.last_check ?? undefined}>{formatAge(instance.last_check, now)}</td>
                <td>{instance.restarts ?? 0}</td>
                <td>{instance.port ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
    </Section>
  );
}

export function Transitions({ transitions }: { transitions: Transition[] }) {
  if (transitions.length === 0) return null;
  return (
    <Section title="Transitions">
      <ol class="timeline">
        {transitions.map((transition, index) => (
          <li key={`${transition.at}-${index}`}>
            <time dateTime={transition.at}>{formatTime(transition.at)}</time> <Badge state={transition.status} />
            {transition.reason === undefined ? null : <span class="muted"> {transition.reason}</span>}
          </li>
        ))}
      </ol>
    </Section>
  );
}

export function DeploymentAlerts({ id, now }: { id: string; now: number }) {
  const { data, error } = usePolling(
    (signal) => getJson<Alerts>(`/v1/alerts?deployment=${encodeURIComponent(id)}`, { signal }),
    id,
    10_000,
  );
  // an engine without alerting (501) has nothing to show here
  if (error instanceof ApiError && error.status === 501) return null;
  const alerts = data === undefined ? [] : [...data.firing, ...(data.pending ?? []), ...data.recent];
  return (
    <Section title="Alerts">
      {data === undefined ? (
        error === undefined ? (
          <Loading what="alerts" />
        ) : (
          <ErrorBox error={error} />
        )
      ) : alerts.length === 0 ? (
        <p class="muted">No alert fired in the last 24 hours.</p>
      ) : (
        <AlertTable alerts={alerts} now={now} showDeployment={false} />
      )}
    </Section>
  );
}

const USAGE_SPANS = ['24h', '7d', '30d'] as const;

export function UsageTables({ id }: { id: string }) {
  const [span, setSpan] = useState<(typeof USAGE_SPANS)[number]>('7d');
  const { data, error } = usePolling(
    (signal) => getJson<Usage>(`/v1/deploy/${encodeURIComponent(id)}/usage?since=${span}`, { signal }),
    `${id} ${span}`,
    30_000,
  );
  const spans = (
    <div class="segmented" role="group" aria-label="Usage period">
      {USAGE_SPANS.map((s) => (
        <button key={s} type="button" class="small" aria-pressed={s === span} onClick={() => setSpan(s)}>
          {s}
        </button>
      ))}
    </div>
  );
  return (
    <Section title="Usage" actions={spans}>
      {data === undefined ? (
        error === undefined ? (
          <Loading what="usage" />
        ) : (
          <ErrorBox error={error} />
        )
      ) : (
        <div class="two-columns">
          <TableWrap label="Calls per tool">
            <caption>Calls per tool</caption>
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Calls</th>
                <th scope="col">Errors</th>
              </tr>
            </thead>
            <tbody>
              {data.tools.length === 0 ? <EmptyRow columns={3} /> : null}
              {data.tools.map((tool) => (
                <tr key={tool.name}>
                  <td>{tool.name}</td>
                  <td>{formatCount(tool.calls)}</td>
                  <td>{`${formatCount(tool.errors)} (${formatRate(tool.calls === 0 ? null : tool.errors / tool.calls)})`}</td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
          <TableWrap label="Requests per client">
            <caption>Requests per client</caption>
            <thead>
              <tr>
                <th scope="col">Client</th>
                <th scope="col">Requests</th>
                <th scope="col">Tool calls</th>
              </tr>
            </thead>
            <tbody>
              {data.clients.length === 0 ? <EmptyRow columns={3} /> : null}
              {data.clients.map((client) => (
                <tr key={`${client.name} ${client.version ?? ''}`}>
                  <td>
                    {client.name} {client.version === undefined ? null : <span class="muted">{client.version}</span>}
                  </td>
                  <td>{formatCount(client.requests)}</td>
                  <td>{formatCount(client.tool_calls)}</td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        </div>
      )}
    </Section>
  );
}

function EmptyRow({ columns }: { columns: number }) {
  return (
    <tr>
      <td colSpan={columns} class="muted">
        None yet.
      </td>
    </tr>
  );
}
