import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SWARM_SETTINGS,
  SERVICE_LABELS,
  serviceName,
  serviceSpec,
  workloadLabelsOf,
  type SwarmSettings,
} from '../../../../src/engine/runners/docker/service-spec.js';
import { taskVolumeName } from '../../../../src/engine/runners/docker/task-volume.js';
import { TASKS_DIR_ENV } from '../../../../src/runtime/constants.js';
import { rolloutOutcome } from '../../../../src/engine/runners/orchestrator.js';
import { imageContract, SWARM_ENV_FILE, TASKS_MOUNT } from '../../../../src/packaging/image.js';

const DIGEST = 'a'.repeat(64);
const labels = {
  engine: '/home/me/.mcpctl',
  server: 'Calculator_Pro',
  environment: 'production',
  deployment: 'deploy_abc',
};
const limits = { memoryBytes: 256 * 1024 * 1024, cpus: 0.5, pids: 256, tmpBytes: 64 * 1024 * 1024 };

describe('the Swarm service of a deployment', () => {
  it('is named per engine, server and environment, and carries the labels a restarted engine finds it by', () => {
    const name = serviceName(labels);
    expect(name).toMatch(/^mcpctl-calculator-pro-prod-[0-9a-f]{8}$/);
    expect(serviceName({ ...labels, engine: '/other' })).not.toBe(name);
    expect(serviceName({ ...labels, server: 'Calculator_Pro' })).toBe(name);
    const spec = serviceSpec(
      { labels, bundleDir: '/b', env: { A: '1' }, logLevel: 'info', replicas: 2 },
      imageContract(DIGEST),
      limits,
      DEFAULT_SWARM_SETTINGS,
    );
    expect(workloadLabelsOf(spec.Labels)).toEqual(labels);
  });

  it('is hardened, health-gated, rolls start-first with automatic rollback, spreads over regions and publishes in host mode', () => {
    const spec = serviceSpec(
      {
        labels,
        bundleDir: '/b',
        env: { A: '1' },
        logLevel: 'info',
        replicas: 3,
        resources: { memoryMb: 300, cpus: 0.25 },
      },
      imageContract(DIGEST, { envFile: SWARM_ENV_FILE }),
      limits,
      { ...DEFAULT_SWARM_SETTINGS, monitorMs: 3000 },
      { id: 'sec123', name: 'mcpctl-x-env-1' },
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test reads the Engine API spec loosely
    ) as Record<string, any>;
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 3 } });
    expect(spec.UpdateConfig).toMatchObject({
      Parallelism: 1,
      Order: 'start-first',
      FailureAction: 'rollback',
      Monitor: 3e9,
    });
    expect(spec.RollbackConfig).toMatchObject({ Parallelism: 1, Order: 'start-first' });
    const container = spec.TaskTemplate.ContainerSpec;
    expect(container).toMatchObject({
      User: '10001:10001',
      ReadOnly: true,
      Privileges: { NoNewPrivileges: true },
      CapabilityDrop: ['ALL'],
      Init: true,
    });
    // the values come as a secret the runtime reads, not as Env (ATTACK: `docker service inspect` and Swarm's log)
    expect(container.Env).not.toContain('A=1');
    expect(JSON.stringify(container.Env)).not.toContain('A=');
    expect(container.Secrets).toEqual([
      {
        SecretID: 'sec123',
        SecretName: 'mcpctl-x-env-1',
        File: { Name: 'mcpctl-env', UID: '10001', GID: '10001', Mode: 0o400 },
      },
    ]);
    expect(container.Command.slice(-3)).toEqual(['--env-is-secret', '--values-file', SWARM_ENV_FILE]);
    expect(container.Labels[SERVICE_LABELS.task]).toBe('deploy_abc');
    expect(container.Mounts).toEqual([expect.objectContaining({ Type: 'tmpfs', Target: '/tmp' })]);
    expect(container.Healthcheck.Test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(container.Healthcheck.Test[3]).toContain("path:'/health'");
    expect(spec.TaskTemplate.Resources.Limits).toEqual({
      NanoCPUs: 250_000_000,
      MemoryBytes: 300 * 1024 * 1024,
      Pids: 256,
    });
    expect(spec.TaskTemplate.RestartPolicy.Condition).toBe('any');
    expect(spec.TaskTemplate.Placement.Preferences).toEqual([{ Spread: { SpreadDescriptor: 'node.labels.region' } }]);
    expect(spec.EndpointSpec.Ports).toEqual([
      { Protocol: 'tcp', TargetPort: 8080, PublishedPort: 0, PublishMode: 'host' },
    ]);
    expect(JSON.stringify(container.Env)).not.toContain(TASKS_DIR_ENV);
  });

  it('with task tools, mounts the deployment’s task volume in every task and names its folder in MCPCTL_TASKS_DIR', () => {
    const volume = taskVolumeName(labels.engine, labels.deployment);
    const containerOf = (settings: SwarmSettings) => {
      const spec = serviceSpec(
        { labels, bundleDir: '/b', env: {}, logLevel: 'info', replicas: 2, tasks: { maxReplicas: 2 } },
        imageContract(DIGEST),
        limits,
        settings,
      ) as unknown as { TaskTemplate: { ContainerSpec: { Mounts: unknown[]; Env: string[] } } };
      return spec.TaskTemplate.ContainerSpec;
    };
    const container = containerOf(DEFAULT_SWARM_SETTINGS);
    expect(container.Mounts).toContainEqual({
      Type: 'volume',
      Source: volume,
      Target: TASKS_MOUNT,
      VolumeOptions: { Labels: { 'mcpctl/engine': labels.engine, 'mcpctl/deployment': labels.deployment } },
    });
    expect(container.Env).toContain(`${TASKS_DIR_ENV}=${TASKS_MOUNT}/${volume}`);
    // another deployment of the same service (a redeploy) has a volume of its own
    expect(taskVolumeName(labels.engine, 'deploy_def')).not.toBe(volume);

    const nfs = { type: 'nfs', o: 'addr=10.0.0.5,rw', device: ':/exports/mcpctl' };
    const shared = containerOf({ ...DEFAULT_SWARM_SETTINGS, tasksVolume: { options: nfs } });
    expect(shared.Mounts).toContainEqual(
      expect.objectContaining({
        Source: volume,
        VolumeOptions: expect.objectContaining({ DriverConfig: { Name: 'local', Options: nfs } }),
      }),
    );
  });
});

describe('a rollout as a deployment state', () => {
  it('is deployed once completed, failed with the reason once rolled back, failed or paused, and still deploying otherwise', () => {
    expect(rolloutOutcome({ phase: 'progressing' })).toEqual({ done: false });
    expect(rolloutOutcome({ phase: 'rolling_back', message: 'x' })).toEqual({ done: false });
    expect(rolloutOutcome({ phase: 'completed' })).toEqual({ done: true, deployed: true });
    expect(rolloutOutcome({ phase: 'rolled_back', message: 'Swarm rolled the update back: task t1 exited' })).toEqual({
      done: true,
      deployed: false,
      reason: 'Swarm rolled the update back: task t1 exited',
    });
    expect(rolloutOutcome({ phase: 'paused', message: 'Swarm paused the update' })).toMatchObject({
      done: true,
      deployed: false,
      reason: expect.stringContaining('paused'),
    });
    expect(rolloutOutcome({ phase: 'failed' })).toMatchObject({ done: true, deployed: false });
  });
});
