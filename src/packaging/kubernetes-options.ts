/**
 * The settings a server's Kubernetes objects are made from, and their checks: the instance range of
 * each environment, the names and labels the objects may carry, and whether a server may be exposed
 * at a domain. Every problem is reported with its field path (`config.domain`) or the flag it came
 * from, so `mcpctl export kubernetes` and the engine's kubernetes runner refuse the same settings the
 * same way. Pure: no IO.
 */
import { createHash } from 'node:crypto';
import type { Environment } from '../api/contract.js';
import { resolveScalingRange } from '../definition/scaling.js';
import { UserError, type Problem } from '../shared/errors.js';
import type { EgressSettings } from './kubernetes-network-policy.js';
import { DIGEST_PATTERN } from './image.js';

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
  /**
   * Each pod answers GET /metrics on its `metrics` port (default true: on a cluster nothing else
   * counts its requests). The engine's runner leaves it out: its gateway counts them.
   */
  metrics?: boolean;
  /** the namespace of the Prometheus the NetworkPolicy lets scrape /metrics (default monitoring) */
  monitoringNamespace?: string;
  /**
   * The server has tools that run as tasks: where the pods keep their state (kubernetes-tasks.ts).
   * `storageClass`: a ReadWriteMany class whose claim every pod mounts; `maxInstances`: the most pods
   * at once, where that is not `max_instances` (the engine's runner applies a fixed count it scales).
   */
  tasks?: { storageClass?: string; maxInstances?: number };
}

/**
 * Instances per environment, with the local engine's meaning (docs/api.md, limits): development is
 * one instance, staging one or two, production at least two. A cluster has room the local engine does
 * not, so production has no upper bound here. Scale to zero (min_instances 0) is not a Deployment's.
 */
export const KUBERNETES_INSTANCE_BOUNDS = {
  development: { min: 1, max: 1, defaultMin: 1, defaultMax: 1 },
  staging: { min: 1, max: 2, defaultMin: 1, defaultMax: 1 },
  production: {
    min: 2,
    max: Number.POSITIVE_INFINITY,
    defaultMin: 2,
    defaultMax: 4,
    zeroHint:
      'scale to zero (min_instances 0) is the local engine’s, with its process and docker runners; on a cluster, scale to zero with an event-driven autoscaler such as KEDA’s HTTP add-on',
  },
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

type OptionCheck = (server: KubernetesServer, options: KubernetesExportOptions) => Problem[];

const checkDigest: OptionCheck = (server) =>
  DIGEST_PATTERN.test(server.digest)
    ? []
    : [{ path: 'digest', message: `"${server.digest}" is not a bundle digest (64 hexadecimal characters)` }];

const checkScaling: OptionCheck = (_server, options) => {
  const scaling = resolveKubernetesScaling(options.environment, options.scaling);
  return scaling.ok ? [] : scaling.problems;
};

const checkDomain: OptionCheck = (_server, options) => {
  if (options.domain !== undefined) {
    return HOST_NAME.test(options.domain)
      ? []
      : [{ path: 'config.domain', message: 'must be a host name such as mcp.example.com (no scheme, port or path)' }];
  }
  const problems: Problem[] = [];
  if (options.issuer !== undefined)
    problems.push({
      path: '--issuer',
      message: 'a certificate issuer needs a domain: the Ingress and its certificate are for the domain',
    });
  if (options.ingressClass !== undefined)
    problems.push({ path: '--ingress-class', message: 'an Ingress needs a domain to route' });
  return problems;
};

const checkClusterNames: OptionCheck = (_server, options) => {
  const problems: Problem[] = [];
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
  const storageClass = options.tasks?.storageClass;
  if (storageClass !== undefined && !DNS_SUBDOMAIN.test(storageClass))
    problems.push({
      path: '--tasks-storage-class',
      message: 'must be the name of a StorageClass (lower case letters, digits, - and .)',
    });
  if (options.namespace !== undefined && !DNS_LABEL.test(options.namespace))
    problems.push({
      path: '--namespace',
      message:
        'must be a namespace name: at most 63 lower case letters, digits and -, starting and ending with a letter or digit',
    });
  return problems;
};

const checkResources: OptionCheck = (_server, options) => {
  const { memory_mb: memory, cpus } = options.resources ?? {};
  const problems: Problem[] = [];
  if (memory !== undefined && (!Number.isInteger(memory) || memory < 32))
    problems.push({ path: 'config.resources.memory_mb', message: 'must be a whole number of MiB, at least 32' });
  if (cpus !== undefined && (!Number.isFinite(cpus) || cpus <= 0))
    problems.push({ path: 'config.resources.cpus', message: 'must be a positive number of CPUs, such as 0.5' });
  return problems;
};

const checkBaseName: OptionCheck = (_server, { name }) =>
  name === undefined || (DNS_LABEL.test(name) && name.length <= MAX_BASE_NAME && /^[a-z]/.test(name))
    ? []
    : [{ path: 'name', message: `must be a DNS label of at most ${MAX_BASE_NAME} characters, starting with a letter` }];

const checkExtraLabels: OptionCheck = (_server, options) =>
  Object.entries(options.extraLabels ?? {})
    .filter(([key, value]) => !LABEL_KEY.test(key) || !LABEL_VALUE.test(value))
    .map(([key]) => ({ path: `labels.${key}`, message: 'must be a Kubernetes label (key and value)' }));

const checkProgressDeadline: OptionCheck = (_server, { progressDeadlineSeconds: deadline }) =>
  deadline === undefined || (Number.isInteger(deadline) && deadline >= 1)
    ? []
    : [{ path: 'progressDeadlineSeconds', message: 'must be a whole number of seconds, at least 1' }];

const checkTargetCpuUtilization: OptionCheck = (_server, { targetCpuUtilization: target }) =>
  target === undefined || (Number.isInteger(target) && target >= 1 && target <= 100)
    ? []
    : [{ path: 'targetCpuUtilization', message: 'must be a whole percentage from 1 to 100' }];

/** In the order their problems are reported. */
const OPTION_CHECKS: OptionCheck[] = [
  checkDigest,
  checkScaling,
  checkDomain,
  checkClusterNames,
  checkResources,
  checkBaseName,
  checkExtraLabels,
  checkProgressDeadline,
  checkTargetCpuUtilization,
];

/** Every problem of the options, with a field path (`config.domain`) or the flag it came from. */
export function checkKubernetesOptions(server: KubernetesServer, options: KubernetesExportOptions): Problem[] {
  return OPTION_CHECKS.flatMap((check) => check(server, options));
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
