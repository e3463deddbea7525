/**
 * The deployments the engine has in memory, and how the gateway finds them: by route name (the
 * `<name>` of `/d/<name>/mcp`), by domain, by stable name (`<server>.<environment>`), and (for a
 * clear answer) a stopped one on disk.
 */
import type { DeploymentRecord } from '../records.js';
import type { Store } from '../store/store.js';
import { GATEWAY_PREFIX } from '../gateway/prefix.js';
import type { LiveDeployment } from './live-deployment.js';
import { isActive } from './states.js';
import { GroupIndex } from './registry-index.js';

/** `<server>.<environment>`, the stable name of a server in an environment. */
const STABLE_NAME = /^(.+)\.(production|staging|development)$/;

/** Stopped and failed deployments kept in memory (recent metrics, live log followers). */
const RETAINED_INACTIVE = 20;

/** The name a record is routed by; a record written before `routeName` was kept has it at the end of its URL. */
export function routeNameOf(record: DeploymentRecord): string {
  if (record.routeName !== undefined) return record.routeName;
  const url = record.deployment.url;
  return url.slice(url.lastIndexOf('/') + 1);
}

/** A deployment's URL on an engine at `baseUrl`. */
export function deploymentUrl(baseUrl: string, routeName: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${GATEWAY_PREFIX}/${routeName}`;
}

/** The key of a server in an environment in the stable-name index (the server's name in lower case). */
function stableKey(serverName: string, environment: string): string {
  return `${environment}/${serverName.toLowerCase()}`;
}

/** The newest deployed one of `lives` (the first added among equals). */
function newestDeployed(lives: Iterable<LiveDeployment>): LiveDeployment | undefined {
  let best: LiveDeployment | undefined;
  for (const live of lives) {
    if (live.status !== 'deployed') continue;
    if (best === undefined || live.createdAt > best.createdAt) best = live;
  }
  return best;
}

export class Registry {
  private readonly byId = new Map<string, LiveDeployment>();
  private readonly routes = new Map<string, string>();
  /** by domain, and by server and environment: kept in step with byId by add() and remove() */
  private readonly domains = new GroupIndex<LiveDeployment>();
  private readonly servers = new GroupIndex<LiveDeployment>();

  constructor(private readonly store: Store) {}

  get(deploymentId: string): LiveDeployment | undefined {
    return this.byId.get(deploymentId);
  }
  has(deploymentId: string): boolean {
    return this.byId.has(deploymentId);
  }
  all(): LiveDeployment[] {
    return [...this.byId.values()];
  }
  /** Every deployment, without a copy: for a loop that changes none of them in the registry. */
  values(): IterableIterator<LiveDeployment> {
    return this.byId.values();
  }

  add(live: LiveDeployment): void {
    const held = this.byId.get(live.id);
    if (held !== undefined && held !== live) this.unindex(held);
    this.byId.set(live.id, live);
    this.routes.set(live.routeName, live.id);
    if (live.domain !== undefined) this.domains.add(live.domain, live);
    this.servers.add(stableKey(live.serverName, live.environment), live);
  }

  remove(live: LiveDeployment): void {
    // its values stay hidden only while a deployment in memory holds them
    live.releaseSecrets();
    const held = this.byId.get(live.id);
    this.byId.delete(live.id);
    if (this.routes.get(live.routeName) === live.id) this.routes.delete(live.routeName);
    if (held !== undefined && held !== live) this.unindex(held);
    this.unindex(live);
  }

  private unindex(live: LiveDeployment): void {
    if (live.domain !== undefined) this.domains.delete(live.domain, live);
    this.servers.delete(stableKey(live.serverName, live.environment), live);
  }

  /** Keeps a few finished deployments in memory and forgets older ones. */
  retire(): void {
    const inactive = this.all().filter((live) => !isActive(live.status));
    for (const old of inactive.slice(0, Math.max(0, inactive.length - RETAINED_INACTIVE))) this.remove(old);
  }

  byName(name: string): LiveDeployment | undefined {
    const id = this.routes.get(name);
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** The newest deployed deployment with this domain (so a redeploy takes over at once). */
  byDomain(host: string): LiveDeployment | undefined {
    return newestDeployed(this.domains.get(host));
  }

  /** The deployments in memory with this domain, whatever their state. */
  withDomain(domain: string): LiveDeployment[] {
    return [...this.domains.get(domain)];
  }

  /** The deployments in memory of this server (its exact name) in this environment, whatever their state. */
  ofServer(serverName: string, environment: string): LiveDeployment[] {
    const group = this.servers.get(stableKey(serverName, environment));
    return [...group].filter((live) => live.serverName === serverName);
  }

  /**
   * What a stable name points at: `<server>.<environment>` (a path: /d/calculator.production/mcp) or
   * `<server>.<environment>.localhost` (a host name: *.localhost resolves to loopback) is the newest
   * deployed deployment of that server in that environment, so a redeploy or a rollback moves it
   * once the new deployment is deployed.
   */
  stable(name: string): LiveDeployment | undefined {
    const match = STABLE_NAME.exec(name.toLowerCase().replace(/\.localhost$/, ''));
    if (match === null) return undefined;
    return newestDeployed(this.servers.get(`${match[2]}/${match[1]}`));
  }

  servesDomain(host: string): boolean {
    return this.domains.has(host);
  }

  /** A deployment on disk but not in memory, for the gateway's answer about it. */
  async inactive(name: string): Promise<{ deployment_id: string; status: string } | undefined> {
    const records = name.startsWith('deploy_')
      ? [await this.store.getDeployment(name)]
      : (await this.store.listDeployments({ environment: 'staging' })).filter((r) => routeNameOf(r) === name);
    const record = records[0];
    return record === undefined
      ? undefined
      : { deployment_id: record.deployment.deployment_id, status: record.deployment.status };
  }
}
