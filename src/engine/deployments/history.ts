/**
 * A server's deployments over time, for deploy and rollback: the deployment a new one follows,
 * the one a rollback goes back to, and the names of builds. Live records are ahead of the stored
 * ones (their last write may still be on its way), so they are read first.
 */
import type { Environment } from '../../api/contract.js';
import type { DeploymentRecord } from '../records.js';
import type { Store } from '../store/store.js';
import type { Registry } from './registry.js';
import { wasDeployed } from './states.js';

export class History {
  private readonly serverNames = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly registry: Registry,
  ) {}

  async recordOf(deploymentId: string): Promise<DeploymentRecord | undefined> {
    return this.registry.get(deploymentId)?.record ?? (await this.store.getDeployment(deploymentId));
  }

  knowServer(mcpId: string, name: string): void {
    this.serverNames.set(mcpId, name);
  }

  async serverNameOf(mcpId: string): Promise<string | undefined> {
    const known = this.serverNames.get(mcpId);
    if (known !== undefined) return known;
    const name = (await this.store.getServer(mcpId))?.server.name;
    if (name !== undefined) this.serverNames.set(mcpId, name);
    return name;
  }

  /**
   * The newest deployment of this server and environment that was ever deployed: the newest such
   * record on disk (one record copied, however many there are), or a running one whose `deployed`
   * is still on its way to the disk.
   */
  async previous(name: string, environment: Environment): Promise<string | undefined> {
    const [stored] = await this.store.listDeployments({ serverName: name, environment, wasDeployed: true, limit: 1 });
    let best =
      stored === undefined ? undefined : (this.registry.get(stored.deployment.deployment_id)?.record ?? stored);
    for (const live of this.registry.ofServer(name, environment)) {
      if (!wasDeployed(live.record.deployment)) continue;
      if (best === undefined || (live.createdAt ?? '') > (best.deployment.created_at ?? '')) best = live.record;
    }
    return best?.deployment.deployment_id;
  }

  /** What a rollback of `record` goes back to: the nearest deployment before it that was deployed. */
  async rollbackTarget(record: DeploymentRecord): Promise<DeploymentRecord | undefined> {
    const seen = new Set<string>([record.deployment.deployment_id]);
    let target = record.previousId === undefined ? undefined : await this.recordOf(record.previousId);
    while (target !== undefined && !wasDeployed(target.deployment)) {
      const next = target.previousId;
      if (next === undefined || seen.has(next)) target = undefined;
      else {
        seen.add(next);
        target = await this.recordOf(next);
      }
    }
    return target;
  }
}
