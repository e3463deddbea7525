/**
 * `#/d/<deployment_id>`: one deployment, live. The status follows the engine by long-poll; the
 * charts, usage, alerts and log tail have their own sources. Stop and rollback go through the same
 * /v1 operations the CLI uses, after a confirmation that names the deployment.
 */
import { useState } from 'preact/hooks';
import type { Deployment, McpServer } from '../api-types.js';
import { describeError, getJson, postJson } from '../api.js';
import { Badge, CopyButton, ErrorBox, Loading } from '../components/common.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { formatAge, formatDuration, formatTime } from '../format.js';
import { useNow, usePolling } from '../hooks.js';
import { routeHref } from '../route.js';
import { Charts } from './charts.js';
import { DeploymentAlerts, Instances, Notices, Transitions, UsageTables } from './deployment-parts.js';
import { useDeploymentStatus } from './deployment-status.js';
import { LogTail } from './log-tail.js';

export function DeploymentPage({ id }: { id: string }) {
  const status = useDeploymentStatus(id);
  const now = useNow();
  const mcpId = status.deployment?.mcp_id;
  const server = usePolling(
    (signal) =>
      mcpId === undefined
        ? Promise.resolve(undefined)
        : getJson<McpServer>(`/v1/servers/${encodeURIComponent(mcpId)}`, { signal }),
    mcpId ?? '',
    0,
  );
  const { deployment, error } = status;
  if (deployment === undefined) {
    return error === undefined ? <Loading what="the deployment" /> : <ErrorBox error={error} />;
  }
  const name = server.data?.name ?? deployment.mcp_id ?? 'deployment';
  return (
    <>
      <p class="crumbs">
        <a href={routeHref({ page: 'deployments' })}>Deployments</a> / {deployment.deployment_id}
      </p>
      <div class="page-head">
        <h1>
          {deployment.mcp_id === undefined ? (
            name
          ) : (
            <a href={routeHref({ page: 'server', id: deployment.mcp_id })}>{name}</a>
          )}{' '}
          <span class="muted">{deployment.environment}</span>
        </h1>
        <Badge state={deployment.status} />
      </div>
      {error === undefined ? null : <ErrorBox error={error} title="Live status interrupted; retrying" />}
      <Summary deployment={deployment} now={now} />
      <Actions deployment={deployment} name={name} onChange={status.show} />
      <Notices notices={deployment.notices ?? []} />
      <Charts id={deployment.deployment_id} />
      <Instances deployment={deployment} now={now} />
      <Transitions transitions={deployment.transitions ?? []} />
      <DeploymentAlerts id={deployment.deployment_id} now={now} />
      <UsageTables id={deployment.deployment_id} />
      <LogTail id={deployment.deployment_id} />
    </>
  );
}

function Summary({ deployment, now }: { deployment: Deployment; now: number }) {
  const url = deployment.stable_urls?.[0] ?? `${deployment.url}/mcp`;
  return (
    <dl class="summary card">
      <dt>URL</dt>
      <dd>
        <code class="url">{url}</code> <CopyButton text={url} label="Copy the URL" />
      </dd>
      {deployment.stable_urls !== undefined && deployment.stable_urls[0] !== `${deployment.url}/mcp` ? (
        <>
          <dt>This deployment</dt>
          <dd>
            <code class="url">{`${deployment.url}/mcp`}</code>
          </dd>
        </>
      ) : null}
      <dt>Deployed</dt>
      <dd title={deployment.created_at}>
        {deployment.created_at === undefined
          ? '—'
          : `${formatTime(deployment.created_at)} (${formatAge(deployment.created_at, now)})`}
        {deployment.deploy_time === null ? null : `, took ${formatDuration(deployment.deploy_time)}`}
      </dd>
      {deployment.stage === undefined ? null : (
        <>
          <dt>Stage</dt>
          <dd>{deployment.stage}</dd>
        </>
      )}
      {deployment.reason === undefined ? null : (
        <>
          <dt>Reason</dt>
          <dd>{deployment.reason}</dd>
        </>
      )}
      {deployment.runner === undefined ? null : (
        <>
          <dt>Runner</dt>
          <dd>{deployment.runner}</dd>
        </>
      )}
    </dl>
  );
}

type Action = 'stop' | 'rollback';
type Outcome = { kind: 'done'; text: string; next?: Deployment } | { kind: 'failed'; message: string; hint?: string };

function Actions({
  deployment,
  name,
  onChange,
}: {
  deployment: Deployment;
  name: string;
  onChange: (d: Deployment) => void;
}) {
  const [asking, setAsking] = useState<Action | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>(undefined);
  const id = deployment.deployment_id;
  const run = async (action: Action): Promise<void> => {
    setBusy(true);
    try {
      const answer = await postJson<Deployment>(`/v1/deploy/${encodeURIComponent(id)}/${action}`);
      if (action === 'stop') {
        onChange(answer);
        setOutcome({ kind: 'done', text: `Stopped ${id}.` });
      } else {
        setOutcome({ kind: 'done', text: `Rolling back: ${answer.deployment_id} is ${answer.status}.`, next: answer });
      }
    } catch (error) {
      setOutcome({ kind: 'failed', ...describeError(error) });
    } finally {
      setBusy(false);
      setAsking(undefined);
    }
  };
  return (
    <div class="actions">
      <button
        type="button"
        class="danger"
        disabled={deployment.status !== 'deployed'}
        onClick={() => setAsking('stop')}
      >
        Stop
      </button>
      <button type="button" disabled={deployment.status === 'deploying'} onClick={() => setAsking('rollback')}>
        Roll back
      </button>
      <div aria-live="polite">
        {outcome?.kind === 'done' ? (
          <p class="ok-text">
            {outcome.text}{' '}
            {outcome.next === undefined ? null : (
              <a href={routeHref({ page: 'deployment', id: outcome.next.deployment_id })}>Open the new deployment</a>
            )}
          </p>
        ) : outcome?.kind === 'failed' ? (
          <div class="error" role="alert">
            {outcome.message}
            {outcome.hint === undefined ? null : <div class="hint">{outcome.hint}</div>}
          </div>
        ) : null}
      </div>
      {asking === undefined ? null : (
        <ConfirmDialog
          title={asking === 'stop' ? `Stop ${name}?` : `Roll back ${name}?`}
          confirmLabel={asking === 'stop' ? 'Stop it' : 'Roll back'}
          busy={busy}
          onConfirm={() => void run(asking)}
          onClose={() => setAsking(undefined)}
        >
          {asking === 'stop' ? (
            <p>
              Stop deployment <code>{id}</code> ({deployment.environment})? Its instances end and its URLs stop
              answering until the next deploy.
            </p>
          ) : (
            <p>
              Roll back from <code>{id}</code> ({deployment.environment})? The previous deployment of {name} in{' '}
              {deployment.environment} is deployed again as a new deployment.
            </p>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}
