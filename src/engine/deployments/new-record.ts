/**
 * A new deployment as it is first written: `deploying`, with its URL (a staging deployment is
 * routed by a generated name, any other by its id) and what the local engine says it does not do.
 */
import { isolationNotices, type IsolationReport } from '../isolation.js';
import type { Deployment, DeployRequest, Environment } from '../../api/contract.js';
import { newDeploymentId, newStagingName } from '../ids.js';
import type { DeploymentRecord, ServerRecord } from '../records.js';
import type { HttpsEndpoint } from '../services.js';
import { httpsNotices, stableUrls, type EngineAddresses } from './addresses.js';
import { authView, publicNotice } from './exposure.js';
import { deploymentUrl } from './registry.js';

function withAuth(auth: Deployment['auth']): Pick<Deployment, 'auth'> {
  return auth === undefined ? {} : { auth };
}

export interface NewDeployment {
  server: ServerRecord;
  environment: Environment;
  config: DeployRequest['config'];
  /** lower case, checked */
  domain: string | undefined;
  desired: number;
  previousId: string | undefined;
  baseUrl: string;
  now: number;
  /** the engine's runner kind (process, docker, swarm, kubernetes) */
  runner?: string;
  /** the engine's HTTPS listener, when it has one */
  https?: HttpsEndpoint | undefined;
  isolation?: IsolationReport | undefined;
  /** the engine sends alerts to a channel */
  alerting?: boolean | undefined;
}

export function newDeploymentRecord(input: NewDeployment): DeploymentRecord {
  const { server, environment, domain } = input;
  const at = new Date(input.now).toISOString();
  const id = newDeploymentId();
  const routeName = environment === 'staging' ? newStagingName() : id;
  const url = deploymentUrl(input.baseUrl, routeName);
  const stable = stableUrls(input, server.server.name, environment, domain);
  return {
    deployment: {
      deployment_id: id,
      status: 'deploying',
      url,
      deploy_time: null,
      health_check: `${url}/health`,
      mcp_id: server.server.mcp_id,
      environment,
      stage: 'queued',
      desired_instances: input.desired,
      instances: [],
      domain: domain ?? null,
      stable_urls: stable,
      notices: [
        ...publicNotice(server),
        ...deploymentNotices({ environment, domain, config: input.config, runner: input.runner }, input),
      ],
      ...withAuth(authView(server, stable)),
      ...(input.runner === undefined ? {} : { runner: input.runner }),
      created_at: at,
      updated_at: at,
      transitions: [{ status: 'deploying', at }],
    },
    mcpId: server.server.mcp_id,
    routeName,
    config: { ...input.config, ...(domain === undefined ? {} : { domain }) },
    ...(input.previousId === undefined ? {} : { previousId: input.previousId }),
    version: 1,
  };
}

/** Every notice of a deployment: what the engine does not do for it, and which HTTPS applies. */
export function deploymentNotices(
  d: {
    environment: Environment;
    domain: string | undefined;
    config: DeployRequest['config'];
    runner: string | undefined;
  },
  engine: EngineAddresses,
): string[] {
  const contained = d.runner === 'docker' || d.runner === 'swarm' || d.runner === 'kubernetes';
  const resources = d.config?.resources;
  return [
    ...noticesFor(d.environment, d.domain, engine, d.runner),
    ...(contained ? [] : isolationNotices(engine.isolation, resources === undefined ? undefined : { ...resources })),
  ];
}

/** What the engine says plainly it does not do, and which HTTPS applies; on Kubernetes, what the cluster does instead. */
export function noticesFor(
  environment: Environment,
  domain: string | undefined,
  engine: EngineAddresses = { baseUrl: 'http://127.0.0.1' },
  runner?: string,
): string[] {
  if (runner === 'kubernetes') return kubernetesNotices(environment, domain, engine.alerting === true);
  const notices: string[] = [];
  if (environment === 'production') {
    notices.push(
      runner === 'swarm'
        ? 'Swarm service: its tasks are spread over the values of a node label (MCPCTL_SWARM_SPREAD, default node.labels.region); they publish their port on every address of their node'
        : 'single machine: instances run on this host only, not across regions',
    );
    if (engine.alerting !== true) notices.push(NO_ALERTING);
  }
  if (domain !== undefined)
    notices.push(
      `custom domain: requests with Host ${domain} are routed to the current deployment of this server in ${environment}`,
    );
  return [...notices, ...httpsNotices(engine, environment, domain)];
}

/** A deployment on Kubernetes: the cluster spreads the pods; HTTPS is the Ingress's, with cert-manager's certificate. */
function kubernetesNotices(environment: Environment, domain: string | undefined, alerting: boolean): string[] {
  const notices: string[] = [];
  if (environment !== 'development')
    notices.push(
      'Kubernetes: the pods spread over topology.kubernetes.io/region (and nodes) as far as the cluster has them',
    );
  if (domain !== undefined) {
    notices.push(
      `HTTPS: an Ingress routes ${domain} to the pods, and cert-manager issues its certificate (the engine's kubernetes issuer, default letsencrypt-prod): https://${domain}/mcp once DNS for ${domain} points at the cluster's ingress`,
    );
  } else if (environment === 'production') {
    notices.push(
      'no HTTPS: without a domain there is no Ingress; the URL is the engine gateway’s plain HTTP (set deploy.domain for an Ingress with a certificate from cert-manager)',
    );
  }
  if (environment === 'production' && !alerting) notices.push(NO_ALERTING);
  return notices;
}

/** Production without an alert channel on the engine (alerts.channels, docs/observability.md). */
const NO_ALERTING =
  'no alerting: set an alert channel on the engine (docs/observability.md), or watch it with `mcpctl status` and `mcpctl alerts`';
