/**
 * One Docker network per deployment, for the Docker runner: its containers are on a bridge of
 * their own, never on the default bridge with every other container of the host, and with
 * `enable_icc=false` the containers on it do not reach each other either. The engine reaches each
 * one at its port published on 127.0.0.1, as before. The network carries the labels of its engine
 * and deployment; it is made at the first start of an instance of the deployment and removed when
 * its last instance is gone (and, after an engine restart, when what the last engine left is stopped).
 *
 * What the daemon enforces depends on its iptables: with `--iptables=false` Docker writes no
 * filter rules, so `enable_icc=false` is not enforced, and deployments are kept apart only by being
 * on different bridges, which holds as long as the host does not route between them (no
 * net.ipv4.ip_forward, or a firewall of the host's own).
 */
import { createHash } from 'node:crypto';
import { DockerApiError, type DockerClient } from './engine-api.js';

/** Label keys of a deployment's network: the engine's, the deployment's, and what it is. */
export const NETWORK_LABELS = {
  engine: 'mcpctl/engine',
  deployment: 'mcpctl/deployment',
  kind: 'mcpctl/network',
} as const;

/** `mcpctl-<deployment>-<hash of the engine's home>`: two engines on one daemon never share one. */
export function networkName(engine: string, deployment: string): string {
  const home = createHash('sha256').update(engine).digest('hex').slice(0, 8);
  return `mcpctl-${deployment.replace(/[^a-zA-Z0-9_.-]/g, '-').slice(0, 40) || 'deployment'}-${home}`;
}

/** The Engine API body that makes the network of a deployment. */
export function networkSpec(engine: string, deployment: string): Record<string, unknown> {
  return {
    Name: networkName(engine, deployment),
    CheckDuplicate: true,
    Driver: 'bridge',
    Labels: {
      [NETWORK_LABELS.engine]: engine,
      [NETWORK_LABELS.deployment]: deployment,
      [NETWORK_LABELS.kind]: 'deployment',
    },
    Options: { 'com.docker.network.bridge.enable_icc': 'false' },
  };
}

/**
 * The networks of the deployments whose instances this engine runs, counted: made once for the
 * first instance, removed after the last. Starts and stops of one deployment go one after the other.
 */
export class DeploymentNetworks {
  private readonly held = new Map<string, { count: number; queue: Promise<unknown> }>();

  constructor(private readonly docker: DockerClient) {}

  /** The network's name, made if missing; one hold more until `release`. */
  acquire(engine: string, deployment: string): Promise<string> {
    const name = networkName(engine, deployment);
    return this.serial(name, async () => {
      const entry = this.held.get(name)!;
      if (entry.count === 0) await this.ensure(engine, deployment);
      entry.count += 1;
      return name;
    });
  }

  /** One hold less; the network is removed once none is left. */
  release(engine: string, deployment: string): Promise<void> {
    const name = networkName(engine, deployment);
    return this.serial(name, async () => {
      const entry = this.held.get(name)!;
      entry.count = Math.max(0, entry.count - 1);
      if (entry.count === 0) await this.remove(name);
    });
  }

  /** Removes the network of a deployment this engine holds nothing of (one the last engine left). */
  removeLeftover(engine: string, deployment: string): Promise<void> {
    const name = networkName(engine, deployment);
    return this.serial(name, async () => {
      if (this.held.get(name)!.count === 0) await this.remove(name);
    });
  }

  private serial<T>(name: string, work: () => Promise<T>): Promise<T> {
    let entry = this.held.get(name);
    if (entry === undefined) {
      entry = { count: 0, queue: Promise.resolve() };
      this.held.set(name, entry);
    }
    const run = entry.queue.then(work, work);
    entry.queue = run.catch(() => undefined);
    return run;
  }

  private async ensure(engine: string, deployment: string): Promise<void> {
    try {
      await this.docker.json('POST', '/networks/create', { json: networkSpec(engine, deployment) });
    } catch (error) {
      // 409: it is there already (left by a start that failed, or a restarted engine's)
      if (!(error instanceof DockerApiError && error.status === 409)) throw error;
    }
  }

  private async remove(name: string): Promise<void> {
    try {
      await this.docker.json('DELETE', `/networks/${encodeURIComponent(name)}`);
    } catch (error) {
      // 404: gone already; 403/409: a container is still attached (it is removed with the next stop)
      if (!(error instanceof DockerApiError)) throw error;
    }
  }
}
