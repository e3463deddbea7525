/**
 * The Swarm orchestrator: on a Docker host that is a Swarm manager, each production deployment is
 * a service (one per server and environment of an engine; service-spec.ts says what it holds). A
 * redeploy updates the service, Swarm rolls it (start-first, health-gated) and rolls it back by
 * itself when the new tasks fail; this maps Swarm's UpdateStatus to the rollout, reports the tasks
 * that run as endpoints (the node's address and the task's published port), and follows the tasks'
 * logs. Everything is read by polling the service and its tasks (every `pollMs`), which is a couple
 * of cheap calls to the manager. The deployment's values go to the service as a Docker secret.
 */
import { imageContract, SWARM_ENV_FILE } from '../../../packaging/image.js';
import { createEnvSecret, referencedSecrets, removeEnvSecrets } from './swarm-secrets.js';
import { DockerApiError, type DockerClient } from './engine-api.js';
import type { ImageBuilder } from './images.js';
import {
  DEFAULT_SWARM_SETTINGS,
  SERVICE_LABELS,
  serviceName,
  serviceSpec,
  workloadLabelsOf,
  type ServiceLimits,
  type SwarmSettings,
} from './service-spec.js';
import type { FoundWorkload, Orchestrator, WorkloadHooks, WorkloadLabels, WorkloadSpec } from '../orchestrator.js';
import { SwarmWorkload, type ServiceInfo } from './swarm-workload.js';

export interface SwarmOptions {
  docker: DockerClient;
  images: ImageBuilder;
  limits: ServiceLimits;
  settings?: Partial<SwarmSettings>;
  /** the environments it runs (default: production) */
  environments?: string[];
  /** how often the service and its tasks are read */
  pollMs?: number;
  /** a first deploy whose tasks are not all running by then has failed */
  createTimeoutMs?: number;
}

/** Whether the daemon is a Swarm manager (GET /info: Swarm.ControlAvailable). */
export async function isSwarmManager(docker: DockerClient): Promise<boolean> {
  const info = await docker.json<{ Swarm?: { ControlAvailable?: boolean; LocalNodeState?: string } }>('GET', '/info');
  return info.Swarm?.ControlAvailable === true && info.Swarm.LocalNodeState === 'active';
}

export function createSwarmOrchestrator(options: SwarmOptions): Orchestrator {
  const settings = { ...DEFAULT_SWARM_SETTINGS, ...options.settings };
  const environments = new Set(options.environments ?? ['production']);
  const swarm: Swarm = {
    docker: options.docker,
    images: options.images,
    limits: options.limits,
    settings,
    workloads: new Set<SwarmWorkload>(),
    timing: { pollMs: options.pollMs ?? 500, createTimeoutMs: options.createTimeoutMs ?? 180_000 },
  };
  return {
    kind: 'swarm',
    summary: `${[...environments].join(', ')} as Swarm services (spread over ${settings.spread})`,
    handles: (environment) => environments.has(environment),
    prepare: async (bundleDir) => {
      await swarm.images.ensure(bundleDir);
    },
    apply: (spec, hooks) => applyService(swarm, spec, hooks),
    adopt: (labels, hooks) => adoptService(swarm, labels, hooks),
    find: (engine) => findServices(swarm.docker, engine),
    close: async () => {
      for (const workload of [...swarm.workloads]) workload.release();
    },
  };
}

/** What the orchestrator's operations share. */
interface Swarm {
  docker: DockerClient;
  images: ImageBuilder;
  limits: ServiceLimits;
  settings: SwarmSettings;
  /** the workloads it follows, until each is released */
  workloads: Set<SwarmWorkload>;
  timing: { pollMs: number; createTimeoutMs: number };
}

function track(swarm: Swarm, workload: SwarmWorkload): SwarmWorkload {
  swarm.workloads.add(workload);
  workload.onRelease(() => swarm.workloads.delete(workload));
  workload.watch();
  return workload;
}

/** Creates the deployment's service, or updates the one there; its values go in a new secret. */
async function applyService(swarm: Swarm, spec: WorkloadSpec, hooks: WorkloadHooks): Promise<SwarmWorkload> {
  const { docker, timing } = swarm;
  const image = await swarm.images.ensure(spec.bundleDir);
  const contract = imageContract(image.digest, { logLevel: spec.logLevel, envFile: SWARM_ENV_FILE });
  const name = serviceName(spec.labels);
  const existing = await inspect(docker, name);
  if (existing !== undefined && existing.Spec.Labels?.[SERVICE_LABELS.engine] !== spec.labels.engine) {
    throw new Error(
      `a Swarm service named ${name} exists and belongs to another engine; remove it or use another MCPCTL_HOME`,
    );
  }
  const secret = await createEnvSecret(
    docker,
    { engine: spec.labels.engine, service: name, deployment: spec.labels.deployment },
    spec.env,
  );
  const wanted = serviceSpec(spec, contract, swarm.limits, swarm.settings, secret);
  // a service that was not made or updated leaves no secret behind
  const forget = async (error: unknown): Promise<never> => {
    await docker.json('DELETE', `/secrets/${secret.id}`).catch(() => undefined);
    throw error;
  };
  if (existing === undefined) {
    const { ID } = await docker.json<{ ID: string }>('POST', '/services/create', { json: wanted }).catch(forget);
    const options = { mode: 'created' as const, replicas: spec.replicas, ...timing };
    return track(swarm, new SwarmWorkload(docker, ID, spec.labels, hooks, options));
  }
  const before = existing.UpdateStatus?.StartedAt;
  await docker
    .json('POST', `/services/${existing.ID}/update`, { query: { version: existing.Version.Index }, json: wanted })
    .catch(forget);
  // the spec now replaced stays for Swarm's own rollback; older secrets of the service go
  await removeEnvSecrets(docker, name, [secret.id, ...referencedSecrets(existing.Spec)]).catch(() => undefined);
  const options = { mode: 'updated' as const, replicas: spec.replicas, before, ...timing };
  return track(swarm, new SwarmWorkload(docker, existing.ID, spec.labels, hooks, options));
}

/** The service of an engine's deployment, as it runs now; undefined when there is none of its own. */
async function adoptService(
  swarm: Swarm,
  labels: WorkloadLabels,
  hooks: WorkloadHooks,
): Promise<SwarmWorkload | undefined> {
  const existing = await inspect(swarm.docker, serviceName(labels));
  if (existing === undefined) return undefined;
  const found = workloadLabelsOf(existing.Spec.Labels);
  if (found.engine !== labels.engine || found.deployment !== labels.deployment) return undefined;
  const state = existing.UpdateStatus?.State;
  // an update of its own that an engine stop interrupted: follow it to its end
  const mode = state === 'updating' || state === 'rollback_started' ? 'updated' : 'adopted';
  const options = { mode, replicas: existing.Spec.Mode?.Replicated?.Replicas ?? 1, ...swarm.timing } as const;
  return track(swarm, new SwarmWorkload(swarm.docker, existing.ID, labels, hooks, options));
}

async function findServices(docker: DockerClient, engine: string): Promise<FoundWorkload[]> {
  const services = await docker.json<ServiceInfo[]>('GET', '/services', {
    query: { filters: JSON.stringify({ label: [`${SERVICE_LABELS.engine}=${engine}`] }) },
  });
  return services.map((service) => ({
    labels: workloadLabelsOf(service.Spec.Labels),
    remove: (graceMs: number) => SwarmWorkload.removeService(docker, service.ID, graceMs),
  }));
}

async function inspect(docker: DockerClient, name: string): Promise<ServiceInfo | undefined> {
  try {
    return await docker.json<ServiceInfo>('GET', `/services/${encodeURIComponent(name)}`);
  } catch (error) {
    if (error instanceof DockerApiError && error.status === 404) return undefined;
    throw error;
  }
}
