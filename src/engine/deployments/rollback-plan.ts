/**
 * What a rollback does. It goes back to the deployment before the one named; once it has, the
 * server runs that deployment's build and config, and asking again (with the same id, or with the
 * id of the rollback's own deployment) answers the deployment that runs it instead of making
 * another one: a rollback run twice rolls back once.
 */
import type { Deployment } from '../../api/contract.js';
import type { DeploymentRecord, ServerRecord } from '../records.js';
import { ServiceError } from '../service-error.js';
import type { Store } from '../store/store.js';
import { rollbackTarget } from './deploy-checks.js';
import type { History } from './history.js';
import type { Registry } from './registry.js';
import { isActive } from './states.js';

export type RolledBackTo = NonNullable<Deployment['rolled_back_to']>;

export type RollbackPlan =
  /** the server already runs what the rollback goes back to: this deployment */
  | { kind: 'already'; deploymentId: string }
  | {
      kind: 'deploy';
      name: string | undefined;
      environment: NonNullable<Deployment['environment']>;
      target: DeploymentRecord;
      server: ServerRecord;
      rolledBackTo: RolledBackTo;
    };

export async function planRollback(
  parts: { history: History; store: Store; registry: Registry },
  record: DeploymentRecord,
): Promise<RollbackPlan> {
  const id = record.deployment.deployment_id;
  const name = await parts.history.serverNameOf(record.mcpId);
  const current = currentOf(parts.registry, record, name);
  // The rollback's own deployment, still the current one: it is where a rollback of it would go.
  if (record.deployment.rolled_back_to !== undefined && current === id) return { kind: 'already', deploymentId: id };
  if (record.deployment.status === 'deploying') {
    throw new ServiceError('conflict', `deployment ${id} is still deploying; wait for it to settle, then roll back`);
  }
  const { environment, target, server } = await rollbackTarget(parts.history, parts.store, record);
  const targetId = target.deployment.deployment_id;
  if (current !== undefined && current !== id) {
    const running = parts.registry.get(current)?.record.deployment.rolled_back_to;
    if (running?.deployment_id === targetId) return { kind: 'already', deploymentId: current };
  }
  const rolledBackTo: RolledBackTo = {
    deployment_id: targetId,
    mcp_id: target.mcpId,
    ...(server.server.version === undefined ? {} : { version: server.server.version }),
    ...(target.deployment.created_at === undefined ? {} : { created_at: target.deployment.created_at }),
  };
  return { kind: 'deploy', name, environment, target, server, rolledBackTo };
}

/** The newest deployment of the record's server and environment that is deploying or deployed here. */
function currentOf(registry: Registry, record: DeploymentRecord, name: string | undefined): string | undefined {
  const environment = record.deployment.environment ?? 'development';
  let best: { id: string; createdAt: string } | undefined;
  for (const live of name === undefined ? registry.all() : registry.ofServer(name, environment)) {
    if (!isActive(live.status) || live.environment !== environment) continue;
    if (name === undefined ? live.record.mcpId !== record.mcpId : live.serverName !== name) continue;
    if (best === undefined || live.createdAt > best.createdAt) best = { id: live.id, createdAt: live.createdAt };
  }
  return best?.id;
}
