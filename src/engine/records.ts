/** The records the engine persists: a built server, a deployment, a test run. `server` and
 * `deployment` are what the API shows; the rest is what the engine needs to run and roll back. */
import type {
  BuildRequest,
  BuildSource,
  Deployment,
  DeployRequest,
  McpServer,
  TestRequest,
  TestResult,
} from '../api/contract.js';

/** A built server as the engine keeps it. `server` is what the API shows. */
export interface ServerRecord {
  server: McpServer;
  /** content-addressed bundle folder the runtime starts from */
  bundleDir: string;
  digest: string;
  /** the build request without `files` (those live in the bundle) and without `source` */
  definition: Omit<BuildRequest, 'files' | 'source'>;
  /**
   * where the definition was written, as the newest build of it said (a build's `source`): not part
   * of the bundle; records of builds that sent none, or made before it existed, have none
   */
  source?: BuildSource;
}

/** A deployment as the engine keeps it. `deployment` is what the API shows (minus live instances). */
export interface DeploymentRecord {
  deployment: Deployment;
  mcpId: string;
  /**
   * The name the gateway routes by (`<GATEWAY_PREFIX>/<routeName>/mcp`): the deployment id, or a
   * staging name. Records written by earlier versions have none; theirs is the end of `url`.
   */
  routeName?: string;
  /** the deploy request's config, with env_vars (never shown by the API) */
  config: NonNullable<DeployRequest['config']>;
  /** the deployment this one replaced, for rollback */
  previousId?: string;
  /** monotonic counter bumped on every change, for long-polling */
  version: number;
}

export interface TestRunRecord {
  id: string;
  mcpId: string;
  request: TestRequest;
  result: TestResult;
  createdAt: string;
}
