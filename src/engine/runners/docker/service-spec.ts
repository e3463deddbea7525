/**
 * The Swarm service of a deployment (Engine API ServiceSpec), as pure data: the same hardened
 * container as the Docker runner's (user 10001, read-only root filesystem with a tmpfs /tmp, no new
 * privileges, every capability dropped, memory and CPU limits, an init), `replicas` of it, a
 * HEALTHCHECK on /health so Swarm gates its rollouts on health, health-gated rolling updates
 * (start-first, one at a time, rolled back on failure after a monitor window), a restart policy,
 * placement spread over a node label (`node.labels.region`), and port 8080 published in host mode
 * on a port Swarm picks (the ingress routing mesh is not used). The deployment's values are not in
 * its `Env`: they come as a Docker secret (swarm-secrets.ts) the runtime reads as its `--values-file`.
 * A definition with task tools gets the deployment's task volume (task-volume.ts) in every task,
 * made on each node with the driver and options of the settings.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { BUNDLE_LABEL_LENGTH, LABELS, SWARM_ENV_FILE, type ImageContract } from '../../../packaging/image.js';
import { secretReference, type EnvSecret } from './swarm-secrets.js';
import { TASKS_DIR_ENV } from '../../../runtime/constants.js';
import { taskVolumeMount, tasksDirIn, type TaskVolumeDriver } from './task-volume.js';
import type { WorkloadLabels, WorkloadSpec } from '../orchestrator.js';

/** Label keys of a service (and, for `deployment`, of its tasks' containers). */
export const SERVICE_LABELS = {
  engine: 'mcpctl/engine',
  server: 'mcpctl/server-name',
  environment: 'mcpctl/environment',
  deployment: 'mcpctl/deployment',
  /** on the tasks' containers: not `mcpctl/deployment`, so the Docker runner never takes them for its own */
  task: 'mcpctl/swarm-deployment',
} as const;

export interface SwarmSettings {
  /** the placement preference's spread descriptor */
  spread: string;
  /** how long Swarm watches each updated task before it counts the update of that task as good */
  monitorMs: number;
  /** the HEALTHCHECK's interval */
  healthIntervalMs: number;
  /** how long one check may take (it starts a node process in the task's CPU limit) */
  healthTimeoutMs: number;
  /** failed checks in a row before a task is unhealthy */
  healthRetries: number;
  /** the HEALTHCHECK's start period */
  healthStartMs: number;
  /** a failed task is restarted after this delay */
  restartDelayMs: number;
  /** how the task volume is made on each node (a service with task tools) */
  tasksVolume?: TaskVolumeDriver;
}

export const DEFAULT_SWARM_SETTINGS: SwarmSettings = {
  spread: 'node.labels.region',
  monitorMs: 10_000,
  healthIntervalMs: 2_000,
  healthTimeoutMs: 5_000,
  healthRetries: 3,
  healthStartMs: 20_000,
  restartDelayMs: 2_000,
};

export interface ServiceLimits {
  memoryBytes: number;
  cpus: number;
  pids: number;
  tmpBytes: number;
}

const MS = 1_000_000;

/** `mcpctl-<server>-<environment>-<hash of the engine's home>`: one service per server and environment of an engine. */
export function serviceName(labels: Pick<WorkloadLabels, 'engine' | 'server' | 'environment'>): string {
  const home = createHash('sha256').update(labels.engine).digest('hex').slice(0, 8);
  const server = labels.server
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 30)
    .replace(/^-+|-+$/g, '');
  return `mcpctl-${server || 'server'}-${labels.environment.slice(0, 4)}-${home}`;
}

export function serviceLabels(labels: WorkloadLabels): Record<string, string> {
  return {
    [SERVICE_LABELS.engine]: labels.engine,
    [SERVICE_LABELS.server]: labels.server,
    [SERVICE_LABELS.environment]: labels.environment,
    [SERVICE_LABELS.deployment]: labels.deployment,
  };
}

/** The labels of a service as a workload's. */
export function workloadLabelsOf(labels: Record<string, string> | undefined): WorkloadLabels {
  return {
    engine: labels?.[SERVICE_LABELS.engine] ?? '',
    server: labels?.[SERVICE_LABELS.server] ?? '',
    environment: labels?.[SERVICE_LABELS.environment] ?? '',
    deployment: labels?.[SERVICE_LABELS.deployment] ?? '',
  };
}

/** A HEALTHCHECK with the image's own node: exit 0 when GET /health answers 2xx. */
export function healthCommand(contract: Pick<ImageContract, 'port' | 'healthPath'>, timeoutMs: number): string[] {
  const script =
    `require('http').get({host:'127.0.0.1',port:${contract.port},path:'${contract.healthPath}',timeout:${timeoutMs}},` +
    `r=>process.exit(r.statusCode>=200&&r.statusCode<300?0:1)).on('error',()=>process.exit(1)).on('timeout',()=>process.exit(1))`;
  return ['CMD', 'node', '-e', script];
}

export function serviceSpec(
  spec: WorkloadSpec,
  contract: ImageContract,
  limits: ServiceLimits,
  settings: SwarmSettings,
  /** the secret with the deployment's values (contract made with envFile: SWARM_ENV_FILE) */
  envSecret?: EnvSecret,
): Record<string, unknown> & { Name: string; Labels: Record<string, string> } {
  const memoryBytes =
    spec.resources?.memoryMb === undefined ? limits.memoryBytes : Math.round(spec.resources.memoryMb * 1024 * 1024);
  const cpus = spec.resources?.cpus ?? limits.cpus;
  const update = {
    Parallelism: 1,
    Delay: 0,
    Order: 'start-first',
    FailureAction: 'rollback',
    Monitor: settings.monitorMs * MS,
    MaxFailureRatio: 0,
  };
  return {
    Name: serviceName(spec.labels),
    Labels: serviceLabels(spec.labels),
    TaskTemplate: {
      ContainerSpec: containerSpec(spec, contract, limits, settings, envSecret),
      Resources: { Limits: { NanoCPUs: Math.round(cpus * 1e9), MemoryBytes: memoryBytes, Pids: limits.pids } },
      RestartPolicy: { Condition: 'any', Delay: settings.restartDelayMs * MS, MaxAttempts: 0 },
      Placement: { Preferences: [{ Spread: { SpreadDescriptor: settings.spread } }] },
      LogDriver: { Name: 'json-file', Options: { 'max-size': '10m', 'max-file': '2' } },
    },
    Mode: { Replicated: { Replicas: spec.replicas } },
    UpdateConfig: update,
    RollbackConfig: { ...update, FailureAction: 'pause' },
    EndpointSpec: {
      Mode: 'vip',
      Ports: [{ Protocol: 'tcp', TargetPort: contract.port, PublishedPort: 0, PublishMode: 'host' }],
    },
  };
}

/** A task's container: hardened as the Docker runner's, health-checked, values from the secret. */
function containerSpec(
  spec: WorkloadSpec,
  contract: ImageContract,
  limits: ServiceLimits,
  settings: SwarmSettings,
  envSecret: EnvSecret | undefined,
): Record<string, unknown> {
  const healthTimeoutMs = settings.healthTimeoutMs;
  const tasks =
    spec.tasks !== undefined
      ? taskVolumeMount(spec.labels.engine, spec.labels.deployment, settings.tasksVolume)
      : undefined;
  const env = tasks === undefined ? contract.env : { ...contract.env, [TASKS_DIR_ENV]: tasksDirIn(tasks.Source) };
  return {
    Image: contract.image,
    Command: contract.command,
    // the deployment's values are in the secret: a service's Env is kept by Swarm in clear
    Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
    ...(envSecret === undefined
      ? {}
      : { Secrets: [secretReference(envSecret, posix.basename(SWARM_ENV_FILE), contract.user)] }),
    User: `${contract.user.uid}:${contract.user.gid}`,
    Dir: contract.bundleDir,
    // the deployment in the task's spec: every deployment's update changes the tasks, so Swarm rolls
    Labels: {
      [SERVICE_LABELS.task]: spec.labels.deployment,
      [LABELS.bundle]: contract.digest.slice(0, BUNDLE_LABEL_LENGTH),
    },
    ReadOnly: true,
    Mounts: [
      { Type: 'tmpfs', Target: contract.scratchDir, TmpfsOptions: { SizeBytes: limits.tmpBytes, Mode: 0o1777 } },
      ...(tasks === undefined ? [] : [tasks]),
    ],
    Privileges: { NoNewPrivileges: true },
    CapabilityDrop: ['ALL'],
    Init: true,
    StopSignal: 'SIGTERM',
    // the runtime drains for up to drainSeconds on SIGTERM
    StopGracePeriod: (contract.drainSeconds + 5) * 1000 * MS,
    Healthcheck: {
      Test: healthCommand(contract, healthTimeoutMs),
      Interval: settings.healthIntervalMs * MS,
      Timeout: healthTimeoutMs * MS,
      Retries: settings.healthRetries,
      StartPeriod: settings.healthStartMs * MS,
    },
  };
}
