/**
 * A built server and an environment as Kubernetes objects: Deployment, Service, Secret,
 * PodDisruptionBudget, HorizontalPodAutoscaler, Ingress and a default-deny NetworkPolicy
 * (kubernetes-network-policy.ts). A pure function from the server and the
 * deployment's settings to typed objects, so `mcpctl export kubernetes` (src/cli/commands/export.ts) writes them as
 * YAML and the engine's kubernetes runner (src/engine/kubernetes) applies the very same objects with
 * server-side apply. It lives here, beside the image contract, because both of those layers use it.
 * docs/kubernetes.md maps each field.
 *
 * The types are the Kubernetes API's own (kubernetes-models, types only: nothing of it loads at run
 * time). Pure: no IO.
 */
import { createHash } from 'node:crypto';
import type {
  IIoK8sApiCoreV1Container,
  IIoK8sApiCoreV1EnvVar,
  IIoK8sApiCoreV1ResourceRequirements,
  IIoK8sApiCoreV1TopologySpreadConstraint,
} from 'kubernetes-models/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import type { Environment } from '../api/contract.js';
import { resolveScalingRange } from '../definition/scaling.js';
import { UserError, type Problem } from '../shared/errors.js';
import { AUDIENCES_ENV } from '../runtime/server/auth.js';
import { networkPolicy, type EgressSettings } from './kubernetes-network-policy.js';
import {
  BUNDLE_DIGEST_ANNOTATION,
  BUNDLE_LABEL_LENGTH,
  DIGEST_PATTERN,
  imageContract,
  LABELS,
  type ImageContract,
} from './image.js';

export type KubernetesObject =
  ISecret | IService | IDeployment | IPodDisruptionBudget | IHorizontalPodAutoscaler | IIngress | INetworkPolicy;

/** The built server the objects run. */
export interface KubernetesServer {
  name: string;
  version?: string;
  /** the bundle digest: the image tag */
  digest: string;
}

export interface KubernetesExportOptions {
  environment: Environment;
  /** the deployment's settings, as a deploy request's `config` holds them */
  domain?: string;
  scaling?: { min_instances?: number; max_instances?: number };
  /** values passed for the server's variables: the only values the Secret holds */
  envValues?: Record<string, string>;
  /** variables the server needs (or the deploy section lists) that were given no value: referenced, not written */
  envWithoutValue?: string[];
  namespace?: string;
  registry?: string;
  /** cert-manager ClusterIssuer that issues the Ingress's certificate */
  issuer?: string;
  ingressClass?: string;
  /** the deployment's `resources` (deploy.resources): the container's limits and requests; defaults otherwise */
  resources?: { memory_mb?: number; cpus?: number };
  /** average CPU use, in percent of the request, the autoscaler aims for */
  targetCpuUtilization?: number;
  /** the base name of the objects instead of `<server>-<environment>` (the engine's runner: one per deployment) */
  name?: string;
  /** more labels on every object and pod (never in the selector): the engine's runner finds its objects by them */
  extraLabels?: Record<string, string>;
  /** how long a rollout may make no progress before the Deployment reports ProgressDeadlineExceeded (Kubernetes' default: 600) */
  progressDeadlineSeconds?: number;
  /**
   * Who may call the server: the definition's `auth.type`, or `missing` when it has no `auth`. An
   * Ingress for a server without one is refused; `none` exposes it on purpose (said in the notices);
   * with `oauth` the container accepts tokens for the Ingress's MCP URL. Left out, nothing is checked
   * or added (the engine's runner, whose deploy has checked exposure and set the audiences itself).
   */
  auth?: 'bearer' | 'oauth' | 'none' | 'missing';
  /**
   * A NetworkPolicy that denies all traffic of the pods but what they need (default true). The
   * engine's runner leaves it out: it reaches the pods at their own address from outside the cluster.
   */
  networkPolicy?: boolean;
  /** the definition's `egress`: what the NetworkPolicy lets out besides public addresses */
  egress?: EgressSettings;
  /** the namespace of the Ingress controller the NetworkPolicy lets in (default ingress-nginx) */
  ingressNamespace?: string;
}

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
}

export const DEFAULT_ISSUER = 'letsencrypt-prod';
export const DEFAULT_TARGET_CPU_UTILIZATION = 70;
export const DEFAULT_RESOURCES = {
  requests: { cpu: '100m', memory: '128Mi' },
  limits: { cpu: '500m', memory: '256Mi' },
} as const;

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

/** The zone of every well-known cloud's nodes; the spread key of "instances across regions". */
export const REGION_TOPOLOGY_KEY = 'topology.kubernetes.io/region';

/**
 * Instances per environment, with the local engine's meaning (docs/api.md, limits): development is
 * one instance, staging one or two, production at least two. A cluster has room the local engine does
 * not, so production has no upper bound here.
 */
export const KUBERNETES_INSTANCE_BOUNDS = {
  development: { min: 1, max: 1, defaultMin: 1, defaultMax: 1 },
  staging: { min: 1, max: 2, defaultMin: 1, defaultMax: 1 },
  production: { min: 2, max: Number.POSITIVE_INFINITY, defaultMin: 2, defaultMax: 4 },
} as const;

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
// DNS-1123 subdomain: a ClusterIssuer, an IngressClass, a namespace (stricter: a label)
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const LABEL_KEY =
  /^([a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$/;
/** Room for the longest suffix (`-tls`) in a 63-character name. */
const MAX_BASE_NAME = 52;

/** The instance range of an environment, or the problems of the given one (paths as a deploy request's). */
export function resolveKubernetesScaling(
  environment: Environment,
  scaling: KubernetesExportOptions['scaling'],
): { ok: true; min: number; max: number } | { ok: false; problems: Problem[] } {
  return resolveScalingRange(KUBERNETES_INSTANCE_BOUNDS[environment], environment, scaling);
}

/** Every problem of the options, with a field path (`config.domain`) or the flag it came from. */
export function checkKubernetesOptions(server: KubernetesServer, options: KubernetesExportOptions): Problem[] {
  const problems: Problem[] = [];
  if (!DIGEST_PATTERN.test(server.digest))
    problems.push({ path: 'digest', message: `"${server.digest}" is not a bundle digest (64 hexadecimal characters)` });
  const scaling = resolveKubernetesScaling(options.environment, options.scaling);
  if (!scaling.ok) problems.push(...scaling.problems);
  if (options.domain !== undefined && !HOST_NAME.test(options.domain)) {
    problems.push({
      path: 'config.domain',
      message: 'must be a host name such as mcp.example.com (no scheme, port or path)',
    });
  }
  if (options.domain === undefined) {
    if (options.issuer !== undefined)
      problems.push({
        path: '--issuer',
        message: 'a certificate issuer needs a domain: the Ingress and its certificate are for the domain',
      });
    if (options.ingressClass !== undefined)
      problems.push({ path: '--ingress-class', message: 'an Ingress needs a domain to route' });
  }
  if (options.issuer !== undefined && !DNS_SUBDOMAIN.test(options.issuer))
    problems.push({
      path: '--issuer',
      message: 'must be the name of a cert-manager ClusterIssuer (lower case letters, digits, - and .)',
    });
  if (options.ingressClass !== undefined && !DNS_SUBDOMAIN.test(options.ingressClass))
    problems.push({
      path: '--ingress-class',
      message: 'must be the name of an IngressClass (lower case letters, digits, - and .)',
    });
  if (options.namespace !== undefined && !DNS_LABEL.test(options.namespace))
    problems.push({
      path: '--namespace',
      message:
        'must be a namespace name: at most 63 lower case letters, digits and -, starting and ending with a letter or digit',
    });
  const { memory_mb: memory, cpus } = options.resources ?? {};
  if (memory !== undefined && (!Number.isInteger(memory) || memory < 32))
    problems.push({ path: 'config.resources.memory_mb', message: 'must be a whole number of MiB, at least 32' });
  if (cpus !== undefined && (!Number.isFinite(cpus) || cpus <= 0))
    problems.push({ path: 'config.resources.cpus', message: 'must be a positive number of CPUs, such as 0.5' });
  if (
    options.name !== undefined &&
    (!DNS_LABEL.test(options.name) || options.name.length > MAX_BASE_NAME || !/^[a-z]/.test(options.name))
  )
    problems.push({
      path: 'name',
      message: `must be a DNS label of at most ${MAX_BASE_NAME} characters, starting with a letter`,
    });
  for (const [key, value] of Object.entries(options.extraLabels ?? {})) {
    if (!LABEL_KEY.test(key) || !LABEL_VALUE.test(value))
      problems.push({ path: `labels.${key}`, message: 'must be a Kubernetes label (key and value)' });
  }
  const deadline = options.progressDeadlineSeconds;
  if (deadline !== undefined && (!Number.isInteger(deadline) || deadline < 1))
    problems.push({ path: 'progressDeadlineSeconds', message: 'must be a whole number of seconds, at least 1' });
  const target = options.targetCpuUtilization;
  if (target !== undefined && (!Number.isInteger(target) || target < 1 || target > 100))
    problems.push({ path: 'targetCpuUtilization', message: 'must be a whole percentage from 1 to 100' });
  return problems;
}

/** The MCP endpoint the Ingress of `domain` serves. */
export function ingressMcpUrl(domain: string): string {
  return `https://${domain.toLowerCase()}/mcp`;
}

/**
 * The refusal of an Ingress (a domain) for a server that does not say who may call it: reachable by
 * anyone who finds the domain. `auth: { type: none }` says so on purpose. Undefined when allowed.
 */
export function exposureError(
  server: KubernetesServer,
  options: Pick<KubernetesExportOptions, 'domain' | 'auth'>,
): UserError | undefined {
  if (options.domain === undefined || options.auth !== 'missing') return undefined;
  return new UserError(
    `${server.name} has no auth, and its Ingress would let anyone who reaches ${options.domain.toLowerCase()} call it`,
    {
      code: 'validation_failed',
      problems: [{ path: 'auth', message: 'a server reachable at a domain must say who may call it' }],
      hint: 'add auth: { type: oauth, issuer, scopes } to the definition (docs/auth.md), or auth: { type: none } to expose it on purpose',
    },
  );
}

/**
 * `<server>-<environment>` as a DNS label short enough for every derived name: lower case, other
 * characters as `-`; a name cut to fit gets a short hash of the whole, so two long names stay apart.
 */
export function kubernetesName(serverName: string, environment: Environment): string {
  let base = serverName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
  if (!/^[a-z]/.test(base)) base = `mcp-${base}`.replace(/-+$/, '');
  const full = `${base}-${environment}`;
  if (full.length <= MAX_BASE_NAME) return full;
  const hash = createHash('sha256').update(`${serverName}\n${environment}`).digest('hex').slice(0, 6);
  const room = MAX_BASE_NAME - environment.length - hash.length - 2;
  return `${base.slice(0, room).replace(/-+$/, '')}-${hash}-${environment}`;
}

/** A label value: at most 63 characters, letters and digits at both ends. */
function labelValue(text: string): string {
  return text
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

/** The objects that run `server` in `options.environment`. Throws UserError (exit 2) with every problem. */
export function kubernetesManifests(server: KubernetesServer, options: KubernetesExportOptions): KubernetesExport {
  const problems = checkKubernetesOptions(server, options);
  if (problems.length > 0) {
    throw new UserError('the Kubernetes manifests cannot be made from these settings', {
      problems,
      hint: 'fix the fields above and export again',
    });
  }
  const refused = exposureError(server, options);
  if (refused !== undefined) throw refused;
  const { environment } = options;
  const scaling = resolveKubernetesScaling(environment, options.scaling);
  if (!scaling.ok) throw new Error('unreachable: scaling was checked');
  const { min, max } = scaling;
  const name = options.name ?? kubernetesName(server.name, environment);
  const image = imageContract(server.digest, {
    ...(options.registry === undefined ? {} : { registry: options.registry }),
    logLevel: environment === 'development' ? 'debug' : 'info',
  });
  const notices: string[] = [];

  const selector = {
    'app.kubernetes.io/name': labelValue(server.name) || 'mcp-server',
    'app.kubernetes.io/instance': name,
  };
  const labels: Record<string, string> = {
    ...selector,
    'app.kubernetes.io/component': 'mcp-server',
    'app.kubernetes.io/managed-by': 'mcpctl',
    ...(server.version === undefined || labelValue(server.version) === ''
      ? {}
      : { 'app.kubernetes.io/version': labelValue(server.version) }),
    [LABELS.server]: labelValue(server.name),
    [LABELS.environment]: environment,
    [LABELS.bundle]: server.digest.slice(0, BUNDLE_LABEL_LENGTH),
    ...options.extraLabels,
  };
  const annotations = { [BUNDLE_DIGEST_ANNOTATION]: server.digest, 'mcpctl/server-name': server.name };
  const metadata = (objectName: string, extra: Record<string, string> = {}) => ({
    name: objectName,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    labels,
    annotations: { ...annotations, ...extra },
  });

  // --- the server's variables: values the user passed, references for every name -------------
  const values = options.envValues ?? {};
  const withoutValue = [...new Set(options.envWithoutValue ?? [])].filter((n) => values[n] === undefined).sort();
  const envNames = [...new Set([...Object.keys(values), ...withoutValue])].sort();
  const secretName = `${name}-env`;
  const objects: KubernetesObject[] = [];
  if (Object.keys(values).length > 0) {
    const secret: ISecret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: metadata(secretName),
      type: 'Opaque',
      data: Object.fromEntries(
        Object.keys(values)
          .sort()
          .map((key) => [key, Buffer.from(values[key]!, 'utf8').toString('base64')]),
      ),
    };
    objects.push(secret);
  }
  // behind the Ingress a request reaches the pod as plain HTTP to the Service: the public MCP URL is
  // the one tokens are issued for, so the instance is told it
  const audiences =
    options.auth === 'oauth' && options.domain !== undefined && !envNames.includes(AUDIENCES_ENV)
      ? [ingressMcpUrl(options.domain)]
      : [];
  const env: IIoK8sApiCoreV1EnvVar[] = [
    ...Object.entries(image.env).map(([key, value]) => ({ name: key, value })),
    ...(audiences.length === 0 ? [] : [{ name: AUDIENCES_ENV, value: audiences.join(' ') }]),
    // not optional: a pod without one of its values does not start, rather than start without it
    ...envNames.map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretName, key } } })),
  ];

  // --- Service ------------------------------------------------------------------------------
  const servicePort = 80;
  const service: IService = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(name),
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [{ name: 'http', port: servicePort, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' }],
    },
  };

  // --- Deployment ---------------------------------------------------------------------------
  const probe = (periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path: image.healthPath, port: 'http' },
    periodSeconds,
    timeoutSeconds: 2,
    failureThreshold,
  });
  const container: IIoK8sApiCoreV1Container = {
    name: 'server',
    image: image.image,
    // the tag is a content digest: an image of that tag never changes
    imagePullPolicy: 'IfNotPresent',
    command: image.command,
    ports: [{ name: 'http', containerPort: image.port, protocol: 'TCP' }],
    env,
    resources: kubernetesResources(options.resources),
    // the engine gives an instance 30 s to start (docs/deployments.md)
    startupProbe: probe(2, 15),
    readinessProbe: probe(5, 2),
    livenessProbe: probe(10, 3),
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
  const spread: IIoK8sApiCoreV1TopologySpreadConstraint[] =
    max < 2
      ? []
      : [
          // across regions where the cluster has them, and across nodes; preferred, so a cluster in one
          // region (or whose nodes have no region label) still runs every instance
          {
            topologyKey: REGION_TOPOLOGY_KEY,
            maxSkew: 1,
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: selector },
            matchLabelKeys: ['pod-template-hash'],
          },
          {
            topologyKey: 'kubernetes.io/hostname',
            maxSkew: 1,
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: selector },
            matchLabelKeys: ['pod-template-hash'],
          },
        ];
  const autoscaled = max > min;
  const deployment: IDeployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(name),
    spec: {
      // with an autoscaler the replica count is its to set; applying the manifest again must not reset it
      ...(autoscaled ? {} : { replicas: min }),
      revisionHistoryLimit: 10,
      ...(options.progressDeadlineSeconds === undefined
        ? {}
        : { progressDeadlineSeconds: options.progressDeadlineSeconds }),
      selector: { matchLabels: selector },
      // a new version is up and ready before an old instance goes: never without a healthy instance
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels, annotations },
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
          containers: [container],
          volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '64Mi' } }],
          ...(spread.length === 0 ? {} : { topologySpreadConstraints: spread }),
        },
      },
    },
  };
  objects.push(service, deployment);

  // --- PodDisruptionBudget: a drain takes one instance at a time -----------------------------
  if (min >= 2) {
    const pdb: IPodDisruptionBudget = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: metadata(name),
      spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
    };
    objects.push(pdb);
  }

  // --- HorizontalPodAutoscaler --------------------------------------------------------------
  if (autoscaled) {
    const hpa: IHorizontalPodAutoscaler = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: metadata(name),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
        minReplicas: min,
        maxReplicas: max,
        metrics: [
          {
            type: 'Resource',
            resource: {
              name: 'cpu',
              target: {
                type: 'Utilization',
                averageUtilization: options.targetCpuUtilization ?? DEFAULT_TARGET_CPU_UTILIZATION,
              },
            },
          },
        ],
      },
    };
    objects.push(hpa);
  }

  // --- Ingress with a certificate from cert-manager -----------------------------------------
  if (options.domain === undefined) {
    notices.push(
      environment === 'production'
        ? 'no domain: no Ingress; the server is reachable inside the cluster only (set deploy.domain or pass --domain)'
        : 'no domain: no Ingress; the server is reachable inside the cluster only',
    );
  } else {
    const domain = options.domain.toLowerCase();
    if (options.auth === 'none') notices.push(`public: anyone who reaches ${domain} can call it (auth: none)`);
    const ingress: IIngress = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: metadata(name, {
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
    objects.push(ingress);
  }
  if (options.networkPolicy !== false) {
    const made = networkPolicy({
      metadata: metadata(name),
      selector,
      port: image.port,
      ingress: options.domain !== undefined,
      ...(options.ingressNamespace === undefined ? {} : { ingressNamespace: options.ingressNamespace }),
      ...(options.egress === undefined ? {} : { egress: options.egress }),
    });
    objects.push(made.policy);
    notices.push(...made.notices);
  }
  if (withoutValue.length > 0) {
    notices.push(
      `no value for ${withoutValue.join(', ')}: the pods do not start until the Secret ${secretName} holds ${withoutValue.length === 1 ? 'it' : 'them'}`,
    );
  }
  return { name, image, replicas: { min, max }, objects, envWithoutValue: withoutValue, notices };
}
