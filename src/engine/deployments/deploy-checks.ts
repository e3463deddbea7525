/**
 * What a deploy or a rollback must pass before anything starts: a valid config (scaling within the
 * environment's range, a usable domain), a domain no other active deployment holds, and for a
 * rollback an earlier deployment whose build still exists. Each failure is a ServiceError the API
 * answers as it is.
 */
import type { DeployRequest } from '../../api/contract.js';
import type { DeploymentRecord, ServerRecord } from '../records.js';
import { ServiceError } from '../service-error.js';
import type { Store } from '../store/store.js';
import type { History } from './history.js';
import { checkDomain, resolveScaling, type FieldProblem } from './limits.js';
import { isActive } from './states.js';

export interface ValidDeploy {
  environment: DeployRequest['environment'];
  scaling: { min: number; max: number };
  /** lower case */
  domain: string | undefined;
}

/**
 * The request's environment, scaling range and domain, or `validation_failed` with every problem.
 * `runner` is the kind that would run it (runnerKindFor): a scale to zero needs the engine's own.
 */
export function validateDeploy(request: DeployRequest, runner?: string): ValidDeploy {
  const environment = request.environment;
  const scaling = resolveScaling(environment, request.config?.scaling, runner);
  const problems: FieldProblem[] = scaling.ok ? [] : [...scaling.problems];
  const domain = request.config?.domain?.toLowerCase();
  const domainProblem = domain === undefined ? undefined : checkDomain(domain);
  if (domainProblem !== undefined) problems.push(domainProblem);
  if (!scaling.ok || problems.length > 0) {
    throw new ServiceError(
      'validation_failed',
      `the deployment config is not valid: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      problems,
    );
  }
  return { environment, scaling: { min: scaling.min, max: scaling.max }, domain };
}

/** What the domain check looks at of a deployment in memory. */
export interface DomainHolder {
  id: string;
  status: Parameters<typeof isActive>[0];
  domain: string | undefined;
  serverName: string;
  environment: string;
}

/** A domain belongs to one active deployment; only a newer one of the same name and environment takes it over. */
export function checkDomainFree(
  lives: readonly DomainHolder[],
  domain: string,
  name: string,
  environment: string,
): void {
  const holder = lives.find(
    (other) =>
      isActive(other.status) &&
      other.domain === domain &&
      !(other.serverName === name && other.environment === environment),
  );
  if (holder !== undefined) {
    throw new ServiceError(
      'conflict',
      `domain ${domain} is in use by ${holder.id} (${holder.serverName} in ${holder.environment}); stop that deployment first`,
    );
  }
}

/** The deployment a rollback of `record` redeploys, with its build; a conflict when there is none. */
export async function rollbackTarget(
  history: History,
  store: Store,
  record: DeploymentRecord,
): Promise<{
  name: string | undefined;
  environment: DeployRequest['environment'];
  target: DeploymentRecord;
  server: ServerRecord;
}> {
  const name = await history.serverNameOf(record.mcpId);
  const environment = record.deployment.environment ?? 'development';
  const target = await history.rollbackTarget(record);
  if (target === undefined) {
    throw new ServiceError(
      'conflict',
      `there is no earlier deployment of ${name ?? record.mcpId} in ${environment} to roll back to`,
    );
  }
  const server = await store.getServer(target.mcpId);
  if (server === undefined) {
    throw new ServiceError(
      'conflict',
      `the build ${target.mcpId} of ${target.deployment.deployment_id} no longer exists; deploy a build instead`,
    );
  }
  return { name, environment, target, server };
}

/** A stop of a deployment that is not deployed. */
export function cannotStop(deploymentId: string, status: string): ServiceError {
  return new ServiceError(
    'conflict',
    `deployment ${deploymentId} is ${status}; only a deployed deployment can be stopped`,
  );
}

/** The entries of `value` that are set. */
export function withoutUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
