/** The start page's grouping of deployments: by environment, newest first. Pure. */
import type { Deployment, McpServer } from './api-types.js';

export const ENVIRONMENT_ORDER = ['production', 'staging', 'development'];

/** The states the start page lists by environment; stopped ones are counted, and listed on request. */
export const ACTIVE_STATES = ['deploying', 'deployed', 'failed'] as const;

export interface EnvironmentGroup {
  environment: string;
  deployments: Deployment[];
}

/** Deployments by environment (production, staging, development, then any other), newest first in each. */
export function groupDeployments(deployments: readonly Deployment[]): EnvironmentGroup[] {
  const groups = new Map<string, EnvironmentGroup>();
  for (const deployment of deployments) {
    const environment = deployment.environment ?? 'unknown';
    let group = groups.get(environment);
    if (group === undefined) {
      group = { environment, deployments: [] };
      groups.set(environment, group);
    }
    group.deployments.push(deployment);
  }
  const rank = (environment: string): number => {
    const index = ENVIRONMENT_ORDER.indexOf(environment);
    return index === -1 ? ENVIRONMENT_ORDER.length : index;
  };
  // ISO times sort as strings; localeCompare's collation costs a list of hundreds a visible moment
  const newest = (a: Deployment, b: Deployment): number => compare(b.created_at ?? '', a.created_at ?? '');
  return [...groups.values()]
    .sort((a, b) => rank(a.environment) - rank(b.environment) || compare(a.environment, b.environment))
    .map((group) => ({ ...group, deployments: group.deployments.sort(newest) }));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
