/**
 * A built server and an environment as Kubernetes objects: Deployment, Service, Secret,
 * PodDisruptionBudget, HorizontalPodAutoscaler, Ingress, a default-deny NetworkPolicy and the claim
 * of the tasks' state (kubernetes-tasks.ts). A pure
 * function from the server and the deployment's settings (kubernetes-options.ts) to typed objects
 * (one builder per kind in kubernetes-objects.ts, the policy in kubernetes-network-policy.ts), so
 * `mcpctl export kubernetes` (src/cli/commands/export.ts) writes them as YAML and the engine's
 * kubernetes runner (src/engine/runners/kubernetes) applies the very same objects with server-side
 * apply. It belongs to the packaging layer, beside the image contract, because both of those use it.
 * docs/kubernetes.md maps each field.
 *
 * The types are the Kubernetes API's own (kubernetes-models, types only: nothing of it loads at run
 * time). Pure: no IO.
 */
import type { IIoK8sApiCoreV1EnvVar } from 'kubernetes-models/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IPersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { UserError } from '../shared/errors.js';
import { AUDIENCES_ENV } from '../runtime/server/auth.js';
import { BUNDLE_DIGEST_ANNOTATION, BUNDLE_LABEL_LENGTH, imageContract, LABELS, type ImageContract } from './image.js';
import { networkPolicy } from './kubernetes-network-policy.js';
import { METRICS_PORT } from './prometheus-rule.js';
import { taskClaimObject, taskNotice, taskStorage, withTaskClaim, type TaskStorage } from './kubernetes-tasks.js';
import {
  autoscalerObject,
  deploymentObject,
  disruptionBudgetObject,
  ingressObject,
  objectMetadata,
  secretObject,
  serverContainer,
  serviceObject,
  type ManifestContext,
} from './kubernetes-objects.js';
import {
  checkKubernetesOptions,
  exposureError,
  ingressMcpUrl,
  kubernetesName,
  resolveKubernetesScaling,
  type KubernetesExportOptions,
  type KubernetesServer,
} from './kubernetes-options.js';

// what the CLI and the engine's runner call, from one module
export { checkKubernetesOptions, kubernetesName, type KubernetesExportOptions, type KubernetesServer };

export type KubernetesObject =
  | ISecret
  | IPersistentVolumeClaim
  | IService
  | IDeployment
  | IPodDisruptionBudget
  | IHorizontalPodAutoscaler
  | IIngress
  | INetworkPolicy;

export interface KubernetesExport {
  /** the base name of every object: `<server>-<environment>` as a DNS label */
  name: string;
  image: ImageContract;
  replicas: { min: number; max: number };
  objects: KubernetesObject[];
  /** variables referenced from the Secret that this export has no value for */
  envWithoutValue: string[];
  /** what the objects leave out, said plainly (no domain: no Ingress) */
  notices: string[];
  /** where the pods keep the state of their tasks, when the server's tools run as tasks */
  tasks?: { storage: TaskStorage; notice?: string };
}

/** A label value: at most 63 characters, letters and digits at both ends. */
function labelValue(text: string): string {
  return text
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

/** The instance range of checked options. Throws UserError (exit 2) with every problem of them. */
function checkedReplicas(server: KubernetesServer, options: KubernetesExportOptions): { min: number; max: number } {
  const problems = checkKubernetesOptions(server, options);
  if (problems.length > 0) {
    throw new UserError('the Kubernetes manifests cannot be made from these settings', {
      problems,
      hint: 'fix the fields above and export again',
    });
  }
  const refused = exposureError(server, options);
  if (refused !== undefined) throw refused;
  const scaling = resolveKubernetesScaling(options.environment, options.scaling);
  if (!scaling.ok) throw new Error('unreachable: scaling was checked');
  return { min: scaling.min, max: scaling.max };
}

function manifestContext(
  server: KubernetesServer,
  options: KubernetesExportOptions,
  name: string,
  image: ImageContract,
): ManifestContext {
  const selector = {
    'app.kubernetes.io/name': labelValue(server.name) || 'mcp-server',
    'app.kubernetes.io/instance': name,
  };
  const version = server.version === undefined ? '' : labelValue(server.version);
  const labels: Record<string, string> = {
    ...selector,
    'app.kubernetes.io/component': 'mcp-server',
    'app.kubernetes.io/managed-by': 'mcpctl',
    ...(version === '' ? {} : { 'app.kubernetes.io/version': version }),
    [LABELS.server]: labelValue(server.name),
    [LABELS.environment]: options.environment,
    [LABELS.bundle]: server.digest.slice(0, BUNDLE_LABEL_LENGTH),
    ...options.extraLabels,
  };
  const annotations = { [BUNDLE_DIGEST_ANNOTATION]: server.digest, 'mcpctl/server-name': server.name };
  return {
    name,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    selector,
    labels,
    annotations,
    image,
  };
}

/** The server's variables: values the user passed, and a reference from the pod for every name. */
interface ServerVariables {
  secretName: string;
  values: Record<string, string>;
  /** every variable the pod reads from the Secret, sorted */
  names: string[];
  /** the names of those that have no value here, sorted */
  withoutValue: string[];
}

function serverVariables(options: KubernetesExportOptions, name: string): ServerVariables {
  const values = options.envValues ?? {};
  const withoutValue = [...new Set(options.envWithoutValue ?? [])].filter((n) => values[n] === undefined).sort();
  const names = [...new Set([...Object.keys(values), ...withoutValue])].sort();
  return { secretName: `${name}-env`, values, names, withoutValue };
}

function containerEnv(
  options: KubernetesExportOptions,
  image: ImageContract,
  variables: ServerVariables,
): IIoK8sApiCoreV1EnvVar[] {
  // behind the Ingress a request reaches the pod as plain HTTP to the Service: the public MCP URL is
  // the one tokens are issued for, so the instance is told it
  const audiences =
    options.auth === 'oauth' && options.domain !== undefined && !variables.names.includes(AUDIENCES_ENV)
      ? [ingressMcpUrl(options.domain)]
      : [];
  return [
    ...Object.entries(image.env).map(([key, value]) => ({ name: key, value })),
    ...(audiences.length === 0 ? [] : [{ name: AUDIENCES_ENV, value: audiences.join(' ') }]),
    // not optional: a pod without one of its values does not start, rather than start without it
    ...variables.names.map((key) => ({
      name: key,
      valueFrom: { secretKeyRef: { name: variables.secretName, key } },
    })),
  ];
}

function exposureNotices(options: KubernetesExportOptions): string[] {
  if (options.domain === undefined) {
    return [
      options.environment === 'production'
        ? 'no domain: no Ingress; the server is reachable inside the cluster only (set deploy.domain or pass --domain)'
        : 'no domain: no Ingress; the server is reachable inside the cluster only',
    ];
  }
  const domain = options.domain.toLowerCase();
  return options.auth === 'none' ? [`public: anyone who reaches ${domain} can call it (auth: none)`] : [];
}

function missingValueNotices({ withoutValue, secretName }: ServerVariables): string[] {
  if (withoutValue.length === 0) return [];
  const pronoun = withoutValue.length === 1 ? 'it' : 'them';
  return [
    `no value for ${withoutValue.join(', ')}: the pods do not start until the Secret ${secretName} holds ${pronoun}`,
  ];
}

function defaultDenyPolicy(
  context: ManifestContext,
  options: KubernetesExportOptions,
): { policy: INetworkPolicy; notices: string[] } | undefined {
  if (options.networkPolicy === false) return undefined;
  return networkPolicy({
    metadata: objectMetadata(context, context.name),
    selector: context.selector,
    port: context.image.port,
    ...(options.metrics === false ? {} : { metricsPort: METRICS_PORT }),
    ...(options.monitoringNamespace === undefined ? {} : { monitoringNamespace: options.monitoringNamespace }),
    ingress: options.domain !== undefined,
    ...(options.ingressNamespace === undefined ? {} : { ingressNamespace: options.ingressNamespace }),
    ...(options.egress === undefined ? {} : { egress: options.egress }),
  });
}

/** The objects that run `server` in `options.environment`. Throws UserError (exit 2) with every problem. */
export function kubernetesManifests(server: KubernetesServer, options: KubernetesExportOptions): KubernetesExport {
  const replicas = checkedReplicas(server, options);
  const { min, max } = replicas;
  const name = options.name ?? kubernetesName(server.name, options.environment);
  const image = imageContract(server.digest, {
    ...(options.registry === undefined ? {} : { registry: options.registry }),
    logLevel: options.environment === 'development' ? 'debug' : 'info',
  });
  const context = manifestContext(server, options, name, image);
  const variables = serverVariables(options, name);
  const container = serverContainer(
    image,
    containerEnv(options, image, variables),
    options.resources,
    options.metrics === false ? undefined : options.environment,
  );
  const policy = defaultDenyPolicy(context, options);
  const tasks =
    options.tasks === undefined
      ? undefined
      : taskStorage(options.tasks.storageClass, options.tasks.maxInstances ?? max);
  const claimed = tasks === undefined || tasks.mode === 'per-pod' ? undefined : tasks;
  const deployment = deploymentObject(context, {
    replicas,
    container,
    ...(options.progressDeadlineSeconds === undefined
      ? {}
      : { progressDeadlineSeconds: options.progressDeadlineSeconds }),
  });
  const taskText = tasks === undefined ? undefined : taskNotice(name, tasks);
  const objects: Array<KubernetesObject | undefined> = [
    Object.keys(variables.values).length > 0
      ? secretObject(context, variables.secretName, variables.values)
      : undefined,
    claimed === undefined ? undefined : taskClaimObject(context, claimed),
    serviceObject(context),
    claimed === undefined ? deployment : withTaskClaim(deployment, context, claimed),
    min >= 2 ? disruptionBudgetObject(context) : undefined,
    max > min ? autoscalerObject(context, replicas, options.targetCpuUtilization) : undefined,
    options.domain === undefined ? undefined : ingressObject(context, options.domain.toLowerCase(), options),
    policy?.policy,
  ];
  return {
    name,
    image,
    replicas: { min, max },
    objects: objects.filter((object) => object !== undefined),
    envWithoutValue: variables.withoutValue,
    notices: [
      ...exposureNotices(options),
      ...(policy?.notices ?? []),
      ...missingValueNotices(variables),
      ...(taskText === undefined ? [] : [taskText]),
    ],
    ...(tasks === undefined
      ? {}
      : { tasks: { storage: tasks, ...(taskText === undefined ? {} : { notice: taskText }) } }),
  };
}
