/**
 * What the kubernetes runner decides without the cluster: its settings, the name and labels of a
 * workload, the objects it applies (the export's, from src/packaging/kubernetes-manifests.ts, with the
 * engine's labels), the endpoints the gateway routes to, and the rollout as the orchestrator seam's
 * phase. Pure: no IO; orchestrator.ts does the calls.
 */
import { createHash } from 'node:crypto';
import type { Environment } from '../../../api/contract.js';
import { checkRegistry } from '../../../packaging/image.js';
import {
  kubernetesManifests,
  kubernetesName,
  type KubernetesExport,
  type KubernetesObject,
} from '../../../packaging/kubernetes-manifests.js';
import type { Endpoint, RolloutStatus, WorkloadSpec } from '../orchestrator.js';
import type { PodView, Rollout } from './rollout.js';
import {
  resolveSetting,
  SETTINGS,
  SettingError,
  type ResolvedSettingOf,
  type Setting,
} from '../../../shared/settings.js';

/** How the engine's gateway reaches the pods. */
export type AddressMode = NonNullable<ReturnType<typeof SETTINGS.kubernetesAddress.parser.parse>>;

export interface KubernetesSettings {
  /** the namespace of every object; default: the kubeconfig context's, else `default` */
  namespace?: string;
  /** a kubeconfig context other than the current one */
  context?: string;
  /** where the cluster pulls the images from; the engine builds and pushes them there when it has a Docker host */
  registry?: string;
  /**
   * `port-forward` (default): each pod through the API server on a loopback port, wherever the
   * kubeconfig works; `pod`: the pod's IP and port 8080, for an engine inside the cluster (or on its pod network)
   */
  address: AddressMode;
  /** cert-manager ClusterIssuer of a domain's certificate */
  issuer?: string;
  ingressClass?: string;
  /** a rollout with no progress for this long fails (the Deployment's progressDeadlineSeconds) */
  progressDeadlineSeconds: number;
  /** a ReadWriteMany storage class: the pods of a deployment with task tools share its claim for their tasks */
  tasksStorageClass?: string;
}

export const DEFAULT_PROGRESS_DEADLINE_SECONDS = SETTINGS.kubernetesProgressDeadline.default;

/** Labels the runner adds to every object it applies (and every pod). */
export const ENGINE_LABELS = {
  /** a hash of the engine's home: a label value cannot hold a path */
  engine: 'mcpctl/engine',
  /** the deployment whose spec the workload runs now (its owner) */
  deployment: 'mcpctl/deployment',
} as const;
/** The engine's home and the server's name as they are (labels hold cut versions). */
export const ENGINE_HOME_ANNOTATION = 'mcpctl/engine-home';
export const SERVER_NAME_ANNOTATION = 'mcpctl/server-name';

/**
 * The settings, from the environment (MCPCTL_KUBERNETES_*) over `kubernetes` (`section`) of the settings file;
 * every wrong value is a problem, and the setting keeps its default.
 */
export function kubernetesSettings(
  env: Record<string, string | undefined>,
  section: unknown,
  settingsFile = 'engine-settings.json',
): { settings: KubernetesSettings; problems: string[] } {
  const sources = { env, file: { path: settingsFile, values: { kubernetes: section } } };
  const problems: string[] = [];
  const read = <T, D extends T | undefined>(setting: Setting<T, D>): ResolvedSettingOf<T, D> | undefined => {
    try {
      return resolveSetting(setting, sources);
    } catch (error) {
      if (!(error instanceof SettingError)) throw error;
      problems.push(error.message);
      return setting.default === undefined ? undefined : { value: setting.default, from: 'default' };
    }
  };
  const namespace = read(SETTINGS.kubernetesNamespace)?.value;
  const registry = read(SETTINGS.kubernetesRegistry);
  const registryProblem = registry === undefined ? undefined : checkRegistry(registry.value);
  if (registryProblem !== undefined)
    problems.push(`${registry!.from}: ${JSON.stringify(registry!.value)}: ${registryProblem}`);
  const address = read(SETTINGS.kubernetesAddress)!.value;
  const progressDeadlineSeconds = read(SETTINGS.kubernetesProgressDeadline)!.value;
  const context = read(SETTINGS.kubernetesContext)?.value;
  const issuer = read(SETTINGS.kubernetesIssuer)?.value;
  const ingressClass = read(SETTINGS.kubernetesIngressClass)?.value;
  const tasksStorageClass = read(SETTINGS.kubernetesTasksStorageClass)?.value;
  return {
    settings: {
      ...(namespace === undefined ? {} : { namespace }),
      ...(context === undefined ? {} : { context }),
      ...(registry === undefined || registryProblem !== undefined ? {} : { registry: registry.value }),
      address,
      ...(issuer === undefined ? {} : { issuer }),
      ...(ingressClass === undefined ? {} : { ingressClass }),
      progressDeadlineSeconds,
      ...(tasksStorageClass === undefined ? {} : { tasksStorageClass }),
    },
    problems,
  };
}

/** The label value of an engine's home: `e-` and 16 hexadecimal characters of its hash. */
export function engineLabel(home: string): string {
  return `e-${createHash('sha256').update(home).digest('hex').slice(0, 16)}`;
}

/** One workload per engine, server and environment: `<server>-<6 of the engine's hash>-<environment>`. */
export function workloadName(engine: string, server: string, environment: Environment): string {
  return kubernetesName(`${server}-${engineLabel(engine).slice(2, 8)}`, environment);
}

/** The selector of everything the runner applied for one workload. */
export function workloadSelector(engine: string, name: string): Record<string, string> {
  return { [ENGINE_LABELS.engine]: engineLabel(engine), 'app.kubernetes.io/instance': name };
}

export interface WorkloadInput {
  spec: WorkloadSpec;
  digest: string;
  version?: string;
  namespace: string;
  settings: KubernetesSettings;
}

/** The objects of a workload: the export's objects for its spec, labelled for the engine; a fixed replica count (the engine scales). */
export function workloadManifests({ spec, digest, version, namespace, settings }: WorkloadInput): KubernetesExport {
  const environment = spec.labels.environment as Environment;
  const name = workloadName(spec.labels.engine, spec.labels.server, environment);
  const result = kubernetesManifests(
    { name: spec.labels.server, digest, ...(version === undefined ? {} : { version }) },
    {
      environment,
      name,
      namespace,
      scaling: { min_instances: spec.replicas, max_instances: spec.replicas },
      envValues: spec.env,
      ...(spec.domain === undefined ? {} : { domain: spec.domain }),
      ...(settings.registry === undefined ? {} : { registry: settings.registry }),
      ...(spec.domain === undefined || settings.issuer === undefined ? {} : { issuer: settings.issuer }),
      ...(spec.domain === undefined || settings.ingressClass === undefined
        ? {}
        : { ingressClass: settings.ingressClass }),
      ...(spec.resources === undefined
        ? {}
        : {
            resources: {
              ...(spec.resources.memoryMb === undefined ? {} : { memory_mb: spec.resources.memoryMb }),
              ...(spec.resources.cpus === undefined ? {} : { cpus: spec.resources.cpus }),
            },
          }),
      extraLabels: {
        [ENGINE_LABELS.engine]: engineLabel(spec.labels.engine),
        [ENGINE_LABELS.deployment]: spec.labels.deployment,
      },
      progressDeadlineSeconds: settings.progressDeadlineSeconds,
      // the engine reaches the pods at their own address from outside the cluster: a policy would shut it out
      networkPolicy: false,
      // the engine's gateway counts the requests: no port of the pods' own for Prometheus
      metrics: false,
      // the count is fixed here, but the engine scales it up to the deployment's max_instances
      ...(spec.tasks === undefined
        ? {}
        : {
            tasks: {
              maxInstances: Math.max(spec.tasks.maxReplicas, spec.replicas),
              ...(settings.tasksStorageClass === undefined ? {} : { storageClass: settings.tasksStorageClass }),
            },
          }),
    },
  );
  for (const object of result.objects) {
    object.metadata!.annotations = { ...object.metadata!.annotations, [ENGINE_HOME_ANNOTATION]: spec.labels.engine };
  }
  // the log level of the environment is the image contract's; the spec's wins where it differs
  const container = result.objects.find((o) => o.kind === 'Deployment')?.spec?.template.spec?.containers[0];
  if (container?.command !== undefined) {
    const at = container.command.indexOf('--log-level');
    if (at !== -1) container.command[at + 1] = spec.logLevel;
  }
  return result;
}

/** Annotations the API server and its controllers add (a rollout's revision, a claim's binding and provisioner). */
const ADDED_ANNOTATIONS = [
  'deployment.kubernetes.io/',
  'kubectl.kubernetes.io/',
  'pv.kubernetes.io/',
  'volume.kubernetes.io/',
  'volume.beta.kubernetes.io/',
];

/**
 * An object read back from the cluster as it can be applied again (the previous owner's objects, for
 * a rollback): only what the runner itself writes, without what the API server adds.
 */
export function reapplicable(object: Record<string, unknown>): KubernetesObject {
  const metadata = (object.metadata ?? {}) as {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  const annotations = Object.fromEntries(
    Object.entries(metadata.annotations ?? {}).filter(([key]) => !ADDED_ANNOTATIONS.some((p) => key.startsWith(p))),
  );
  const { status: _status, metadata: _metadata, ...rest } = object;
  if (object.kind === 'PersistentVolumeClaim' && typeof rest.spec === 'object' && rest.spec !== null) {
    // the volume it was bound to: a claim made again (deleted since) binds to a new one
    const { volumeName: _volume, ...spec } = rest.spec as Record<string, unknown>;
    rest.spec = spec;
  }
  return {
    ...rest,
    metadata: {
      name: metadata.name,
      ...(metadata.namespace === undefined ? {} : { namespace: metadata.namespace }),
      ...(metadata.labels === undefined ? {} : { labels: metadata.labels }),
      ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
    },
  } as KubernetesObject;
}

/** A pod of the workload, as the seam's endpoint. */
export interface PodEndpointInput extends PodView {
  name: string;
  metadata?: PodView['metadata'] & { labels?: Record<string, string> };
  status?: PodView['status'] & { podIP?: string };
}

/**
 * The pods as endpoints. `pod`: the pod's IP and the container's port; `port-forward`: the loopback
 * port `forwarded(pod)` gives (undefined: not yet listening, so not an endpoint yet).
 */
export function endpointsOf(
  pods: PodEndpointInput[],
  mode: AddressMode,
  containerPort: number,
  forwarded: (pod: string) => number | undefined,
): Endpoint[] {
  const endpoints: Endpoint[] = [];
  for (const pod of pods) {
    const deleting = pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
    const container = pod.status?.containerStatuses?.[0];
    const waiting = container?.state?.waiting?.reason;
    const phase = pod.status?.phase ?? 'Pending';
    const running =
      !deleting && phase === 'Running' && waiting === undefined && container?.state?.terminated === undefined;
    const host = mode === 'pod' ? pod.status?.podIP : '127.0.0.1';
    const port = mode === 'pod' ? containerPort : forwarded(pod.name);
    if (host === undefined || port === undefined) continue;
    endpoints.push({
      id: pod.name,
      host,
      port,
      deployment: pod.metadata?.labels?.[ENGINE_LABELS.deployment] ?? '',
      running,
      state: deleting ? 'stopping' : (waiting ?? phase.toLowerCase()),
    });
  }
  return endpoints.sort((a, b) => a.id.localeCompare(b.id));
}

/** Where a rollback stands, when the runner undid a failed update. */
export type RollbackState = { started: false } | { started: true; reason: string };

/** The rollout of a deployment's spec as the seam's phase. */
export function rolloutPhase(rollout: Rollout, rollback: RollbackState): RolloutStatus {
  if (rollback.started) {
    return rollout.state === 'deployed'
      ? {
          phase: 'rolled_back',
          message: `the update failed and the previous deployment's objects were applied again: ${rollback.reason}`,
        }
      : { phase: 'rolling_back', message: `${rollback.reason}; going back: ${rollout.reason}` };
  }
  if (rollout.state === 'deployed') return { phase: 'completed', message: rollout.reason };
  if (rollout.state === 'failed') return { phase: 'failed', message: rollout.reason };
  return { phase: 'progressing', message: rollout.reason };
}
