/**
 * One deployment's handle on its Swarm service (swarm-orchestrator.ts): reads the service and its
 * tasks every `pollMs`, maps Swarm's UpdateStatus (updating, completed, rollback_started,
 * rollback_completed, paused) to the rollout, reports the tasks that run as endpoints, follows the
 * logs of its own tasks, scales and removes the service.
 */
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { DockerApiError, readLogLines, type DockerClient } from './engine-api.js';
import { CONTAINER_PORT } from '../../../packaging/image.js';
import { SERVICE_LABELS } from './service-spec.js';
import { removeEnvSecrets } from './swarm-secrets.js';
import type { Endpoint, RolloutStatus, Workload, WorkloadHooks, WorkloadLabels } from '../orchestrator.js';
import { probeHealth } from '../process/process-runner.js';

export interface ServiceInfo {
  ID: string;
  Version: { Index: number };
  Spec: { Name: string; Labels?: Record<string, string>; Mode?: { Replicated?: { Replicas?: number } } } & Record<
    string,
    unknown
  >;
  UpdateStatus?: { State?: string; StartedAt?: string; CompletedAt?: string; Message?: string };
}

interface TaskInfo {
  ID: string;
  NodeID?: string;
  DesiredState: string;
  CreatedAt?: string;
  Status: {
    State: string;
    Err?: string;
    Message?: string;
    PortStatus?: { Ports?: { TargetPort?: number; PublishedPort?: number }[] };
    ContainerStatus?: { ContainerID?: string; ExitCode?: number };
  };
  Spec?: { ContainerSpec?: { Labels?: Record<string, string> } };
}

export interface WorkloadOptions {
  /** created: a first deploy; updated: a rollout of an existing service; adopted: taken over as it runs */
  mode: 'created' | 'updated' | 'adopted';
  replicas: number;
  /** updated: the UpdateStatus.StartedAt before this update (a status with it is an older update's) */
  before?: string;
  pollMs: number;
  createTimeoutMs: number;
}

/** Failed tasks of a first deploy before it counts as failed (Swarm restarts them without end). */
const CREATE_FAILURES = 3;
const FAILED_STATES = new Set(['failed', 'rejected']);

export class SwarmWorkload implements Workload {
  private service: ServiceInfo | undefined;
  private tasks: TaskInfo[] = [];
  private readonly nodes = new Map<string, string>();
  private status: RolloutStatus = { phase: 'progressing' };
  private released = false;
  private readonly started = Date.now();
  private readonly logs = new Map<string, Readable>();
  private readonly listeners: (() => void)[] = [];
  private shown = '';
  /** Swarm's message when its rollback started: it names the task that made it roll back */
  private rollbackCause: string | undefined;

  constructor(
    private readonly docker: DockerClient,
    readonly id: string,
    readonly labels: WorkloadLabels,
    private readonly hooks: WorkloadHooks,
    private readonly options: WorkloadOptions,
  ) {
    if (options.mode === 'adopted') this.status = { phase: 'completed' };
  }

  onRelease(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Reads the service and its tasks until released. */
  watch(): void {
    void (async () => {
      while (!this.released) {
        await this.poll().catch(() => undefined);
        await sleep(this.options.pollMs, undefined, { ref: false });
      }
    })();
  }

  rollout(): RolloutStatus {
    return this.status;
  }

  endpoints(): Endpoint[] {
    const endpoints: Endpoint[] = [];
    for (const task of this.tasks) {
      if (task.DesiredState !== 'running') continue;
      const port =
        task.Status.PortStatus?.Ports?.find((item) => item.TargetPort === CONTAINER_PORT)?.PublishedPort ?? 0;
      endpoints.push({
        id: task.ID.slice(0, 12),
        host: this.nodes.get(task.NodeID ?? '') ?? '127.0.0.1',
        port,
        deployment: task.Spec?.ContainerSpec?.Labels?.[SERVICE_LABELS.task] ?? '',
        running: task.Status.State === 'running' && port > 0,
        state: task.Status.State,
      });
    }
    return endpoints;
  }

  health(endpoint: Endpoint, timeoutMs: number): Promise<boolean> {
    return probeHealth(`http://${endpoint.host}:${endpoint.port}/health`, timeoutMs);
  }

  async scale(replicas: number): Promise<void> {
    const service = await this.docker.json<ServiceInfo>('GET', `/services/${this.id}`);
    const spec = { ...service.Spec, Mode: { Replicated: { Replicas: replicas } } };
    await this.docker.json('POST', `/services/${this.id}/update`, {
      query: { version: service.Version.Index },
      json: spec,
    });
    this.options.replicas = replicas;
  }

  async remove(graceMs: number): Promise<void> {
    this.release();
    let service: ServiceInfo;
    try {
      service = await this.docker.json<ServiceInfo>('GET', `/services/${this.id}`);
    } catch (error) {
      if (error instanceof DockerApiError && error.status === 404) return;
      throw error;
    }
    // a newer deployment took it over, or Swarm rolled back to an older one: theirs now
    if (service.Spec.Labels?.[SERVICE_LABELS.deployment] !== this.labels.deployment) return;
    await SwarmWorkload.removeService(this.docker, this.id, graceMs);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const stream of this.logs.values()) stream.destroy();
    this.logs.clear();
    for (const listener of this.listeners) listener();
  }

  /** Removes a service and its secrets, and resolves once its tasks' containers are gone (bounded). */
  static async removeService(docker: DockerClient, id: string, graceMs: number): Promise<void> {
    let name: string | undefined;
    try {
      name = (await docker.json<ServiceInfo>('GET', `/services/${id}`)).Spec.Name;
      await docker.json('DELETE', `/services/${id}`);
    } catch (error) {
      if (!(error instanceof DockerApiError && error.status === 404)) throw error;
    }
    // removable once no service refers to them (running tasks keep the files they mounted)
    if (name !== undefined) await removeEnvSecrets(docker, name).catch(() => undefined);
    await SwarmWorkload.awaitTasksGone(docker, id, graceMs);
  }

  private static async awaitTasksGone(docker: DockerClient, id: string, graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs + 30_000;
    const filters = JSON.stringify({ label: [`com.docker.swarm.service.id=${id}`] });
    while (Date.now() < deadline) {
      const left = await docker.json<unknown[]>('GET', '/containers/json', { query: { all: 1, filters } });
      if (left.length === 0) return;
      await sleep(250, undefined, { ref: false });
    }
  }

  private async poll(): Promise<void> {
    try {
      this.service = await this.docker.json<ServiceInfo>('GET', `/services/${this.id}`);
    } catch (error) {
      if (!(error instanceof DockerApiError && error.status === 404)) throw error;
      this.service = undefined;
    }
    this.tasks =
      this.service === undefined
        ? []
        : await this.docker.json<TaskInfo[]>('GET', '/tasks', {
            query: { filters: JSON.stringify({ service: [this.id] }) },
          });
    if (this.released) return;
    for (const task of this.tasks)
      if (task.NodeID !== undefined && !this.nodes.has(task.NodeID)) await this.learnNode(task.NodeID);
    if (!isOver(this.status)) this.status = await this.phase();
    for (const task of this.tasks) this.follow(task);
    const shown = JSON.stringify([this.status, this.endpoints()]);
    if (shown !== this.shown) {
      this.shown = shown;
      this.hooks.onChange();
    }
  }

  private async learnNode(nodeId: string): Promise<void> {
    const node = await this.docker
      .json<{ Status?: { Addr?: string } }>('GET', `/nodes/${nodeId}`)
      .catch(() => undefined);
    const address = node?.Status?.Addr;
    // a single node reports 0.0.0.0 or nothing when it advertises no address: itself, on loopback
    this.nodes.set(nodeId, address === undefined || address === '' || address === '0.0.0.0' ? '127.0.0.1' : address);
  }

  private async phase(): Promise<RolloutStatus> {
    const service = this.service;
    if (service === undefined) return { phase: 'failed', message: 'its Swarm service was removed' };
    const mine = this.tasks.filter(
      (task) => task.Spec?.ContainerSpec?.Labels?.[SERVICE_LABELS.task] === this.labels.deployment,
    );
    if (this.options.mode !== 'updated') {
      const running = mine.filter((task) => task.DesiredState === 'running' && task.Status.State === 'running').length;
      if (running >= this.options.replicas) return { phase: 'completed' };
      const failed = mine.filter((task) => FAILED_STATES.has(task.Status.State));
      if (failed.length >= CREATE_FAILURES)
        return { phase: 'failed', message: `its Swarm tasks keep failing: ${await this.describeTask(failed.at(-1)!)}` };
      if (Date.now() - this.started > this.options.createTimeoutMs) {
        return {
          phase: 'failed',
          message: `its Swarm tasks did not all run within ${Math.round(this.options.createTimeoutMs / 1000)} s`,
        };
      }
      return { phase: 'progressing' };
    }
    const update = service.UpdateStatus;
    if (update?.State === undefined || update.StartedAt === this.options.before) return { phase: 'progressing' };
    switch (update.State) {
      case 'completed':
        if (service.Spec.Labels?.[SERVICE_LABELS.deployment] === this.labels.deployment) return { phase: 'completed' };
        return {
          phase: 'failed',
          message: `another deployment (${service.Spec.Labels?.[SERVICE_LABELS.deployment] ?? 'unknown'}) took the Swarm service over`,
        };
      case 'rollback_started':
        this.rollbackCause ??= update.Message;
        return { phase: 'rolling_back', message: update.Message ?? '' };
      case 'rollback_completed':
        return {
          phase: 'rolled_back',
          message: `Swarm rolled the update back${await this.whyRolledBack(this.rollbackCause ?? update.Message)}`,
        };
      case 'paused':
      case 'rollback_paused':
        return {
          phase: 'paused',
          message: `Swarm ${update.State === 'paused' ? 'paused the update' : 'paused the rollback'}: ${update.Message ?? ''}`,
        };
      default:
        return { phase: 'progressing' };
    }
  }

  /** Swarm says which task made it roll back; that task's error and last output say why. */
  private async whyRolledBack(message: string | undefined): Promise<string> {
    const id = /task (\w+)/.exec(message ?? '')?.[1];
    // else the newest task of this deployment that did not end well
    const task =
      (id === undefined ? undefined : this.tasks.find((item) => item.ID === id)) ??
      this.tasks
        .filter(
          (item) =>
            item.Spec?.ContainerSpec?.Labels?.[SERVICE_LABELS.task] === this.labels.deployment &&
            (item.Status.Err ?? '') !== '',
        )
        .sort((a, b) => (a.CreatedAt ?? '').localeCompare(b.CreatedAt ?? ''))
        .at(-1);
    if (task === undefined) return message === undefined ? '' : `: ${message}`;
    return `: ${message === undefined ? '' : `${message}; `}${await this.describeTask(task)}`;
  }

  private async describeTask(task: TaskInfo): Promise<string> {
    const what = task.Status.Err ?? task.Status.Message ?? task.Status.State;
    const container = task.Status.ContainerStatus?.ContainerID;
    let output: string[] = [];
    if (container !== undefined && container !== '') {
      try {
        const stream = await this.docker.stream('GET', `/containers/${container}/logs`, {
          query: { stdout: 1, stderr: 1, tail: 5 },
        });
        await readLogLines(stream, (line) => output.push(line));
      } catch {
        output = [];
      }
    }
    const tail = output
      .map((line) => (line.length > 300 ? `${line.slice(0, 300)}…` : line))
      .filter((line) => line.trim() !== '');
    return `task ${task.ID.slice(0, 12)} ${what}${tail.length === 0 ? '' : `; last output: ${tail.join(' | ')}`}`;
  }

  /** Follows the log of a task of this deployment once its container exists. */
  private follow(task: TaskInfo): void {
    const container = task.Status.ContainerStatus?.ContainerID;
    if (container === undefined || container === '' || this.logs.has(container)) return;
    if (
      task.Spec?.ContainerSpec?.Labels?.[SERVICE_LABELS.task] !== this.labels.deployment ||
      task.DesiredState !== 'running'
    )
      return;
    const endpoint = task.ID.slice(0, 12);
    const placeholder = { destroy: () => undefined } as unknown as Readable;
    this.logs.set(container, placeholder);
    void (async () => {
      try {
        const stream = await this.docker.stream('GET', `/containers/${container}/logs`, {
          query: { follow: 1, stdout: 1, stderr: 1 },
          long: true,
        });
        if (this.released) return stream.destroy();
        this.logs.set(container, stream);
        await readLogLines(stream, (line) => this.hooks.onLog(line, endpoint));
      } catch {
        // the container is gone
      }
    })();
  }
}

function isOver(status: RolloutStatus): boolean {
  return (
    status.phase === 'completed' ||
    status.phase === 'rolled_back' ||
    status.phase === 'failed' ||
    status.phase === 'paused'
  );
}
