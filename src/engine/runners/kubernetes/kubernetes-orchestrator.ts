/**
 * Kubernetes as the engine's orchestrator (runners/orchestrator.ts): a deployment becomes the
 * export's objects (plan.ts) applied with server-side apply; its rollout is the Deployment's
 * (rollout.ts); its endpoints are the pods, reached through the API server (port-forward) or on
 * the pod network; their logs are followed from the pods. A failed update is undone by the runner
 * (Kubernetes does not roll back by itself): the previous owner's objects, read before the update,
 * are applied again, so the deployment that was live stays live.
 *
 * State is watched by polling the Deployment and its pods (every second by default): two reads per
 * workload, no watch connection to keep alive through proxies.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../../../api/contract.js';
import { CONTAINER_PORT, imageName } from '../../../packaging/image.js';
import type { KubernetesObject } from '../../../packaging/kubernetes-manifests.js';
import { MANIFEST_FILE } from '../../../runtime/host/bundle.js';
import type { Logger } from '../../engine-log.js';
import type {
  Endpoint,
  FoundWorkload,
  Orchestrator,
  RolloutStatus,
  Workload,
  WorkloadHooks,
  WorkloadLabels,
  WorkloadSpec,
} from '../orchestrator.js';
import { probeHealth } from '../process/process-runner.js';
import { describe, labelSelector, type Cluster } from './cluster.js';
import {
  endpointsOf,
  ENGINE_LABELS,
  engineLabel,
  reapplicable,
  rolloutPhase,
  SERVER_NAME_ANNOTATION,
  ENGINE_HOME_ANNOTATION,
  workloadManifests,
  workloadName,
  workloadSelector,
  type KubernetesSettings,
  type RollbackState,
} from './plan.js';
import { createPortForwards, type PortForwards } from './port-forward.js';
import { rolloutState, type DeploymentView, type Rollout } from './rollout.js';

/** What builds and pushes an image (the Docker runner's image builder), when the engine has a Docker host. */
export interface ImagePublisher {
  ensure(bundleDir: string): Promise<{ digest: string }>;
  push(digest: string, registry: string): Promise<string>;
}

export interface KubernetesOrchestratorOptions {
  cluster: Cluster;
  settings: KubernetesSettings;
  /** undefined: no Docker host, so the cluster must already have the image (docs/kubernetes.md) */
  images?: ImagePublisher;
  logger: Logger;
  pollMs?: number;
}

export function createKubernetesOrchestrator(options: KubernetesOrchestratorOptions): Orchestrator {
  const { cluster, settings, logger } = options;
  const pollMs = options.pollMs ?? 1_000;
  const published = new Map<string, Promise<void>>();
  const context: Context = { cluster, settings, logger, pollMs, watched: new Set<KubeWorkload>() };
  return {
    kind: 'kubernetes',
    handles: () => true,
    async prepare(bundleDir) {
      // one publication per build, however many deployments of it start at once
      let pending = published.get(bundleDir);
      if (pending === undefined) {
        pending = publishImage(options, bundleDir);
        published.set(bundleDir, pending);
        pending.catch(() => published.delete(bundleDir));
      }
      await pending;
    },
    apply: (spec, hooks) => applyWorkload(context, spec, hooks),
    adopt: (labels, hooks) => adoptWorkload(context, labels, hooks),
    find: (engine) => findWorkloads(context, engine),
    async close() {
      for (const workload of [...context.watched]) workload.release();
    },
  };
}

/** Builds the image of a build and pushes it where the cluster pulls it from. */
async function publishImage(
  { images, settings, logger }: KubernetesOrchestratorOptions,
  bundleDir: string,
): Promise<void> {
  const { digest } = await bundleManifest(bundleDir);
  if (images === undefined) {
    logger.warn('no Docker host: the cluster must already have the image of this build', {
      image: imageName(digest, settings.registry),
    });
    return;
  }
  const built = await images.ensure(bundleDir).catch((error: unknown) => {
    throw new Error(`the image of this build could not be built: ${(error as Error).message}`, { cause: error });
  });
  if (settings.registry === undefined) return;
  await images.push(built.digest, settings.registry).catch((error: unknown) => {
    throw new Error(
      `the image could not be pushed to ${settings.registry}, where the cluster pulls it from: ${(error as Error).message} (docker login to it, or set MCPCTL_KUBERNETES_REGISTRY)`,
      { cause: error },
    );
  });
}

/** Applies the deployment's objects, drops those it no longer makes, and follows the rollout. */
async function applyWorkload(context: Context, spec: WorkloadSpec, hooks: WorkloadHooks): Promise<Workload> {
  const { cluster, settings, logger } = context;
  const { digest, version } = await bundleManifest(spec.bundleDir);
  const plan = workloadManifests({
    spec,
    digest,
    ...(version === undefined ? {} : { version }),
    namespace: cluster.namespace,
    settings,
  });
  const selector = labelSelector(workloadSelector(spec.labels.engine, plan.name));
  const previous = await objectsToRestore(cluster, plan.name, selector, spec.labels.deployment);
  await cluster.apply(plan.objects);
  await prune(cluster, selector, plan.objects);
  for (const notice of plan.notices) logger.info(notice, { workload: plan.name });
  if (plan.tasks?.notice !== undefined) hooks.onNotice?.(plan.tasks.notice);
  return new KubeWorkload(context, spec.labels, plan.name, spec.replicas, hooks, previous).start(0);
}

/**
 * The objects of the deployment that runs now under another owner, to go back to if this update
 * fails; undefined when there is none, or it was not fully deployed.
 */
async function objectsToRestore(
  cluster: Cluster,
  name: string,
  selector: string,
  deployment: string,
): Promise<KubernetesObject[] | undefined> {
  const current = await cluster.readDeployment(name);
  const previousOwner = current?.metadata === undefined ? undefined : ownerOf(current);
  if (previousOwner === undefined || previousOwner === deployment) return undefined;
  if (rolloutState(current, [], 1).state !== 'deployed') return undefined;
  return (await cluster.list(selector)).map((object) => reapplicable(object));
}

async function adoptWorkload(
  context: Context,
  labels: WorkloadLabels,
  hooks: WorkloadHooks,
): Promise<Workload | undefined> {
  const name = workloadName(labels.engine, labels.server, labels.environment as Environment);
  const current = await context.cluster.readDeployment(name);
  if (current === undefined || ownerOf(current) !== labels.deployment) return undefined;
  return new KubeWorkload(context, labels, name, current.spec?.replicas ?? 1, hooks, undefined).start(
    Math.ceil(context.pollMs / 1000) + 1,
  );
}

async function findWorkloads(context: Context, engine: string): Promise<FoundWorkload[]> {
  const found: FoundWorkload[] = [];
  for (const object of await context.cluster.list(labelSelector({ [ENGINE_LABELS.engine]: engineLabel(engine) }))) {
    if (object.kind !== 'Deployment') continue;
    const metadata = object.metadata;
    const labels: WorkloadLabels = {
      engine: metadata.annotations?.[ENGINE_HOME_ANNOTATION] ?? engine,
      server: metadata.annotations?.[SERVER_NAME_ANNOTATION] ?? metadata.labels?.['mcpctl/server'] ?? metadata.name,
      environment: metadata.labels?.['mcpctl/environment'] ?? 'development',
      deployment: metadata.labels?.[ENGINE_LABELS.deployment] ?? '',
    };
    const selector = labelSelector(workloadSelector(engine, metadata.name));
    found.push({ labels, remove: async (graceMs) => removeAndWait(context, selector, graceMs) });
  }
  return found;
}

type Context = {
  cluster: Cluster;
  settings: KubernetesSettings;
  logger: Logger;
  pollMs: number;
  watched: Set<KubeWorkload>;
};

function ownerOf(deployment: DeploymentView & { metadata?: { labels?: Record<string, string> } }): string | undefined {
  return deployment.metadata?.labels?.[ENGINE_LABELS.deployment];
}

async function bundleManifest(bundleDir: string): Promise<{ digest: string; version?: string }> {
  const manifest = JSON.parse(await readFile(join(bundleDir, MANIFEST_FILE), 'utf8')) as {
    digest: string;
    version?: string;
  };
  return manifest;
}

/** Deletes what an earlier spec applied and this one does not make (an Ingress once the domain is gone). */
async function prune(cluster: Cluster, selector: string, keep: KubernetesObject[]): Promise<void> {
  const kept = new Set(keep.map((o) => `${o.kind}/${o.metadata?.name}`));
  const stale = (await cluster.list(selector)).filter((o) => !kept.has(`${o.kind}/${o.metadata.name}`));
  for (const object of stale) await cluster.delete(object.apiVersion, object.kind, object.metadata.name);
}

/** Removes a workload's objects and waits (bounded) until its pods are gone. */
async function removeAndWait(context: Context, selector: string, graceMs: number): Promise<void> {
  const removed = await context.cluster.remove(selector);
  if (removed.length > 0) context.logger.info('removed from the cluster', { objects: removed.join(', ') });
  const until = Date.now() + graceMs + 30_000;
  while (Date.now() < until && (await context.cluster.pods(selector)).length > 0) await sleep(context.pollMs);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** One deployment's handle on its workload: polls it, forwards its pods, follows their logs. */
class KubeWorkload implements Workload {
  private last: Rollout | undefined;
  private owner: string | undefined;
  private current: Endpoint[] = [];
  private rollback: RollbackState = { started: false };
  private readonly forwards: PortForwards;
  private readonly followers = new Map<string, AbortController>();
  private readonly selector: string;
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  private fingerprint = '';

  constructor(
    private readonly context: Context,
    readonly labels: WorkloadLabels,
    private readonly name: string,
    private wanted: number,
    private readonly hooks: WorkloadHooks,
    private readonly previous: KubernetesObject[] | undefined,
  ) {
    this.selector = labelSelector(workloadSelector(labels.engine, name));
    this.forwards = createPortForwards(
      (pod, socket) => context.cluster.forward(pod, CONTAINER_PORT, socket),
      (pod, error) => context.logger.debug('a port-forward connection failed', { pod, error: describe(error) }),
    );
  }

  /** Starts watching; `logsSinceSeconds` 0 follows each pod's log from its start. */
  start(logsSinceSeconds: number): this {
    this.context.watched.add(this);
    this.logsSince = logsSinceSeconds;
    void this.poll();
    return this;
  }
  private logsSince = 0;

  private async poll(): Promise<void> {
    if (this.released) return;
    try {
      await this.observe();
    } catch (error) {
      this.context.logger.warn('reading the workload failed', { workload: this.name, error: describe(error) });
    }
    if (!this.released) this.timer = setTimeout(() => void this.poll(), this.context.pollMs);
  }

  private async observe(): Promise<void> {
    const { cluster, settings } = this.context;
    const [deployment, pods] = await Promise.all([cluster.readDeployment(this.name), cluster.pods(this.selector)]);
    if (this.released) return;
    this.owner = deployment === undefined ? undefined : ownerOf(deployment);
    const rollout = rolloutState(deployment, pods, this.wanted);
    this.last = rollout;
    if (
      rollout.state === 'failed' &&
      this.previous !== undefined &&
      !this.rollback.started &&
      this.owner === this.labels.deployment
    ) {
      this.rollback = { started: true, reason: rollout.reason };
      this.context.logger.warn('the update failed: applying the previous deployment again', {
        workload: this.name,
        reason: rollout.reason,
      });
      await cluster.apply(this.previous);
      await prune(cluster, this.selector, this.previous);
    }
    const live = pods.filter(
      (pod) => pod.metadata?.deletionTimestamp === undefined || pod.metadata.deletionTimestamp === null,
    );
    if (settings.address === 'port-forward') await this.forwards.sync(live.map((pod) => pod.name));
    this.current = endpointsOf(pods, settings.address, CONTAINER_PORT, (pod) => this.forwards.port(pod));
    for (const endpoint of this.current)
      if (endpoint.running && !this.followers.has(endpoint.id)) this.follow(endpoint.id);
    for (const [pod, controller] of this.followers) {
      if (!live.some((p) => p.name === pod)) {
        controller.abort();
        this.followers.delete(pod);
      }
    }
    const fingerprint = JSON.stringify([this.rollout(), this.current]);
    if (fingerprint !== this.fingerprint) {
      this.fingerprint = fingerprint;
      this.hooks.onChange();
    }
  }

  private follow(pod: string): void {
    const controller = new AbortController();
    this.followers.set(pod, controller);
    const since = this.logsSince === 0 ? undefined : this.logsSince;
    this.context.cluster
      .followPodLog(pod, (line) => this.hooks.onLog(line, pod), controller.signal, since)
      .catch((error: unknown) =>
        this.context.logger.debug('following a pod log ended', { pod, error: describe(error) }),
      )
      .finally(() => {
        // followed again at a later poll (from a few seconds back) if the pod still runs
        if (this.followers.get(pod) === controller && !controller.signal.aborted) this.followers.delete(pod);
        this.logsSince = Math.ceil(this.context.pollMs / 1000) + 1;
      });
  }

  rollout(): RolloutStatus {
    const status: RolloutStatus =
      this.last === undefined
        ? { phase: 'progressing', message: 'applied; waiting for the Deployment' }
        : rolloutPhase(this.last, this.rollback);
    if (status.phase === 'completed' || status.phase === 'rolled_back') this.settled = true;
    // no eternal progress: the Deployment's own deadline did not fire (its controller never saw the spec, say)
    const limitMs = (this.context.settings.progressDeadlineSeconds + 60) * 1000;
    if (
      !this.settled &&
      (status.phase === 'progressing' || status.phase === 'rolling_back') &&
      Date.now() - this.startedAt > limitMs
    ) {
      return {
        phase: 'failed',
        message: `no rollout within ${Math.round(limitMs / 1000)} s: ${status.message ?? 'no progress'}`,
      };
    }
    return status;
  }
  private settled = false;
  private readonly startedAt = Date.now();

  endpoints(): Endpoint[] {
    return this.current;
  }

  health(endpoint: Endpoint, timeoutMs: number): Promise<boolean> {
    return probeHealth(`http://${endpoint.host}:${endpoint.port}/health`, timeoutMs);
  }

  async scale(replicas: number): Promise<void> {
    this.wanted = replicas;
    await this.context.cluster.scale(this.name, replicas);
  }

  async remove(graceMs: number): Promise<void> {
    const deployment = await this.context.cluster.readDeployment(this.name);
    const owner = deployment === undefined ? undefined : ownerOf(deployment);
    this.release();
    if (owner !== this.labels.deployment) return;
    await removeAndWait(this.context, this.selector, graceMs);
  }

  release(): void {
    this.released = true;
    this.context.watched.delete(this);
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const controller of this.followers.values()) controller.abort();
    this.followers.clear();
    void this.forwards.close();
  }
}
