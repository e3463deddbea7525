/**
 * Removing a deployment that has ended: its record, its log files, its task folder and what its
 * runner keeps for it (the Docker runner's task volume). One that is deploying or
 * deployed is refused, so nothing that serves requests disappears: it is stopped first. The
 * metrics history is the engine's (src/engine/housekeeping.ts removes it with the record).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Deployment } from '../../api/contract.js';
import type { DeploymentRecord } from '../records.js';
import type { Runner } from '../runners/runner.js';
import { ServiceError } from '../service-error.js';
import type { Store } from '../store/store.js';
import { storedView } from './observe.js';
import type { Registry } from './registry.js';
import { isActive } from './states.js';
import { removeTasksDir } from './task-folder.js';

export interface RemovalParts {
  registry: Registry;
  store: Store;
  /** `<home>/deployment-logs` */
  logDir: string;
  /** the engine's dependencies: its home holds the deployments' task folders, and names the engine */
  deps?: { home: string };
  runner?: Pick<Runner, 'forget'>;
}

/** Removes `record` (the newest view of it: in memory when it is there) and answers it as it was. */
export async function removeDeployment(parts: RemovalParts, record: DeploymentRecord): Promise<Deployment> {
  const id = record.deployment.deployment_id;
  const live = parts.registry.get(id);
  const view = live?.toDeployment() ?? storedView(record.deployment);
  if (isActive(view.status)) {
    throw new ServiceError(
      'conflict',
      `deployment ${id} is ${view.status}; stop it first (mcpctl stop ${id}), then remove it`,
    );
  }
  if (live !== undefined) {
    parts.registry.remove(live);
    // its last lines are written before the file goes, so none comes back after it
    await live.ctx.logs.settle();
  }
  await parts.store.deleteDeployment(id);
  await Promise.all([`${id}.ndjson`, `${id}.ndjson.1`].map((name) => rm(join(parts.logDir, name), { force: true })));
  if (parts.deps !== undefined) {
    await removeTasksDir(parts.deps.home, id);
    await parts.runner?.forget?.(parts.deps.home, id).catch((error: unknown) => {
      throw new ServiceError('unavailable', `deployment ${id} was removed, but ${(error as Error).message}`);
    });
  }
  return view;
}
