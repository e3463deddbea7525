/**
 * Where the pods of a server whose tools run as tasks (tools marked `task:`) keep the tasks' state,
 * so that any pod answers for a task another one created (MCPCTL_TASKS_DIR, read by the runtime):
 *
 * - a storage class given (ReadWriteMany, such as an NFS or CephFS class): one claim of it, mounted
 *   in every pod, however many there are;
 * - none given and at most one instance: a ReadWriteOnce claim of the cluster's default class, so a
 *   task outlives a restart of its pod; the new pod of a rolling update is placed on the node of the
 *   old one (a ReadWriteOnce volume is attached to one node at a time), else it would wait for the
 *   volume for ever while the old pod waits for it to be ready;
 * - none given and more than one instance possible: no claim, since a default class is rarely
 *   ReadWriteMany and a claim it cannot bind keeps every pod Pending. Each pod keeps its own tasks,
 *   and a notice says so.
 *
 * The claim's name carries a hash of what cannot change in a claim once made (its access mode and
 * class): another choice is another claim, and the one no longer made is deleted with the stale
 * objects. Pure: no IO.
 */
import { createHash } from 'node:crypto';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IPersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { TASKS_DIR_ENV } from '../runtime/constants.js';
import { objectMetadata, type ManifestContext } from './kubernetes-objects.js';

/** Where the claim is mounted in the container; the runtime keeps its tasks in a folder of it. */
export const TASKS_MOUNT = '/var/lib/mcpctl-tasks';
export const TASKS_DIR = `${TASKS_MOUNT}/tasks`;
/** Task state is a few small files per task, kept an hour. */
export const TASKS_CLAIM_SIZE = '1Gi';
const VOLUME = 'tasks';

/** How the pods keep their tasks' state. */
export type TaskStorage =
  | { mode: 'shared'; accessMode: 'ReadWriteMany'; storageClass: string }
  | { mode: 'single'; accessMode: 'ReadWriteOnce' }
  | { mode: 'per-pod' };

/**
 * The choice for a server whose tools run as tasks: `storageClass` is a ReadWriteMany class the
 * user named; `maxInstances` the most instances the server may run at once.
 */
export function taskStorage(storageClass: string | undefined, maxInstances: number): TaskStorage {
  if (storageClass !== undefined) return { mode: 'shared', accessMode: 'ReadWriteMany', storageClass };
  return maxInstances <= 1 ? { mode: 'single', accessMode: 'ReadWriteOnce' } : { mode: 'per-pod' };
}

/** The claim's name: `<name>-tasks-<6 characters of the hash of its access mode and class>`. */
export function taskClaimName(name: string, storage: Exclude<TaskStorage, { mode: 'per-pod' }>): string {
  const fixed = storage.mode === 'shared' ? `${storage.accessMode}\0${storage.storageClass}` : storage.accessMode;
  return `${name}-tasks-${createHash('sha256').update(fixed).digest('hex').slice(0, 6)}`;
}

export function taskClaimObject(
  context: ManifestContext,
  storage: Exclude<TaskStorage, { mode: 'per-pod' }>,
): IPersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: objectMetadata(context, taskClaimName(context.name, storage)),
    spec: {
      accessModes: [storage.accessMode],
      // left out: the cluster's default class
      ...(storage.mode === 'shared' ? { storageClassName: storage.storageClass } : {}),
      volumeMode: 'Filesystem',
      resources: { requests: { storage: TASKS_CLAIM_SIZE } },
    },
  };
}

/**
 * The Deployment with the claim mounted in its container, MCPCTL_TASKS_DIR set, the volume made
 * the group's of the image's user (fsGroup: a new volume is root's), and, for a ReadWriteOnce claim,
 * every pod on the node of the others (the first one anywhere).
 */
export function withTaskClaim(
  deployment: IDeployment,
  context: ManifestContext,
  storage: Exclude<TaskStorage, { mode: 'per-pod' }>,
): IDeployment {
  const result = structuredClone(deployment);
  const pod = result.spec!.template.spec!;
  const container = pod.containers[0]!;
  container.env = [...(container.env ?? []), { name: TASKS_DIR_ENV, value: TASKS_DIR }];
  container.volumeMounts = [...(container.volumeMounts ?? []), { name: VOLUME, mountPath: TASKS_MOUNT }];
  pod.volumes = [
    ...(pod.volumes ?? []),
    { name: VOLUME, persistentVolumeClaim: { claimName: taskClaimName(context.name, storage) } },
  ];
  // changes the owner only when the volume's root is not the group's yet: no walk of every file at each start
  pod.securityContext = {
    ...pod.securityContext,
    fsGroup: context.image.user.gid,
    fsGroupChangePolicy: 'OnRootMismatch',
  };
  if (storage.mode === 'single') {
    pod.affinity = {
      podAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: context.selector } },
        ],
      },
    };
  }
  return result;
}

/** What the user is told about where the tasks are kept (nothing when every pod shares them). */
export function taskNotice(name: string, storage: TaskStorage): string | undefined {
  if (storage.mode === 'shared') return undefined;
  if (storage.mode === 'single')
    return `tasks: kept on the claim ${taskClaimName(name, storage)} (ReadWriteOnce, ${TASKS_CLAIM_SIZE}) of the cluster's default storage class; without a default class the pod stays Pending (name a class with --tasks-storage-class or MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS)`;
  return 'tasks: each pod keeps its own, so a tasks/get that reaches another pod answers "unknown task"; to share them, name a ReadWriteMany storage class (--tasks-storage-class, or MCPCTL_KUBERNETES_TASKS_STORAGE_CLASS for the engine)';
}
