/**
 * The settings of the docker runner (with Swarm on a manager) and of the kubernetes runner, declared
 * for the registry (settings.ts). Each is also a key of its runner's section of engine-settings.json.
 */
import { oneOf, positive, text, wholeNumber, type SettingParser } from './setting-parsers.js';
import { defineSetting as define } from './settings-resolver.js';

/** The file's seconds are JSON numbers (the variable's are text). */
const fileSeconds: SettingParser<number> = {
  allowed: 'a positive number of seconds',
  parse: (raw) => (typeof raw === 'number' && Number.isFinite(raw) && raw > 0 ? raw : undefined),
};

/** An object of strings: as JSON text in the variable, as a JSON object in the file. */
function stringMap(allowed: string): SettingParser<Record<string, string>> {
  const ofObject = (raw: unknown) =>
    typeof raw === 'object' &&
    raw !== null &&
    !Array.isArray(raw) &&
    Object.values(raw).every((value) => typeof value === 'string')
      ? (raw as Record<string, string>)
      : undefined;
  return {
    allowed,
    parse: (raw) => {
      if (typeof raw !== 'string') return ofObject(raw);
      try {
        return ofObject(JSON.parse(raw));
      } catch {
        return undefined;
      }
    },
  };
}

/** The docker runner's, and Swarm's on a manager (docs/engine.md, "Swarm"). */
export const DOCKER_SETTINGS = {
  dockerBaseImage: define({
    env: 'MCPCTL_DOCKER_BASE_IMAGE',
    parser: text,
    defaultText: '`node:20-slim`',
    doc: "the base image of the deployments' images (the docker and kubernetes runners)",
    audience: 'user',
    group: 'docker',
  }),
  dockerMemoryMb: define({
    env: 'MCPCTL_DOCKER_MEMORY_MB',
    parser: positive,
    defaultText: '`256`',
    doc: "each container's memory limit, in MiB",
    audience: 'user',
    group: 'docker',
  }),
  dockerCpus: define({
    env: 'MCPCTL_DOCKER_CPUS',
    parser: positive,
    defaultText: '`0.5`',
    doc: "each container's CPU limit, in cores",
    audience: 'user',
    group: 'docker',
  }),
  swarm: define({
    env: 'MCPCTL_SWARM',
    key: 'swarm.enabled',
    parser: oneOf(['auto', 'off'] as const, { allowed: 'auto or off' }),
    fileParser: {
      allowed: 'true or false',
      parse: (raw) => (raw === true ? 'auto' : raw === false ? 'off' : undefined),
    },
    default: 'auto',
    doc: 'on a Swarm manager, `auto` runs production deployments as Swarm services; `off` (`false` in the file): containers always',
    audience: 'user',
    group: 'swarm',
  }),
  swarmSpread: define({
    env: 'MCPCTL_SWARM_SPREAD',
    key: 'swarm.spread',
    parser: text,
    fileParser: {
      allowed: 'a node label such as "region"',
      parse: (raw) => (typeof raw === 'string' && raw.trim() !== '' ? raw : undefined),
    },
    defaultText: '`node.labels.region`',
    doc: "the node label Swarm spreads a service's tasks over (a bare name means `node.labels.<name>`)",
    audience: 'user',
    group: 'swarm',
  }),
  swarmMonitorSeconds: define({
    env: 'MCPCTL_SWARM_MONITOR_SECONDS',
    key: 'swarm.monitor_seconds',
    parser: positive,
    fileParser: fileSeconds,
    defaultText: '`10`',
    doc: 'how long Swarm watches each updated task before it counts it good (a failure in that window rolls back)',
    audience: 'tuning',
    group: 'swarm',
  }),
  swarmHealthIntervalSeconds: define({
    env: 'MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS',
    key: 'swarm.health_interval_seconds',
    parser: positive,
    fileParser: fileSeconds,
    defaultText: '`2`',
    doc: "the tasks' `HEALTHCHECK` interval (start period: 10 intervals, at least 5 s)",
    audience: 'tuning',
    group: 'swarm',
  }),
  swarmTasksVolumeDriver: define({
    env: 'MCPCTL_SWARM_TASKS_VOLUME_DRIVER',
    key: 'swarm.tasks_volume_driver',
    parser: text,
    defaultText: '`local`',
    doc: 'the volume driver of the volume a service with task tools shares across its replicas (docs/runtime.md, "Tasks")',
    audience: 'user',
    group: 'swarm',
  }),
  swarmTasksVolumeOptions: define({
    env: 'MCPCTL_SWARM_TASKS_VOLUME_OPTIONS',
    key: 'swarm.tasks_volume_options',
    parser: stringMap(
      'a JSON object of strings such as {"type":"nfs","o":"addr=10.0.0.5,rw","device":":/exports/mcpctl"}',
    ),
    defaultText: 'none',
    doc: "that volume's driver options; a `local` volume is each node's own, an NFS export makes it one for all nodes",
    audience: 'user',
    group: 'swarm',
  }),
};

/** The kubernetes runner's (docs/kubernetes.md). */
export const KUBERNETES_SETTINGS = {
  kubernetesNamespace: define({
    env: 'MCPCTL_KUBERNETES_NAMESPACE',
    key: 'kubernetes.namespace',
    parser: {
      allowed: 'a namespace name (lower case letters, digits and -)',
      parse: (raw) => (typeof raw === 'string' && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(raw) ? raw : undefined),
    },
    defaultText: "the kubeconfig context's, else `default`",
    doc: 'the namespace of every object the runner applies',
    audience: 'user',
    group: 'kubernetes',
  }),
  kubernetesContext: define({
    env: 'MCPCTL_KUBERNETES_CONTEXT',
    key: 'kubernetes.context',
    parser: text,
    defaultText: 'the current one',
    doc: 'the kubeconfig context to use',
    audience: 'user',
    group: 'kubernetes',
  }),
  kubernetesRegistry: define({
    env: 'MCPCTL_KUBERNETES_REGISTRY',
    key: 'kubernetes.registry',
    parser: text,
    defaultText: 'none',
    doc: 'where the cluster pulls the images from; the engine pushes them there when it has a Docker host',
    audience: 'user',
    group: 'kubernetes',
  }),
  kubernetesAddress: define({
    env: 'MCPCTL_KUBERNETES_ADDRESS',
    key: 'kubernetes.address',
    parser: oneOf(['port-forward', 'pod'] as const),
    default: 'port-forward',
    doc: "how the gateway reaches the pods: through the API server, or at the pod's IP (an engine in the cluster)",
    audience: 'user',
    group: 'kubernetes',
  }),
  kubernetesIssuer: define({
    env: 'MCPCTL_KUBERNETES_ISSUER',
    key: 'kubernetes.issuer',
    parser: text,
    defaultText: '`letsencrypt-prod`',
    doc: "the cert-manager ClusterIssuer of a domain's certificate",
    audience: 'user',
    group: 'kubernetes',
  }),
  kubernetesIngressClass: define({
    env: 'MCPCTL_KUBERNETES_INGRESS_CLASS',
    key: 'kubernetes.ingress_class',
    parser: text,
    defaultText: "the cluster's default",
    doc: 'the ingress class of a domain',
    audience: 'user',
    group: 'kubernetes',
  }),
  kubernetesTasksStorageClass: define({
    env: 'MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS',
    key: 'kubernetes.tasks_storage_class',
    parser: {
      allowed: 'the name of a StorageClass (lower case letters, digits, - and .)',
      parse: (raw) =>
        typeof raw === 'string' && raw.length <= 253 && /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(raw) ? raw : undefined,
    },
    defaultText:
      'none: one instance keeps its tasks on a ReadWriteOnce claim of the default class, more each their own',
    doc: 'a ReadWriteMany storage class whose claim the pods of a server with task tools share for their tasks',
    audience: 'user',
    group: 'kubernetes',
  }),
  kubernetesProgressDeadline: define({
    env: 'MCPCTL_KUBERNETES_PROGRESS_DEADLINE',
    key: 'kubernetes.progress_deadline_seconds',
    parser: wholeNumber(10, undefined, 'a whole number of seconds, at least 10'),
    default: 120,
    doc: 'a rollout with no progress for this many seconds fails',
    audience: 'tuning',
    group: 'kubernetes',
  }),
};
