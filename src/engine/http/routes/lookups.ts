/**
 * The records the operations act on, found by the id in the request, and the services they need:
 * each a ServiceError (404, 501) with a message that says what to do when it is not there.
 */
import { DEPLOYMENT_ID_PATTERN, MCP_ID_PATTERN, type Deployment, type McpServer } from '../../../api/contract.js';
import type { DeploymentRecord, ServerRecord } from '../../records.js';
import type { DeploymentService, TestService } from '../../services.js';
import type { Store } from '../../store/store.js';
import { ServiceError } from '../../service-error.js';
import type { RouteDeps } from './route.js';

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
/** Removals (src/engine/housekeeping.ts), or 501 on an engine without them. */
export function requireHousekeeping(deps: RouteDeps): NonNullable<RouteDeps['housekeeping']> {
  if (deps.housekeeping === undefined) throw new ServiceError('not_implemented', 'this engine cannot remove records');
  return deps.housekeeping;
}

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

/** A place in the definition file, 1-based. */
interface Place {
  line?: number;
  column?: number;
}

/** `GET /v1/servers/:mcp_id/definition`: what the server offers, and where each item is written. */
export interface ServerDefinitionView {
  mcp_id: string;
  name: string;
  version: string;
  description?: string;
  /** the definition file as the build named it */
  file?: string;
  tools: Array<
    {
      name: string;
      title?: string;
      description?: string;
      inputSchema?: unknown;
      outputSchema?: unknown;
      annotations?: unknown;
      /** the handler's type alone */
      handler?: string;
    } & Place
  >;
  resources: Array<{ uri: string; name?: string; title?: string; description?: string; mimeType?: string } & Place>;
  prompts: Array<
    {
      name: string;
      title?: string;
      description?: string;
      arguments?: Array<{ name: string; description?: string; required?: boolean; enum?: string[] }>;
    } & Place
  >;
}

/**
 * A server's definition as people may read it: names, descriptions and schemas, as MCP clients see
 * them, with the place of each item. Fields are copied one by one, never spread: a handler's
 * configuration (an http handler's url and headers, an exec handler's command and env, a module's
 * path) may carry secrets or internal addresses, and its type is all that is shown. So is nothing of
 * a resource's source, or a prompt's messages and completions.
 */
export function definitionView(record: ServerRecord): ServerDefinitionView {
  const { definition: d, source } = record;
  const at = (positions: Record<string, { line: number; column: number }> | undefined, key: string): Place => {
    const found = positions !== undefined && Object.hasOwn(positions, key) ? positions[key] : undefined;
    return found === undefined ? {} : { line: found.line, column: found.column };
  };
  return {
    mcp_id: record.server.mcp_id,
    name: record.server.name,
    version: record.server.version ?? d.version ?? '',
    ...defined({ description: d.description, file: source?.file }),
    tools: (d.tools ?? []).map((tool) => ({
      name: tool.name,
      ...defined({
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: tool.annotations,
        handler: tool.handler?.type,
      }),
      ...at(source?.tools, tool.name),
    })),
    resources: (d.resources ?? []).map((resource) => ({
      uri: resource.uri,
      ...defined({
        name: resource.name,
        title: resource.title,
        description: resource.description,
        mimeType: resource.mimeType,
      }),
      ...at(source?.resources, resource.uri),
    })),
    prompts: (d.prompts ?? []).map((prompt) => ({
      name: prompt.name,
      ...defined({
        title: prompt.title,
        description: prompt.description,
        arguments: prompt.arguments?.map((argument) => ({
          name: argument.name,
          ...defined({ description: argument.description, required: argument.required, enum: argument.enum }),
        })),
      }),
      ...at(source?.prompts, prompt.name),
    })),
  };
}

/** The fields that have a value: an answer leaves the others out rather than sending null. */
function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
