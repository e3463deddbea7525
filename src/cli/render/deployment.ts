/**
 * How a deployment reads for people: progress text while it deploys, and the settled result.
 * Its strings come from the service: they are shown with their control characters as text.
 */
import type { Deployment } from '../../api/operations.js';
import type { Printer } from '../output.js';
import { formatSeconds } from './format.js';
import { serviceData, serviceText } from './service-text.js';

/** Healthy instances out of the wanted number, when the service says. */
export function instanceCounts(deployment: Deployment): { healthy: number; desired: number } | undefined {
  const instances = deployment.instances;
  if (instances === undefined && deployment.desired_instances === undefined) return undefined;
  const healthy = (instances ?? []).filter((i) => i.state === 'healthy').length;
  return { healthy, desired: deployment.desired_instances ?? instances?.length ?? 0 };
}

function formatInstances(deployment: Deployment): string | undefined {
  const counts = instanceCounts(deployment);
  return counts === undefined ? undefined : `${counts.healthy}/${counts.desired} healthy`;
}

/** One line for a spinner or a CI log: `deploying deploy_x to production: health checks (1/2 healthy)` */
export function describeProgress(deployment: Deployment): string {
  const where = deployment.environment === undefined ? '' : ` to ${deployment.environment}`;
  const stage = deployment.stage === undefined || deployment.stage === '' ? '' : `: ${deployment.stage}`;
  const instances = formatInstances(deployment);
  return serviceText(
    `${deployment.status} ${deployment.deployment_id}${where}${stage}${instances === undefined ? '' : ` (${instances})`}`,
  );
}

/** The MCP endpoint of a deployment: its URL followed by /mcp. */
export function mcpEndpoint(deployment: Deployment): string {
  return `${deployment.url.replace(/\/+$/, '')}/mcp`;
}

/**
 * The stable URLs worth showing on one line: every one but the path form `/d/<server>.<env>/mcp`
 * when a host-name form is there too (JSON has them all).
 */
export function shownStableUrls(deployment: Deployment): string | undefined {
  const urls = deployment.stable_urls ?? [];
  const named = urls.filter((url) => !url.includes('/d/'));
  const shown = named.length > 0 ? named : urls;
  return shown.length === 0 ? undefined : shown.join('  ');
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
    ['mcp endpoint', live ? mcpEndpoint(deployment) : undefined],
    ['stable URL', shownStableUrls(deployment)],
    ['health', live ? deployment.health_check : undefined],
    ['domain', deployment.domain ?? undefined],
    ['auth', describeAuth(deployment)],
    ['stage', deployment.status === 'deploying' ? deployment.stage : undefined],
    ['instances', formatInstances(deployment)],
    ['deploy time', formatSeconds(deployment.deploy_time)],
    ['reason', deployment.reason],
    ['updated', deployment.updated_at],
  ]);
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

/** A deployment in full: heading, fields, notices as warnings, next steps. */
export function renderDeployment(p: Printer, answer: Deployment, heading: string): void {
  const deployment = serviceData(answer);
  const id = deployment.deployment_id;
  if (deployment.status === 'failed') p.line(`${p.style.red('✖')} ${heading}`);
  else if (deployment.status === 'deployed') p.success(heading);
  else p.line(`${p.style.cyan('●')} ${heading}`);
  renderDeploymentFields(p, deployment);
  for (const notice of deployment.notices ?? []) p.warn(notice);
  switch (deployment.status) {
    case 'deployed':
      p.next(`connect an MCP client to ${mcpEndpoint(deployment)}`);
      p.next(`mcpctl logs ${id}`);
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
