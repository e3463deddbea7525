/**
 * One builder per kind of Kubernetes object a server runs as: Secret, Service, Deployment (its
 * container, probes and spread), PodDisruptionBudget, HorizontalPodAutoscaler and Ingress. Each takes
 * what the objects of one export share (`ManifestContext`) and what it alone needs;
 * kubernetes-manifests.ts decides which of them an export has. Pure: no IO.
 */
import type {
  IIoK8sApiCoreV1Container,
  IIoK8sApiCoreV1EnvVar,
  IIoK8sApiCoreV1ResourceRequirements,
  IIoK8sApiCoreV1TopologySpreadConstraint,
} from 'kubernetes-models/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import type { ImageContract } from './image.js';
import type { KubernetesExportOptions } from './kubernetes-options.js';
import { METRICS_PORT } from './prometheus-rule.js';

export const DEFAULT_ISSUER = 'letsencrypt-prod';
export const DEFAULT_TARGET_CPU_UTILIZATION = 70;
export const DEFAULT_RESOURCES = {
  requests: { cpu: '100m', memory: '128Mi' },
  limits: { cpu: '500m', memory: '256Mi' },
} as const;
/** The zone of every well-known cloud's nodes; the spread key of "instances across regions". */
export const REGION_TOPOLOGY_KEY = 'topology.kubernetes.io/region';

/** What every object of one export shares. */
export interface ManifestContext {
  /** the base name of every object */
  name: string;
  namespace?: string;
  /** the labels that pick the pods: never changed by a new version */
  selector: Record<string, string>;
  /** every label of every object and pod: the selector's and more */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  image: ImageContract;
}

export interface ObjectMetadata {
  name: string;
  namespace?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The metadata of an object of the export, with more annotations for that object alone. */
export function objectMetadata(
  context: ManifestContext,
  objectName: string,
  extra: Record<string, string> = {},
): ObjectMetadata {
  return {
    name: objectName,
    ...(context.namespace === undefined ? {} : { namespace: context.namespace }),
    labels: context.labels,
    annotations: { ...context.annotations, ...extra },
  };
}

/**
 * The container's requests and limits from the deployment's `resources`: a value given is both the
 * request and the limit (the scheduler reserves all of it, so the pod is placed only where it fits, and
 * memory use up to it never makes the pod the first one evicted); what is not given keeps the default.
 */
export function kubernetesResources(
  resources: KubernetesExportOptions['resources'],
): IIoK8sApiCoreV1ResourceRequirements {
  const result = structuredClone<{ requests: Record<string, string>; limits: Record<string, string> }>(
    DEFAULT_RESOURCES,
  );
  if (resources?.memory_mb !== undefined) result.requests.memory = result.limits.memory = `${resources.memory_mb}Mi`;
  if (resources?.cpus !== undefined)
    result.requests.cpu = result.limits.cpu = `${Math.max(1, Math.round(resources.cpus * 1000))}m`;
  return result;
}

/** The Secret of the values passed for the server's variables, keys in order. */
export function secretObject(context: ManifestContext, secretName: string, values: Record<string, string>): ISecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: objectMetadata(context, secretName),
    type: 'Opaque',
    data: Object.fromEntries(
      Object.keys(values)
        .sort()
        .map((key) => [key, Buffer.from(values[key]!, 'utf8').toString('base64')]),
    ),
  };
}

export const SERVICE_PORT = 80;

/** The Service in front of the pods, inside the cluster. */
export function serviceObject(context: ManifestContext): IService {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: objectMetadata(context, context.name),
    spec: {
      type: 'ClusterIP',
      selector: context.selector,
      ports: [{ name: 'http', port: SERVICE_PORT, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' }],
    },
  };
}

function healthProbe(image: ImageContract, periodSeconds: number, failureThreshold: number) {
  return {
    httpGet: { path: image.healthPath, port: 'http' },
    periodSeconds,
    timeoutSeconds: 2,
    failureThreshold,
  };
}

/**
 * The server's container: the image contract's command, port and user, locked down; given its
 * environment, it also answers GET /metrics on its `metrics` port, labelled with it (on a cluster
 * no engine in front of it counts its requests).
 */
export function serverContainer(
  image: ImageContract,
  env: IIoK8sApiCoreV1EnvVar[],
  resources: KubernetesExportOptions['resources'],
  metricsEnvironment: string | undefined,
): IIoK8sApiCoreV1Container {
  const metrics = metricsEnvironment !== undefined;
  return {
    name: 'server',
    image: image.image,
    // the tag is a content digest: an image of that tag never changes
    imagePullPolicy: 'IfNotPresent',
    command: image.command,
    ...(metrics ? { args: ['--metrics-port', String(METRICS_PORT), '--environment', metricsEnvironment] } : {}),
    ports: [
      { name: 'http', containerPort: image.port, protocol: 'TCP' },
      ...(metrics ? [{ name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' as const }] : []),
    ],
    env,
    resources: kubernetesResources(resources),
    // the engine gives an instance 30 s to start (docs/deployments.md)
    startupProbe: healthProbe(image, 2, 15),
    readinessProbe: healthProbe(image, 5, 2),
    livenessProbe: healthProbe(image, 10, 3),
    securityContext: {
      runAsNonRoot: true,
      runAsUser: image.user.uid,
      runAsGroup: image.user.gid,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: [{ name: 'scratch', mountPath: image.scratchDir }],
  };
}

/**
 * Across regions where the cluster has them, and across nodes; preferred, so a cluster in one region
 * (or whose nodes have no region label) still runs every instance. None for a single instance.
 */
export function topologySpread(
  selector: Record<string, string>,
  maxInstances: number,
): IIoK8sApiCoreV1TopologySpreadConstraint[] {
  if (maxInstances < 2) return [];
  return [REGION_TOPOLOGY_KEY, 'kubernetes.io/hostname'].map((topologyKey) => ({
    topologyKey,
    maxSkew: 1,
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: selector },
    matchLabelKeys: ['pod-template-hash'],
  }));
}

export interface DeploymentSettings {
  replicas: { min: number; max: number };
  container: IIoK8sApiCoreV1Container;
  progressDeadlineSeconds?: number;
}

/** The Deployment that runs the pods, rolling one new instance in before an old one goes. */
export function deploymentObject(context: ManifestContext, settings: DeploymentSettings): IDeployment {
  const { image, selector } = context;
  const { min, max } = settings.replicas;
  const spread = topologySpread(selector, max);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: objectMetadata(context, context.name),
    spec: {
      // with an autoscaler the replica count is its to set; applying the manifest again must not reset it
      ...(max > min ? {} : { replicas: min }),
      revisionHistoryLimit: 10,
      ...(settings.progressDeadlineSeconds === undefined
        ? {}
        : { progressDeadlineSeconds: settings.progressDeadlineSeconds }),
      selector: { matchLabels: selector },
      // a new version is up and ready before an old instance goes: never without a healthy instance
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: context.labels, annotations: context.annotations },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: image.drainSeconds + 10,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: image.user.uid,
            runAsGroup: image.user.gid,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [settings.container],
          volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '64Mi' } }],
          ...(spread.length === 0 ? {} : { topologySpreadConstraints: spread }),
        },
      },
    },
  };
}

/** A drain takes one instance at a time. */
export function disruptionBudgetObject(context: ManifestContext): IPodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: objectMetadata(context, context.name),
    spec: { maxUnavailable: 1, selector: { matchLabels: context.selector } },
  };
}

/** Scales the Deployment between `min` and `max` on CPU use. */
export function autoscalerObject(
  context: ManifestContext,
  replicas: { min: number; max: number },
  targetCpuUtilization = DEFAULT_TARGET_CPU_UTILIZATION,
): IHorizontalPodAutoscaler {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: objectMetadata(context, context.name),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: context.name },
      minReplicas: replicas.min,
      maxReplicas: replicas.max,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: targetCpuUtilization } },
        },
      ],
    },
  };
}

/** The Ingress of `domain` (lower case), with a certificate from cert-manager. */
export function ingressObject(
  context: ManifestContext,
  domain: string,
  options: Pick<KubernetesExportOptions, 'issuer' | 'ingressClass'>,
): IIngress {
  const { name } = context;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: objectMetadata(context, name, {
      'cert-manager.io/cluster-issuer': options.issuer ?? DEFAULT_ISSUER,
      // MCP answers may stream (server-sent events): a buffering proxy would hold them back
      'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
    }),
    spec: {
      ...(options.ingressClass === undefined ? {} : { ingressClassName: options.ingressClass }),
      tls: [{ hosts: [domain], secretName: `${name}-tls` }],
      rules: [
        {
          host: domain,
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name, port: { name: 'http' } } } }],
          },
        },
      ],
    },
  };
}
