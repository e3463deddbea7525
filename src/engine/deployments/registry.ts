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

export class Registry {
  private readonly byId = new Map<string, LiveDeployment>();
  private readonly routes = new Map<string, string>();

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

  add(live: LiveDeployment): void {
    this.byId.set(live.id, live);
    this.routes.set(live.routeName, live.id);
  }

  remove(live: LiveDeployment): void {
    // its values stay hidden only while a deployment in memory holds them
    live.releaseSecrets();
    this.byId.delete(live.id);
    if (this.routes.get(live.routeName) === live.id) this.routes.delete(live.routeName);
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
    let best: LiveDeployment | undefined;
    for (const live of this.byId.values()) {
      if (live.domain !== host || live.status !== 'deployed') continue;
      if (best === undefined || live.createdAt > best.createdAt) best = live;
    }
    return best;
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
    let best: LiveDeployment | undefined;
    for (const live of this.byId.values()) {
      if (live.status !== 'deployed' || live.environment !== match[2] || live.serverName.toLowerCase() !== match[1])
        continue;
      if (best === undefined || live.createdAt > best.createdAt) best = live;
    }
    return best;
  }

  servesDomain(host: string): boolean {
    for (const live of this.byId.values()) if (live.domain === host) return true;
    return false;
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
