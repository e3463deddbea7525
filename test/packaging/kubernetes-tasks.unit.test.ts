/**
 * Where the pods of a server whose tools run as tasks keep the tasks' state: a ReadWriteMany claim
 * of the class named, a ReadWriteOnce claim of the default class for one instance, or each pod its
 * own (said in a notice) — never a claim that keeps pods Pending for want of a ReadWriteMany class.
 */
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/shared/errors.js';
import { TASKS_DIR_ENV } from '../../src/runtime/constants.js';
import { kubernetesManifests, type KubernetesObject } from '../../src/packaging/kubernetes-manifests.js';
import type { KubernetesExportOptions } from '../../src/packaging/kubernetes-options.js';
import { TASKS_DIR, TASKS_MOUNT, taskClaimName } from '../../src/packaging/kubernetes-tasks.js';
import { toYamlStream } from '../../src/packaging/write-objects.js';

const DIGEST = 'c'.repeat(64);
const SERVER = { name: 'reports', version: '1.0.0', digest: DIGEST };

type Options = Partial<KubernetesExportOptions> & Pick<KubernetesExportOptions, 'environment'>;
const manifests = (options: Options) => kubernetesManifests(SERVER, options);

function claimOf(objects: KubernetesObject[]) {
  return objects.find(
    (o): o is Extract<KubernetesObject, { kind: 'PersistentVolumeClaim' }> => o.kind === 'PersistentVolumeClaim',
  );
}
function podOf(objects: KubernetesObject[]) {
  const deployment = objects.find((o) => o.kind === 'Deployment') as Extract<KubernetesObject, { kind: 'Deployment' }>;
  return deployment.spec!.template.spec!;
}

describe('the tasks’ state on Kubernetes', () => {
  it('a storage class named: one ReadWriteMany claim every pod mounts, MCPCTL_TASKS_DIR in it, valid objects', async () => {
    const result = manifests({
      environment: 'production',
      namespace: 'mcp',
      scaling: { min_instances: 2, max_instances: 6 },
      tasks: { storageClass: 'nfs-client' },
    });
    expect(result.objects.map((o) => o.kind)).toEqual([
      'PersistentVolumeClaim',
      'Service',
      'Deployment',
      'PodDisruptionBudget',
      'HorizontalPodAutoscaler',
      'NetworkPolicy',
    ]);
    const claim = claimOf(result.objects)!;
    new PersistentVolumeClaim(claim).validate();
    new Deployment(result.objects.find((o) => o.kind === 'Deployment')).validate();
    expect(claim.metadata).toMatchObject({
      name: expect.stringMatching(/^reports-production-tasks-[0-9a-f]{6}$/) as unknown,
      namespace: 'mcp',
      // the labels of every object of the export: the runner finds (and deletes) it with the rest
      labels: { 'app.kubernetes.io/instance': 'reports-production', 'mcpctl/server': 'reports' },
    });
    expect(claim.spec).toEqual({
      accessModes: ['ReadWriteMany'],
      storageClassName: 'nfs-client',
      volumeMode: 'Filesystem',
      resources: { requests: { storage: '1Gi' } },
    });
    const pod = podOf(result.objects);
    expect(pod.volumes).toContainEqual({ name: 'tasks', persistentVolumeClaim: { claimName: claim.metadata!.name } });
    const container = pod.containers[0]!;
    expect(container.volumeMounts).toContainEqual({ name: 'tasks', mountPath: TASKS_MOUNT });
    expect(container.env).toContainEqual({ name: TASKS_DIR_ENV, value: TASKS_DIR });
    expect(TASKS_DIR.startsWith(`${TASKS_MOUNT}/`)).toBe(true);
    // the image's user can write in a volume made root's: its group owns it
    expect(pod.securityContext).toMatchObject({
      runAsUser: 10001,
      runAsGroup: 10001,
      fsGroup: 10001,
      fsGroupChangePolicy: 'OnRootMismatch',
    });
    // the container stays locked down; the pods spread as before (no affinity to one node)
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    expect(pod.affinity).toBeUndefined();
    expect(pod.topologySpreadConstraints).toHaveLength(2);
    expect(result.tasks).toEqual({
      storage: { mode: 'shared', accessMode: 'ReadWriteMany', storageClass: 'nfs-client' },
    });
    expect(result.notices.join('\n')).not.toMatch(/tasks/);
    // in the YAML the export writes, the claim comes before the pods that mount it
    const yaml = await toYamlStream(result.objects, ['test']);
    expect(yaml.indexOf('kind: PersistentVolumeClaim')).toBeLessThan(yaml.indexOf('kind: Deployment'));
  });

  it('no class and one instance: a ReadWriteOnce claim of the default class, each new pod on the node of the old', () => {
    for (const options of [
      { environment: 'development' },
      { environment: 'staging', scaling: { min_instances: 1, max_instances: 1 } },
    ] as Options[]) {
      const result = manifests({ ...options, tasks: {} });
      const claim = claimOf(result.objects)!;
      new PersistentVolumeClaim(claim).validate();
      expect(claim.spec!.accessModes).toEqual(['ReadWriteOnce']);
      expect(claim.spec!).not.toHaveProperty('storageClassName');
      const pod = podOf(result.objects);
      expect(pod.volumes).toContainEqual({ name: 'tasks', persistentVolumeClaim: { claimName: claim.metadata!.name } });
      expect(pod.containers[0]!.env).toContainEqual({ name: TASKS_DIR_ENV, value: TASKS_DIR });
      // a ReadWriteOnce volume is attached to one node: the surge pod of a rolling update goes there
      expect(pod.affinity).toEqual({
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            {
              topologyKey: 'kubernetes.io/hostname',
              labelSelector: {
                matchLabels: { 'app.kubernetes.io/name': 'reports', 'app.kubernetes.io/instance': result.name },
              },
            },
          ],
        },
      });
      expect(result.notices).toContainEqual(expect.stringMatching(/ReadWriteOnce.*default storage class.*Pending/));
    }
  });

  it('no class and more than one instance: no claim (no pod Pending on a class that cannot share), and a notice', () => {
    for (const options of [
      { environment: 'production' },
      { environment: 'staging', scaling: { min_instances: 1, max_instances: 2 } },
    ] as Options[]) {
      const result = manifests({ ...options, tasks: {} });
      expect(claimOf(result.objects)).toBeUndefined();
      const pod = podOf(result.objects);
      expect(pod.volumes!.map((v) => v.name)).toEqual(['scratch']);
      expect(pod.containers[0]!.env!.map((e) => e.name)).not.toContain(TASKS_DIR_ENV);
      expect(pod.securityContext).not.toHaveProperty('fsGroup');
      expect(result.tasks?.storage).toEqual({ mode: 'per-pod' });
      expect(result.notices).toContainEqual(
        expect.stringMatching(/each pod keeps its own.*unknown task.*ReadWriteMany storage class/),
      );
    }
  });

  it('the engine’s fixed count scaled later: the most instances decide, not the count applied', () => {
    const fixed = { environment: 'staging', scaling: { min_instances: 1, max_instances: 1 } } as const;
    expect(claimOf(manifests({ ...fixed, tasks: { maxInstances: 2 } }).objects)).toBeUndefined();
    expect(claimOf(manifests({ ...fixed, tasks: { maxInstances: 1 } }).objects)?.spec?.accessModes).toEqual([
      'ReadWriteOnce',
    ]);
  });

  it('no task tools: nothing of this', () => {
    const result = manifests({ environment: 'development' });
    expect(claimOf(result.objects)).toBeUndefined();
    expect(result.tasks).toBeUndefined();
    expect(podOf(result.objects).affinity).toBeUndefined();
    expect(result.notices.join('\n')).not.toMatch(/tasks/);
  });

  it('another access mode or class is another claim (neither can change in a claim once made)', () => {
    const names = new Set([
      taskClaimName('x', { mode: 'single', accessMode: 'ReadWriteOnce' }),
      taskClaimName('x', { mode: 'shared', accessMode: 'ReadWriteMany', storageClass: 'nfs' }),
      taskClaimName('x', { mode: 'shared', accessMode: 'ReadWriteMany', storageClass: 'cephfs' }),
    ]);
    expect(names.size).toBe(3);
    expect(taskClaimName('x', { mode: 'shared', accessMode: 'ReadWriteMany', storageClass: 'nfs' })).toBe(
      taskClaimName('x', { mode: 'shared', accessMode: 'ReadWriteMany', storageClass: 'nfs' }),
    );
  });

  it('a class that is no StorageClass name is a problem of the flag', () => {
    let error: unknown;
    try {
      manifests({ environment: 'production', tasks: { storageClass: 'NFS Client' } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).problems).toEqual([
      { path: '--tasks-storage-class', message: expect.stringMatching(/name of a StorageClass/) as unknown },
    ]);
  });
});
