/**
 * The records the operations act on, found by the id in the request, and the services they need:
 * each a ServiceError (404, 501) with a message that says what to do when it is not there.
 */
import { DEPLOYMENT_ID_PATTERN, MCP_ID_PATTERN, type Deployment, type McpServer } from '../../../api/contract.js';
import type { DeploymentRecord, ServerRecord } from '../../records.js';
import type { DeploymentService, TestService } from '../../services.js';
import type { Store } from '../../store/store.js';
import { ServiceError } from '../../service-error.js';

export function requireDeployments(deployments: DeploymentService | undefined): DeploymentService {
  if (deployments === undefined) {
    throw new ServiceError(
      'not_implemented',
      'deployments are not available on this engine yet; this build of mcpctl can build servers but not deploy them',
    );
  }
  return deployments;
}

export function requireTests(tests: TestService | undefined): TestService {
  if (tests === undefined) {
    throw new ServiceError(
      'not_implemented',
      'the test agent is not available on this engine yet; use a /v1 service that offers POST /v1/test',
    );
  }
  return tests;
}

/** The server `mcpId`, or 404; `path` names the body field that gave the id. */
export async function findServer(store: Store, mcpId: string, path?: string): Promise<ServerRecord> {
  const record = MCP_ID_PATTERN.test(mcpId) ? await store.getServer(mcpId) : undefined;
  if (record === undefined) {
    throw new ServiceError(
      'not_found',
      `no server ${mcpId}; list them with \`mcpctl ls --servers\``,
      path === undefined ? undefined : [{ path, message: 'no server with this id' }],
    );
  }
  return record;
}

export async function findDeployment(store: Store, deploymentId: string): Promise<DeploymentRecord> {
  const record = DEPLOYMENT_ID_PATTERN.test(deploymentId) ? await store.getDeployment(deploymentId) : undefined;
  if (record === undefined)
    throw new ServiceError('not_found', `no deployment ${deploymentId}; list them with \`mcpctl ls\``);
  return record;
}

/** The live view when the deployment service runs, else the stored one. */
export async function viewDeployment(
  deployments: DeploymentService | undefined,
  record: DeploymentRecord,
): Promise<Deployment> {
  const live = deployments === undefined ? undefined : await deployments.status(record.deployment.deployment_id);
  return live ?? record.deployment;
}

/** A built server as the API shows it: with the digest of its bundle, the tag of its image (docs/api.md). */
export function serverView(record: ServerRecord): McpServer {
  return { ...record.server, auth: record.definition.auth?.type ?? 'missing', bundle_digest: record.digest };
}
