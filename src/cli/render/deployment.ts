/**
 * How a deployment reads for people: progress text while it deploys, and the settled result.
 * Its strings come from the service: they are shown with their control characters as text.
 */
import type { Deployment } from '../../api/operations.js';
import type { Printer } from '../output.js';
import { formatAgo, formatSeconds, formatTime } from './format.js';
import { serviceData, serviceText } from './service-text.js';

/** Healthy instances out of the wanted number, when the service says. */
export function instanceCounts(deployment: Deployment): { healthy: number; desired: number } | undefined {
  const instances = deployment.instances;
  if (instances === undefined && deployment.desired_instances === undefined) return undefined;
  const healthy = (instances ?? []).filter((i) => i.state === 'healthy').length;
  return { healthy, desired: deployment.desired_instances ?? instances?.length ?? 0 };
}

function formatInstances(deployment: Deployment): string | undefined {
  // scale to zero: deployed, holding no instance until a request starts one
  if (deployment.idle === true) return '0 (idle, wakes on request)';
  const counts = instanceCounts(deployment);
  return counts === undefined ? undefined : `${counts.healthy}/${counts.desired} healthy`;
}

/** One line for a spinner or a CI log: `deploying deploy_x to production: health checks (1/2 healthy)` */
export function describeProgress(deployment: Deployment): string {
  const where = deployment.environment === undefined ? '' : ` to ${deployment.environment}`;
  const stage =
    deployment.idle === true
      ? ': idle, wakes on request'
      : deployment.stage === undefined || deployment.stage === ''
        ? ''
        : `: ${deployment.stage}`;
  const instances = deployment.idle === true ? undefined : formatInstances(deployment);
  return serviceText(
    `${deployment.status} ${deployment.deployment_id}${where}${stage}${instances === undefined ? '' : ` (${instances})`}`,
  );
}

/** A deployment's stable name, `<server>.<env>`, from its path-form stable URL (docs/api.md, "Stable URLs"). */
export function stableNameOf(deployment: Deployment): string | undefined {
  const environment = deployment.environment;
  if (environment === undefined) return undefined;
  for (const url of deployment.stable_urls ?? []) {
    const match = /\/d\/([^/?#]+)\/mcp$/.exec(url);
    const name = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]).toLowerCase();
    if (name?.endsWith(`.${environment}`) === true) return name;
  }
  return undefined;
}

/**
 * The URL to give an MCP client: the path-form stable URL (`{base}/d/<server>.<env>/mcp`), which
 * follows redeploys and rollbacks and resolves wherever the engine is reached; the deployment's
 * own endpoint when the service gives no stable URL.
 */
export function connectUrl(deployment: Deployment): string {
  return deployment.stable_urls?.find((url) => /\/d\/[^/]+\/mcp$/.test(url)) ?? mcpEndpoint(deployment);
}

/** The MCP endpoint of a deployment: its URL followed by /mcp. */
export function mcpEndpoint(deployment: Deployment): string {
  return `${deployment.url.replace(/\/+$/, '')}/mcp`;
}

/**
 * The stable URLs worth showing besides the MCP endpoint, on one line: a custom domain's. Not the
 * `*.localhost` names, which many resolvers (Node's among them) do not resolve, nor the path form,
 * shown as the endpoint. JSON has them all.
 */
export function shownStableUrls(deployment: Deployment): string | undefined {
  const shown = (deployment.stable_urls ?? []).filter((url) => !/\/d\/[^/]+\/mcp$/.test(url) && !onLocalhostName(url));
  return shown.length === 0 ? undefined : shown.join('  ');
}

function onLocalhostName(url: string): boolean {
  try {
    return new URL(url).hostname.toLowerCase().endsWith('.localhost');
  } catch {
    return false;
  }
}

/** Who may call a deployment, when the service says: `oauth · metadata <url>`, `bearer token`, `none (public)`. */
export function describeAuth(deployment: Deployment): string | undefined {
  const auth = deployment.auth;
  switch (auth?.type) {
    case undefined:
      return undefined;
    case 'oauth':
      return auth.resource_metadata === undefined ? 'oauth' : `oauth · metadata ${auth.resource_metadata}`;
    case 'bearer':
      return 'bearer token';
    case 'none':
      return 'none (public)';
  }
}

/** The fields of a deployment, aligned. */
export function renderDeploymentFields(p: Printer, answer: Deployment): void {
  const deployment = serviceData(answer);
  const live = deployment.status === 'deployed' || deployment.status === 'deploying';
  p.fields([
    ['deployment', deployment.deployment_id],
    ['status', colourStatus(p, deployment.status)],
    ['server', deployment.mcp_id],
    ['environment', deployment.environment],
    ['url', deployment.url],
    ['mcp endpoint', live ? connectUrl(deployment) : undefined],
    ['domain URL', shownStableUrls(deployment)],
    ['health', live ? deployment.health_check : undefined],
    ['domain', deployment.domain ?? undefined],
    ['auth', describeAuth(deployment)],
    ['stage', deployment.status === 'deploying' ? deployment.stage : undefined],
    ['instances', formatInstances(deployment)],
    ['deploy time', formatSeconds(deployment.deploy_time)],
    ['reason', deployment.reason],
    ['updated', updatedText(deployment.updated_at)],
  ]);
}

/** `12:03:04 (12 min ago)`, the date first when not today. */
function updatedText(iso: string | undefined): string | undefined {
  const ago = formatAgo(iso);
  return iso === undefined || ago === undefined ? iso : `${formatTime(iso)} (${ago})`;
}

function colourStatus(p: Printer, status: Deployment['status']): string {
  switch (status) {
    case 'deployed':
      return p.style.green(status);
    case 'failed':
      return p.style.red(status);
    case 'deploying':
      return p.style.cyan(status);
    case 'stopped':
      return p.style.dim(status);
  }
}

/**
 * A deployment in full: heading, fields, notices as warnings (unless `notices` is false: a deploy
 * says them once, a later `status` only when asked), next steps.
 */
export function renderDeployment(p: Printer, answer: Deployment, heading: string, note?: string, notices = true): void {
  const deployment = serviceData(answer);
  const id = deployment.deployment_id;
  if (deployment.status === 'failed') p.text(`${p.style.red('✖')} ${heading}`);
  else if (deployment.status === 'deployed') p.success(heading);
  else p.text(`${p.style.cyan('●')} ${heading}`);
  if (note !== undefined) p.text(`  ${serviceText(note)}`);
  renderDeploymentFields(p, deployment);
  if (notices) for (const notice of deployment.notices ?? []) p.warn(notice);
  switch (deployment.status) {
    case 'deployed':
      p.next(`connect an MCP client to ${connectUrl(deployment)}`);
      // the name outlives this deployment: it reaches the next one too
      p.next(`mcpctl logs ${stableNameOf(deployment) ?? id}`);
      break;
    case 'deploying':
      p.next(`mcpctl status ${id} --watch`);
      break;
    case 'failed':
      p.next(`mcpctl logs ${id}`);
      break;
    case 'stopped':
      break;
  }
}
