/** `#/alerts`: what fires now, what is about to, and what was resolved in the last 24 hours. */
import type { Alerts } from '../api-types.js';
import { ApiError, getJson } from '../api.js';
import { AlertTable } from '../components/alert-table.js';
import { ErrorBox, Loading, Section } from '../components/common.js';
import { useNow, usePolling } from '../hooks.js';

export function AlertsPage() {
  const { data, error } = usePolling((signal) => getJson<Alerts>('/v1/alerts', { signal }), 'alerts', 5000);
  const now = useNow();
  if (data === undefined) {
    if (error instanceof ApiError && error.status === 501) {
      return <p class="notice">This engine evaluates no alerts: it runs no deployments.</p>;
    }
    return error === undefined ? <Loading what="alerts" /> : <ErrorBox error={error} />;
  }
  const groups: { title: string; alerts: Alerts['firing']; empty: string }[] = [
    { title: 'Firing', alerts: data.firing, empty: 'Nothing is firing.' },
    { title: 'Pending', alerts: data.pending ?? [], empty: 'Nothing is about to fire.' },
    { title: 'Recent', alerts: data.recent, empty: 'No alert was resolved in the last 24 hours.' },
  ];
  return (
    <>
      <h1>Alerts</h1>
      {error === undefined ? null : <ErrorBox error={error} title="Could not refresh" />}
      <p class="muted">
        {data.channels === undefined || data.channels === 0
          ? 'Alerts are only listed here: no channel sends them anywhere.'
          : `Alerts are also sent to ${data.channels} ${data.channels === 1 ? 'channel' : 'channels'}.`}
      </p>
      {groups.map((group) => (
        <Section key={group.title} title={`${group.title} (${group.alerts.length})`}>
          {group.alerts.length === 0 ? (
            <p class="muted">{group.empty}</p>
          ) : (
            <AlertTable alerts={group.alerts} now={now} showDeployment />
          )}
        </Section>
      ))}
    </>
  );
}
