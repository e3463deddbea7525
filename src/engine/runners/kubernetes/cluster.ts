/**
 * The Kubernetes API as the kubernetes runner uses it: server-side apply of the manifests
 * (src/packaging/kubernetes-manifests.ts), a Deployment's rollout, its pods and their logs, the objects
 * an engine applied (found by label) and their removal. `@kubernetes/client-node` loads only here,
 * only when the kubernetes runner is chosen, so nothing else pays for it.
 *
 * The kubeconfig comes from the usual places (KubeConfig.loadFromDefault): KUBECONFIG, else
 * ~/.kube/config, else the service account of a pod the engine runs in.
 */
import type { KubernetesObject } from '../../../packaging/kubernetes-manifests.js';
import type { Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type * as ClientNodeModule from '@kubernetes/client-node';
import type { DeploymentView, PodView } from './rollout.js';

type ClientNode = typeof ClientNodeModule;
type KubeConfig = ClientNodeModule.KubeConfig;

export interface ListedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** Who changes the fields the runner applies: its server-side apply field manager. */
export const FIELD_MANAGER = 'mcpctl';

/** The kinds the runner applies, in the order it applies them (a Secret and a claim before the pods that use them). */
export const APPLIED_KINDS = [
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
] as const;

/** The cluster cannot be used as configured; the message says what to change. */
export class KubernetesUnavailableError extends Error {
  override readonly name = 'KubernetesUnavailableError';
}

export interface ClusterOptions {
  /** the namespace of every object; default: the kubeconfig context's, else `default` */
  namespace?: string;
  /** a kubeconfig context other than the current one */
  context?: string;
  /** the engine's KUBECONFIG (one file); unset: the usual places */
  kubeconfig?: string;
}

export interface Cluster {
  readonly namespace: string;
  /** the API server's address, for messages */
  readonly server: string;
  readonly version: string;
  /** server-side apply of each object, in order (field manager mcpctl, conflicts forced) */
  apply(objects: KubernetesObject[]): Promise<void>;
  readDeployment(name: string): Promise<DeploymentView | undefined>;
  readService(name: string): Promise<{ clusterIP?: string; port?: number } | undefined>;
  /** the pods that match a label selector (`a=b,c=d`) */
  pods(selector: string): Promise<(PodView & { ready: boolean; name: string })[]>;
  /** the last lines of a pod's container (`server`), with the times Kubernetes gives them */
  podLog(pod: string, options: { sinceSeconds?: number; tailLines?: number }): Promise<string>;
  /** follows a pod's log into `onLine` until `signal` aborts or the container ends */
  followPodLog(pod: string, onLine: (line: string) => void, signal: AbortSignal, sinceSeconds?: number): Promise<void>;
  /** the objects of each applied kind that carry these labels, as the API server has them */
  list(selector: string): Promise<ListedObject[]>;
  /** sets a Deployment's replicas (server-side apply of that one field, by its own field manager) */
  scale(name: string, replicas: number): Promise<void>;
  /** deletes one object (gone already: nothing to do) */
  delete(apiVersion: string, kind: string, name: string): Promise<void>;
  /** deletes every object of the applied kinds with these labels (pods go with their Deployment); returns what it deleted */
  remove(selector: string): Promise<string[]>;
  /** a TCP connection to a pod's port through the API server (the `kubectl port-forward` of one connection) */
  forward(pod: string, port: number, socket: Socket): Promise<void>;
}

/** `a=b,c=d` */
export function labelSelector(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
}

/**
 * Why no kubeconfig can be found in the usual places (undefined when one may be there): said before
 * the client falls back to an API server at localhost:8080 and reports that one as not answering.
 */
export function missingKubeconfig(kubeconfig: string | undefined, home: string, inPod: boolean): string | undefined {
  if ((kubeconfig ?? '') !== '' || inPod || existsSync(join(home, '.kube', 'config'))) return undefined;
  return `no kubeconfig: KUBECONFIG is not set, ${join(home, '.kube', 'config')} does not exist and the engine does not run in a pod; set KUBECONFIG to the kubeconfig of the cluster to deploy to`;
}

/** Loads the client and the kubeconfig, and checks that the API server answers. */
export async function connectCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const missing = missingKubeconfig(options.kubeconfig, homedir(), process.env.KUBERNETES_SERVICE_HOST !== undefined);
  if (missing !== undefined) throw new KubernetesUnavailableError(missing);
  const k8s: ClientNode = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  try {
    if (options.kubeconfig !== undefined && options.kubeconfig !== '' && !options.kubeconfig.includes(delimiter))
      kc.loadFromFile(options.kubeconfig);
    else kc.loadFromDefault();
    if (options.context !== undefined) kc.setCurrentContext(options.context);
  } catch (error) {
    throw new KubernetesUnavailableError(`the kubeconfig cannot be read: ${(error as Error).message}`);
  }
  const server = kc.getCurrentCluster()?.server ?? '(no cluster)';
  let version: string;
  try {
    const code = await kc.makeApiClient(k8s.VersionApi).getCode();
    version = code.gitVersion;
  } catch (error) {
    throw new KubernetesUnavailableError(
      `the Kubernetes API server at ${server} does not answer (${describe(error)}); the kubeconfig comes from KUBECONFIG, else ~/.kube/config, else the pod's service account`,
    );
  }
  const namespace = options.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  return makeCluster(k8s, kc, namespace, server, version);
}

/** The API clients of one kubeconfig, bound to one namespace: what every cluster operation works with. */
interface ClusterClient {
  k8s: ClientNode;
  kc: KubeConfig;
  namespace: string;
  objects: ClientNodeModule.KubernetesObjectApi;
  core: ClientNodeModule.CoreV1Api;
  apps: ClientNodeModule.AppsV1Api;
}

function makeCluster(k8s: ClientNode, kc: KubeConfig, namespace: string, server: string, version: string): Cluster {
  const client: ClusterClient = {
    k8s,
    kc,
    namespace,
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
  };
  return {
    namespace,
    server,
    version,
    apply: (list) => applyObjects(client, list),
    readDeployment: (name) => readDeployment(client, name),
    readService: (name) => readService(client, name),
    pods: (selector) => listPods(client, selector),
    podLog: (pod, options) => readPodLog(client, pod, options),
    followPodLog: (pod, onLine, signal, sinceSeconds) => followPodLog(client, pod, onLine, signal, sinceSeconds),
    list: (selector) => listApplied(client, selector),
    scale: (name, replicas) => scaleDeployment(client, name, replicas),
    delete: async (apiVersion, kind, name) => {
      await deleteObject(client, apiVersion, kind, name);
    },
    remove: (selector) => removeApplied(client, selector),
    forward: (pod, port, socket) => forwardPort(client, pod, port, socket),
  };
}

function notFound(error: unknown): boolean {
  return (error as { code?: number }).code === 404;
}

async function applyObjects({ k8s, objects, namespace }: ClusterClient, list: KubernetesObject[]): Promise<void> {
  for (const object of list) {
    const body = { ...object, metadata: { ...object.metadata, namespace } };
    try {
      await objects.patch(body as never, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
    } catch (error) {
      throw new Error(`applying ${object.kind} ${object.metadata?.name} in ${namespace} failed: ${describe(error)}`, {
        cause: error,
      });
    }
  }
}

async function readDeployment({ apps, namespace }: ClusterClient, name: string): Promise<DeploymentView | undefined> {
  try {
    return await apps.readNamespacedDeployment({ name, namespace });
  } catch (error) {
    if (notFound(error)) return undefined;
    throw error;
  }
}

async function readService(
  { core, namespace }: ClusterClient,
  name: string,
): Promise<{ clusterIP?: string; port?: number } | undefined> {
  try {
    const service = await core.readNamespacedService({ name, namespace });
    return {
      ...(service.spec?.clusterIP === undefined ? {} : { clusterIP: service.spec.clusterIP }),
      port: service.spec?.ports?.[0]?.port,
    };
  } catch (error) {
    if (notFound(error)) return undefined;
    throw error;
  }
}

async function listPods({ core, namespace }: ClusterClient, selector: string): ReturnType<Cluster['pods']> {
  const list = await core.listNamespacedPod({ namespace, labelSelector: selector });
  return list.items.map((pod) => ({
    ...(pod as PodView),
    name: pod.metadata?.name ?? '',
    ready:
      pod.metadata?.deletionTimestamp === undefined &&
      (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  }));
}

async function readPodLog(
  { core, namespace }: ClusterClient,
  pod: string,
  { sinceSeconds, tailLines }: { sinceSeconds?: number; tailLines?: number },
): Promise<string> {
  try {
    return await core.readNamespacedPodLog({
      name: pod,
      namespace,
      container: 'server',
      timestamps: true,
      ...(sinceSeconds === undefined ? {} : { sinceSeconds }),
      ...(tailLines === undefined ? {} : { tailLines }),
    });
  } catch (error) {
    // a pod that is gone, or whose container has not started yet, has no log
    if (notFound(error) || (error as { code?: number }).code === 400) return '';
    throw error;
  }
}

async function followPodLog(
  { k8s, kc, namespace }: ClusterClient,
  pod: string,
  onLine: (line: string) => void,
  signal: AbortSignal,
  sinceSeconds?: number,
): Promise<void> {
  const { PassThrough } = await import('node:stream');
  const { createInterface } = await import('node:readline');
  const stream = new PassThrough();
  const lines = createInterface({ input: stream });
  lines.on('line', onLine);
  const ended = new Promise<void>((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
  });
  const controller = await new k8s.Log(kc).log(namespace, pod, 'server', stream, {
    follow: true,
    ...(sinceSeconds === undefined ? {} : { sinceSeconds }),
  });
  const abort = () => {
    controller.abort();
    stream.end();
  };
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  await ended;
  signal.removeEventListener('abort', abort);
  lines.close();
}

/** The objects of one kind that carry these labels. */
async function listOfKind({ objects, namespace }: ClusterClient, apiVersion: string, kind: string, selector: string) {
  const list = await objects.list(apiVersion, kind, namespace, undefined, undefined, undefined, undefined, selector);
  return list.items;
}

async function listApplied(client: ClusterClient, selector: string): Promise<ListedObject[]> {
  const found: ListedObject[] = [];
  for (const { apiVersion, kind } of APPLIED_KINDS) {
    // the items of a list do not say their kind
    for (const item of await listOfKind(client, apiVersion, kind, selector))
      found.push({
        ...(item as object),
        apiVersion,
        kind,
        metadata: { ...item.metadata, name: item.metadata?.name ?? '' },
      });
  }
  return found;
}

async function scaleDeployment({ k8s, objects, namespace }: ClusterClient, name: string, replicas: number) {
  const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace }, spec: { replicas } };
  await objects.patch(body, undefined, undefined, `${FIELD_MANAGER}-scale`, true, k8s.PatchStrategy.ServerSideApply);
}

/** Deletes one object; false when it was gone already. */
async function deleteObject(
  { objects, namespace }: ClusterClient,
  apiVersion: string,
  kind: string,
  name: string,
): Promise<boolean> {
  try {
    await objects.delete(
      { apiVersion, kind, metadata: { name, namespace } },
      undefined,
      undefined,
      undefined,
      undefined,
      'Background',
    );
    return true;
  } catch (error) {
    if (!notFound(error)) throw error;
    return false;
  }
}

async function removeApplied(client: ClusterClient, selector: string): Promise<string[]> {
  const removed: string[] = [];
  // the way in, backwards: nothing routes to the pods before they go
  for (const { apiVersion, kind } of [...APPLIED_KINDS].reverse()) {
    for (const item of await listOfKind(client, apiVersion, kind, selector)) {
      const name = item.metadata?.name ?? '';
      if (await deleteObject(client, apiVersion, kind, name)) removed.push(`${kind}/${name}`);
    }
  }
  return removed;
}

async function forwardPort({ k8s, kc, namespace }: ClusterClient, pod: string, port: number, socket: Socket) {
  const forwarder = new k8s.PortForward(kc, true);
  // the WebSocket (isomorphic-ws, whose types are not installed): only its close is used
  const ws = (await forwarder.portForward(namespace, pod, [port], socket, null, socket)) as unknown as {
    on(event: 'close', listener: () => void): void;
    close(): void;
  };
  // either side closing closes the other: a pod that goes ends the gateway's connection, and a
  // connection the gateway drops does not keep a WebSocket to the API server open
  ws.on('close', () => socket.end());
  socket.on('close', () => ws.close());
}

/** An API error as one line: the Status's message when the server sent one. */
export function describe(error: unknown): string {
  const e = error as { code?: number; body?: unknown; message?: string };
  let body = e.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      // not JSON: the text itself
    }
  }
  const message =
    typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string'
      ? (body as { message: string }).message
      : undefined;
  if (message !== undefined) return e.code === undefined ? message : `${e.code}: ${message}`;
  return e.message ?? String(error);
}
