/**
 * What the kubernetes runner decides without a cluster: its settings, the workload's name, labels
 * and objects (valid against the Kubernetes schemas, the export's objects plus the engine's labels),
 * the endpoints it gives the gateway, the seam's rollout phase, and objects read back for a rollback.
 */
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  endpointsOf,
  engineLabel,
  kubernetesSettings,
  reapplicable,
  rolloutPhase,
  workloadManifests,
  workloadName,
  workloadSelector,
  type KubernetesSettings,
  type PodEndpointInput,
} from '../../../../src/engine/runners/kubernetes/plan.js';
import { kubernetesManifests, type KubernetesObject } from '../../../../src/packaging/kubernetes-manifests.js';
import type { WorkloadSpec } from '../../../../src/engine/runners/orchestrator.js';
import { APPLIED_KINDS } from '../../../../src/engine/runners/kubernetes/cluster.js';
import { TASKS_DIR_ENV } from '../../../../src/runtime/constants.js';

const DIGEST = 'd'.repeat(64);
const HOME = '/home/ci/.local/state/mcpctl';
const SETTINGS: KubernetesSettings = {
  address: 'port-forward',
  progressDeadlineSeconds: 120,
  registry: 'registry.example.com/team',
};
const MODELS = { Secret, PersistentVolumeClaim, Service, Deployment, PodDisruptionBudget, Ingress } as Record<
  string,
  new (o: unknown) => { validate(): void }
>;

function spec(overrides: Partial<WorkloadSpec> = {}): WorkloadSpec {
  return {
    labels: { engine: HOME, server: 'weather', environment: 'production', deployment: 'deploy_3k9x2m4q1c' },
    bundleDir: `/tmp/bundles/${DIGEST}`,
    env: { API_TOKEN: 'tok' },
    logLevel: 'info',
    replicas: 2,
    ...overrides,
  };
}

describe('kubernetesSettings', () => {
  it('defaults, then the settings file, then the environment', () => {
    expect(kubernetesSettings({}, undefined)).toEqual({
      settings: { address: 'port-forward', progressDeadlineSeconds: DEFAULT_PROGRESS_DEADLINE_SECONDS },
      problems: [],
    });
    const file = {
      namespace: 'mcp',
      registry: 'ghcr.io/acme',
      address: 'pod',
      issuer: 'internal-ca',
      ingress_class: 'nginx',
      progress_deadline_seconds: 300,
    };
    expect(kubernetesSettings({}, file).settings).toEqual({
      namespace: 'mcp',
      registry: 'ghcr.io/acme',
      address: 'pod',
      issuer: 'internal-ca',
      ingressClass: 'nginx',
      progressDeadlineSeconds: 300,
    });
    const env = {
      MCPCTL_KUBERNETES_NAMESPACE: 'other',
      MCPCTL_KUBERNETES_REGISTRY: 'localhost:5000',
      MCPCTL_KUBERNETES_CONTEXT: 'kind-ci',
    };
    expect(kubernetesSettings(env, file).settings).toMatchObject({
      namespace: 'other',
      registry: 'localhost:5000',
      context: 'kind-ci',
      address: 'pod',
    });
  });

  it('says every problem, and what is wrong with it', () => {
    const { problems } = kubernetesSettings(
      { MCPCTL_KUBERNETES_ADDRESS: 'nodeport', MCPCTL_KUBERNETES_PROGRESS_DEADLINE: '5' },
      { namespace: 'Team_A', registry: 'https://ghcr.io/acme', issuer: 3 },
    );
    expect(problems).toEqual([
      '"kubernetes.namespace" in engine-settings.json must be a namespace name (lower case letters, digits and -), not "Team_A"',
      expect.stringMatching(
        /^"kubernetes.registry" in engine-settings.json: "https:\/\/ghcr.io\/acme": .*without a scheme/,
      ),
      'MCPCTL_KUBERNETES_ADDRESS must be one of port-forward, pod, not "nodeport"',
      'MCPCTL_KUBERNETES_PROGRESS_DEADLINE must be a whole number of seconds, at least 10, not "5"',
    ]);
    expect(kubernetesSettings({}, { issuer: ['x'] }).problems).toEqual([
      '"kubernetes.issuer" in engine-settings.json must be a string, not ["x"]',
    ]);
  });
});

describe('the workload', () => {
  it('one name per engine, server and environment; a label that holds no path', () => {
    expect(workloadName(HOME, 'weather', 'production')).toMatch(/^weather-[0-9a-f]{6}-production$/);
    expect(workloadName(HOME, 'weather', 'production')).toBe(workloadName(HOME, 'weather', 'production'));
    expect(workloadName('/other/home', 'weather', 'production')).not.toBe(workloadName(HOME, 'weather', 'production'));
    expect(workloadName(HOME, 'weather', 'staging')).not.toBe(workloadName(HOME, 'weather', 'production'));
    expect(engineLabel(HOME)).toMatch(/^e-[0-9a-f]{16}$/);
    expect(workloadSelector(HOME, 'n')).toEqual({
      'mcpctl/engine': engineLabel(HOME),
      'app.kubernetes.io/instance': 'n',
    });
  });

  it('the objects are the export’s, labelled for the engine, with a fixed count (the engine scales) and each valid', () => {
    const plan = workloadManifests({
      spec: spec({ domain: 'mcp.example.com' }),
      digest: DIGEST,
      version: '1.0.0',
      namespace: 'mcp',
      settings: SETTINGS,
    });
    expect(plan.objects.map((o) => o.kind)).toEqual([
      'Secret',
      'Service',
      'Deployment',
      'PodDisruptionBudget',
      'Ingress',
    ]);
    for (const object of plan.objects) {
      new MODELS[object.kind]!(object).validate();
      expect(object.metadata).toMatchObject({
        name: expect.stringMatching(/^weather-[0-9a-f]{6}-production/) as unknown,
        namespace: 'mcp',
        labels: {
          'mcpctl/engine': engineLabel(HOME),
          'mcpctl/deployment': 'deploy_3k9x2m4q1c',
          'mcpctl/server': 'weather',
          'mcpctl/environment': 'production',
        },
        annotations: { 'mcpctl/engine-home': HOME, 'mcpctl/server-name': 'weather' },
      });
    }
    const deployment = plan.objects.find((o) => o.kind === 'Deployment') as Extract<
      KubernetesObject,
      { kind: 'Deployment' }
    >;
    expect(deployment.spec!.replicas).toBe(2);
    expect(deployment.spec!.progressDeadlineSeconds).toBe(120);
    expect(deployment.spec!.template.spec!.containers[0]!.image).toBe(
      `registry.example.com/team/mcpctl-server:${DIGEST}`,
    );
    expect(deployment.spec!.template.spec!.containers[0]!.args).toBeUndefined();
    expect(deployment.spec!.template.spec!.containers[0]!.ports!.map((p) => p.name)).toEqual(['http']);
    // the same objects the export writes, but for the engine's name and labels
    const exported = kubernetesManifests(
      { name: 'weather', version: '1.0.0', digest: DIGEST },
      {
        environment: 'production',
        namespace: 'mcp',
        domain: 'mcp.example.com',
        scaling: { min_instances: 2, max_instances: 2 },
        envValues: { API_TOKEN: 'tok' },
        registry: 'registry.example.com/team',
        // the engine reaches the pods from outside the cluster: its workloads have no NetworkPolicy,
        // and its gateway counts their requests: no metrics port of their own
        networkPolicy: false,
        metrics: false,
      },
    );
    const strip = (objects: KubernetesObject[]) =>
      JSON.parse(
        JSON.stringify(objects)
          .replaceAll(plan.name, 'NAME')
          .replace(/,?"mcpctl\/(engine|deployment|engine-home)":"[^"]*"/g, '')
          .replace(/,"progressDeadlineSeconds":120/g, ''),
      ) as unknown;
    expect(strip(plan.objects)).toEqual(JSON.parse(JSON.stringify(exported.objects).replaceAll(exported.name, 'NAME')));
  });

  it('the deployment’s resources, log level, issuer and ingress class reach the objects', () => {
    const plan = workloadManifests({
      spec: spec({ resources: { memoryMb: 512, cpus: 1 }, logLevel: 'debug', domain: 'a.example.com' }),
      digest: DIGEST,
      namespace: 'default',
      settings: { ...SETTINGS, issuer: 'internal-ca', ingressClass: 'nginx' },
    });
    const deployment = plan.objects.find((o) => o.kind === 'Deployment') as Extract<
      KubernetesObject,
      { kind: 'Deployment' }
    >;
    const container = deployment.spec!.template.spec!.containers[0]!;
    expect(container.resources).toEqual({
      requests: { cpu: '1000m', memory: '512Mi' },
      limits: { cpu: '1000m', memory: '512Mi' },
    });
    expect(container.command![container.command!.indexOf('--log-level') + 1]).toBe('debug');
    const ingress = plan.objects.find((o) => o.kind === 'Ingress') as Extract<KubernetesObject, { kind: 'Ingress' }>;
    expect(ingress.metadata!.annotations!['cert-manager.io/cluster-issuer']).toBe('internal-ca');
    expect(ingress.spec!.ingressClassName).toBe('nginx');
    // without a domain the issuer of the settings is not a problem: there is no Ingress
    const none = workloadManifests({
      spec: spec(),
      digest: DIGEST,
      namespace: 'default',
      settings: { ...SETTINGS, issuer: 'internal-ca' },
    });
    expect(none.objects.map((o) => o.kind)).not.toContain('Ingress');
  });

  it('development: one replica, no disruption budget and no spread', () => {
    const plan = workloadManifests({
      spec: spec({ labels: { ...spec().labels, environment: 'development' }, replicas: 1 }),
      digest: DIGEST,
      namespace: 'default',
      settings: SETTINGS,
    });
    expect(plan.objects.map((o) => o.kind)).toEqual(['Secret', 'Service', 'Deployment']);
  });
});

describe('the tasks’ state of a workload', () => {
  const kinds = (objects: KubernetesObject[]) => objects.map((o) => o.kind);
  const claimOf = (objects: KubernetesObject[]) =>
    objects.find(
      (o): o is Extract<KubernetesObject, { kind: 'PersistentVolumeClaim' }> => o.kind === 'PersistentVolumeClaim',
    );

  it('the setting: MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS over kubernetes.tasks_storage_class; a bad name is a problem', () => {
    expect(kubernetesSettings({}, { tasks_storage_class: 'nfs-client' }).settings.tasksStorageClass).toBe('nfs-client');
    expect(
      kubernetesSettings({ MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS: 'cephfs' }, { tasks_storage_class: 'nfs-client' })
        .settings.tasksStorageClass,
    ).toBe('cephfs');
    expect(kubernetesSettings({}, undefined).settings).not.toHaveProperty('tasksStorageClass');
    expect(kubernetesSettings({ MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS: 'NFS/x' }, undefined).problems).toEqual([
      expect.stringMatching(/^MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS must be the name of a StorageClass/),
    ]);
  });

  it('with the class: a ReadWriteMany claim, labelled for the engine (applied and removed with the rest), mounted', () => {
    const plan = workloadManifests({
      spec: spec({ tasks: { maxReplicas: 4 } }),
      digest: DIGEST,
      namespace: 'mcp',
      settings: { ...SETTINGS, tasksStorageClass: 'nfs-client' },
    });
    expect(kinds(plan.objects)).toEqual([
      'Secret',
      'PersistentVolumeClaim',
      'Service',
      'Deployment',
      'PodDisruptionBudget',
    ]);
    const claim = claimOf(plan.objects)!;
    new PersistentVolumeClaim(claim).validate();
    expect(claim.metadata).toMatchObject({
      name: expect.stringMatching(new RegExp(`^${plan.name}-tasks-[0-9a-f]{6}$`)) as unknown,
      labels: workloadSelector(HOME, plan.name),
      annotations: { 'mcpctl/engine-home': HOME },
    });
    expect(claim.spec).toMatchObject({ accessModes: ['ReadWriteMany'], storageClassName: 'nfs-client' });
    const deployment = plan.objects.find((o) => o.kind === 'Deployment') as Extract<
      KubernetesObject,
      { kind: 'Deployment' }
    >;
    const pod = deployment.spec!.template.spec!;
    expect(pod.volumes).toContainEqual({ name: 'tasks', persistentVolumeClaim: { claimName: claim.metadata!.name } });
    expect(pod.containers[0]!.env).toContainEqual({ name: TASKS_DIR_ENV, value: expect.any(String) as unknown });
    expect(plan.tasks?.notice).toBeUndefined();
    // what the runner applies (and removes) has the claim, before the pods that mount it
    const applied = APPLIED_KINDS.map((k) => k.kind) as string[];
    expect(applied).toContain('PersistentVolumeClaim');
    expect(applied.indexOf('PersistentVolumeClaim')).toBeLessThan(applied.indexOf('Deployment'));
  });

  it('without the class: one replica at most gets a ReadWriteOnce claim; a deployment the engine may scale, none and a notice', () => {
    const development = workloadManifests({
      spec: spec({ labels: { ...spec().labels, environment: 'development' }, replicas: 1, tasks: { maxReplicas: 1 } }),
      digest: DIGEST,
      namespace: 'default',
      settings: SETTINGS,
    });
    expect(claimOf(development.objects)?.spec?.accessModes).toEqual(['ReadWriteOnce']);
    expect(development.tasks?.notice).toMatch(/default storage class/);
    // staging at 1 of up to 2: the count applied is 1, but a second pod may come
    const staging = workloadManifests({
      spec: spec({ labels: { ...spec().labels, environment: 'staging' }, replicas: 1, tasks: { maxReplicas: 2 } }),
      digest: DIGEST,
      namespace: 'default',
      settings: SETTINGS,
    });
    expect(kinds(staging.objects)).toEqual(['Secret', 'Service', 'Deployment']);
    expect(staging.tasks?.notice).toMatch(/each pod keeps its own/);
    // no task tools: no claim, no notice
    const plain = workloadManifests({ spec: spec(), digest: DIGEST, namespace: 'default', settings: SETTINGS });
    expect(claimOf(plain.objects)).toBeUndefined();
    expect(plain.tasks).toBeUndefined();
  });
});

describe('endpointsOf', () => {
  const pod = (name: string, extra: Partial<PodEndpointInput> = {}): PodEndpointInput => ({
    name,
    metadata: { name, labels: { 'mcpctl/deployment': 'deploy_a' } },
    status: { phase: 'Running', podIP: `10.0.0.${name.length}`, containerStatuses: [{ state: {} }] },
    ...extra,
  });

  it('port-forward: a loopback port per pod that has one; pod: the pod IP and the container port', () => {
    const pods = [pod('b'), pod('aa'), pod('ccc')];
    const ports: Record<string, number> = { aa: 41001, b: 41002 };
    expect(endpointsOf(pods, 'port-forward', 8080, (name) => ports[name])).toEqual([
      { id: 'aa', host: '127.0.0.1', port: 41001, deployment: 'deploy_a', running: true, state: 'running' },
      { id: 'b', host: '127.0.0.1', port: 41002, deployment: 'deploy_a', running: true, state: 'running' },
    ]);
    expect(endpointsOf(pods, 'pod', 8080, () => undefined).map((e) => `${e.id}@${e.host}:${e.port}`)).toEqual([
      'aa@10.0.0.2:8080',
      'b@10.0.0.1:8080',
      'ccc@10.0.0.3:8080',
    ]);
  });

  it('a pod that is pending, waiting, stopped or being deleted is not running, and says why', () => {
    const pods = [
      pod('pending', { status: { phase: 'Pending', podIP: '10.0.0.9' } }),
      pod('pull', {
        status: {
          phase: 'Pending',
          podIP: '10.0.0.8',
          containerStatuses: [{ state: { waiting: { reason: 'ImagePullBackOff' } } }],
        },
      }),
      pod('crash', {
        status: {
          phase: 'Running',
          podIP: '10.0.0.7',
          containerStatuses: [{ state: { waiting: { reason: 'CrashLoopBackOff' } } }],
        },
      }),
      pod('going', { metadata: { name: 'going', deletionTimestamp: 'now', labels: {} } }),
    ];
    expect(endpointsOf(pods, 'pod', 8080, () => undefined).map((e) => [e.id, e.running, e.state])).toEqual([
      ['crash', false, 'CrashLoopBackOff'],
      ['going', false, 'stopping'],
      ['pending', false, 'pending'],
      ['pull', false, 'ImagePullBackOff'],
    ]);
    // a pod with no IP yet is no endpoint at all
    expect(endpointsOf([pod('x', { status: { phase: 'Pending' } })], 'pod', 8080, () => undefined)).toEqual([]);
  });
});

describe('rolloutPhase', () => {
  const replicas = { desired: 2, updated: 2, ready: 2, available: 2 };
  it('maps the rollout to the seam’s phases, and a rollback the runner started to rolling_back then rolled_back', () => {
    expect(
      rolloutPhase({ state: 'deploying', reason: '1 of 2 instances available', replicas }, { started: false }),
    ).toEqual({
      phase: 'progressing',
      message: '1 of 2 instances available',
    });
    expect(rolloutPhase({ state: 'deployed', reason: '2 of 2', replicas }, { started: false }).phase).toBe('completed');
    expect(rolloutPhase({ state: 'failed', reason: 'p: InvalidImageName', replicas }, { started: false })).toEqual({
      phase: 'failed',
      message: 'p: InvalidImageName',
    });
    const rollback = { started: true as const, reason: 'the rollout made no progress before its deadline' };
    expect(
      rolloutPhase({ state: 'deploying', reason: '1 old instance is still stopping', replicas }, rollback),
    ).toEqual({
      phase: 'rolling_back',
      message: 'the rollout made no progress before its deadline; going back: 1 old instance is still stopping',
    });
    expect(rolloutPhase({ state: 'deployed', reason: '2 of 2', replicas }, rollback)).toEqual({
      phase: 'rolled_back',
      message:
        "the update failed and the previous deployment's objects were applied again: the rollout made no progress before its deadline",
    });
  });
});

describe('reapplicable', () => {
  it('keeps what the runner writes and drops what the API server adds', () => {
    const read = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'w',
        namespace: 'mcp',
        uid: 'u',
        resourceVersion: '12',
        generation: 3,
        creationTimestamp: 'then',
        managedFields: [{ manager: 'mcpctl' }],
        labels: { a: 'b' },
        annotations: { 'deployment.kubernetes.io/revision': '3', 'mcpctl/bundle-digest': DIGEST },
      },
      spec: { replicas: 2 },
      status: { replicas: 2 },
    };
    expect(reapplicable(read)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'w', namespace: 'mcp', labels: { a: 'b' }, annotations: { 'mcpctl/bundle-digest': DIGEST } },
      spec: { replicas: 2 },
    });
  });

  it('a claim: without the volume it was bound to and the binding annotations (made again, it binds anew)', () => {
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'w-tasks-abcdef',
        labels: { a: 'b' },
        annotations: {
          'pv.kubernetes.io/bind-completed': 'yes',
          'pv.kubernetes.io/bound-by-controller': 'yes',
          'volume.kubernetes.io/storage-provisioner': 'nfs',
          'volume.beta.kubernetes.io/storage-provisioner': 'nfs',
          'volume.kubernetes.io/selected-node': 'n1',
          'mcpctl/engine-home': HOME,
        },
        finalizers: ['kubernetes.io/pvc-protection'],
      },
      spec: {
        accessModes: ['ReadWriteMany'],
        storageClassName: 'nfs',
        volumeMode: 'Filesystem',
        resources: { requests: { storage: '1Gi' } },
        volumeName: 'pvc-123',
      },
      status: { phase: 'Bound' },
    };
    expect(reapplicable(claim)).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'w-tasks-abcdef', labels: { a: 'b' }, annotations: { 'mcpctl/engine-home': HOME } },
      spec: {
        accessModes: ['ReadWriteMany'],
        storageClassName: 'nfs',
        volumeMode: 'Filesystem',
        resources: { requests: { storage: '1Gi' } },
      },
    });
  });
});
