/** The start page's grouping of deployments: by environment, running ones first, stopped ones apart. Pure. */
import type { Deployment, McpServer } from './api-types.js';

export const ENVIRONMENT_ORDER = ['production', 'staging', 'development'];

export interface EnvironmentGroup {
  environment: string;
  /** deploying, deployed and failed: what someone looks for */
  active: Deployment[];
  stopped: Deployment[];
}

/** Deployments by environment (production, staging, development, then any other), newest first in each. */
export function groupDeployments(deployments: readonly Deployment[]): EnvironmentGroup[] {
  const groups = new Map<string, EnvironmentGroup>();
  for (const deployment of deployments) {
    const environment = deployment.environment ?? 'unknown';
    let group = groups.get(environment);
    if (group === undefined) {
      group = { environment, active: [], stopped: [] };
      groups.set(environment, group);
    }
    (deployment.status === 'stopped' ? group.stopped : group.active).push(deployment);
  }
  const rank = (environment: string): number => {
    const index = ENVIRONMENT_ORDER.indexOf(environment);
    return index === -1 ? ENVIRONMENT_ORDER.length : index;
  };
  const newest = (a: Deployment, b: Deployment): number => (b.created_at ?? '').localeCompare(a.created_at ?? '');
  return [...groups.values()]
    .sort((a, b) => rank(a.environment) - rank(b.environment) || a.environment.localeCompare(b.environment))
    .map((group) => ({ ...group, active: group.active.sort(newest), stopped: group.stopped.sort(newest) }));
}

/** The names of servers by id, for deployments, which carry only the server's id. */
export function serverNames(servers: readonly McpServer[]): Map<string, string> {
  return new Map(servers.map((server) => [server.mcp_id, server.name]));
}

/** `healthy/desired`, counting the instances whose state is healthy. */
export function instanceCounts(deployment: Deployment): { healthy: number; desired: number } {
  const instances = deployment.instances ?? [];
  return {
    healthy: instances.filter((instance) => instance.state === 'healthy').length,
    desired: deployment.desired_instances ?? instances.length,
  };
}
