/** The engine's persistence seam: what every store (file-store.ts) offers, and the queries it answers. */
import type { DeploymentRecord, ServerRecord, TestRunRecord } from '../records.js';

/** Which server records a query returns: each field given must match. */
export interface ServerFilter {
  name?: string;
  /** the build of this bundle (its content digest): at most one */
  digest?: string;
}

/** Which deployment records a query returns: each field given must match. */
export interface DeploymentFilter {
  mcpId?: string;
  environment?: string;
  status?: string;
  /** records of builds of the server with this name */
  serverName?: string;
  /** records that were `deployed` at some point (rollback and redeploy candidates) */
  wasDeployed?: boolean;
  /** at most this many, the newest */
  limit?: number;
}

/** Which test runs a query returns. */
export interface TestRunFilter {
  mcpId?: string;
  /** at most this many, the newest */
  limit?: number;
}

/** Persistence. Every write is atomic: a crash never leaves a half-written record. */
export interface Store {
  putServer(record: ServerRecord): Promise<void>;
  getServer(mcpId: string): Promise<ServerRecord | undefined>;
  /** the records that match every field of `filter`, newest first; only those are copied */
  listServers(filter?: ServerFilter): Promise<ServerRecord[]>;
  /** forgets a server record (its bundle is the caller's to remove); false when there was none */
  deleteServer(mcpId: string): Promise<boolean>;
  putDeployment(record: DeploymentRecord): Promise<void>;
  getDeployment(deploymentId: string): Promise<DeploymentRecord | undefined>;
  /** the records that match every field of `filter`, newest first; only those are copied */
  listDeployments(filter?: DeploymentFilter): Promise<DeploymentRecord[]>;
  /** forgets a deployment record; false when there was none */
  deleteDeployment(deploymentId: string): Promise<boolean>;
  /** keeps a run; the store may drop the oldest runs beyond its retention */
  putTestRun(record: TestRunRecord): Promise<void>;
  getTestRun(testId: string): Promise<TestRunRecord | undefined>;
  /** the runs that match every field of `filter`, newest first */
  listTestRuns(filter?: TestRunFilter): Promise<TestRunRecord[]>;
  /** idempotency: the stored response of a request key, with a hash of its body */
  getIdempotent(key: string): Promise<{ bodyHash: string; status: number; body: unknown } | undefined>;
  putIdempotent(key: string, entry: { bodyHash: string; status: number; body: unknown }): Promise<void>;
  close(): Promise<void>;
}
