/**
 * A Deployment's rollout read as the spec's states: every step `kubectl rollout status` waits on,
 * the deadline, and what the pods say before the deadline.
 */
import { describe, expect, it } from 'vitest';
import {
  availableInstances,
  podProblem,
  rolloutState,
  type DeploymentView,
  type PodView,
} from '../../../../src/engine/runners/kubernetes/rollout.js';

type Status = NonNullable<DeploymentView['status']>;
type Condition = NonNullable<Status['conditions']>[number];

function deployment(
  status: Status,
  options: { generation?: number; replicas?: number; paused?: boolean; deleting?: boolean } = {},
): DeploymentView {
  return {
    metadata: {
      generation: options.generation ?? 2,
      ...(options.deleting === true ? { deletionTimestamp: '2026-11-24T00:00:00Z' } : {}),
    },
    spec: {
      ...(options.replicas === undefined ? {} : { replicas: options.replicas }),
      ...(options.paused === undefined ? {} : { paused: options.paused }),
    },
    status,
  };
}
const progressing = (reason: string, status = 'True'): Condition => ({
  type: 'Progressing',
  status,
  reason,
  message: `progressing: ${reason}`,
});
const available = (status: string): Condition => ({
  type: 'Available',
  status,
  reason: status === 'True' ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
});
const settled = (n: number): Status => ({
  observedGeneration: 2,
  replicas: n,
  updatedReplicas: n,
  readyReplicas: n,
  availableReplicas: n,
  conditions: [available('True'), progressing('NewReplicaSetAvailable')],
});
function waitingPod(reason: string, message?: string, name = 'weather-abc-1'): PodView {
  return {
    metadata: { name },
    status: {
      phase: 'Pending',
      containerStatuses: [
        { name: 'server', state: { waiting: { reason, ...(message === undefined ? {} : { message }) } } },
      ],
    },
  };
}

describe('rolloutState', () => {
  const table: {
    name: string;
    deployment: DeploymentView | undefined;
    pods?: PodView[];
    wanted?: number;
    state: string;
    reason: RegExp;
  }[] = [
    { name: 'no Deployment', deployment: undefined, state: 'failed', reason: /does not exist/ },
    {
      name: 'being deleted',
      deployment: deployment(settled(2), { replicas: 2, deleting: true }),
      state: 'failed',
      reason: /being deleted/,
    },
    {
      name: 'the controller has not seen the new generation',
      deployment: deployment({ ...settled(2), observedGeneration: 1 }, { replicas: 2 }),
      state: 'deploying',
      reason: /controller to see the new version/,
    },
    {
      name: 'a new object with no status yet',
      deployment: deployment({}, { generation: 1, replicas: 2 }),
      state: 'deploying',
      reason: /controller/,
    },
    {
      name: 'paused',
      deployment: deployment(settled(2), { replicas: 2, paused: true }),
      state: 'deploying',
      reason: /paused/,
    },
    {
      name: 'progress deadline exceeded',
      deployment: deployment(
        {
          observedGeneration: 2,
          replicas: 3,
          updatedReplicas: 1,
          availableReplicas: 2,
          conditions: [progressing('ProgressDeadlineExceeded', 'False')],
        },
        { replicas: 2 },
      ),
      state: 'failed',
      reason: /no progress before its deadline$/,
    },
    {
      name: 'progress deadline exceeded, with the pod that is why',
      deployment: deployment(
        { observedGeneration: 2, updatedReplicas: 1, conditions: [progressing('ProgressDeadlineExceeded', 'False')] },
        { replicas: 1 },
      ),
      pods: [waitingPod('ImagePullBackOff', 'Back-off pulling image "r.example/mcpctl-server:abc"')],
      state: 'failed',
      reason: /deadline: weather-abc-1: ImagePullBackOff: Back-off pulling image/,
    },
    {
      name: 'updated replicas below desired',
      deployment: deployment(
        {
          observedGeneration: 2,
          replicas: 2,
          updatedReplicas: 1,
          availableReplicas: 2,
          conditions: [progressing('ReplicaSetUpdated')],
        },
        { replicas: 2 },
      ),
      state: 'deploying',
      reason: /^1 of 2 instances updated$/,
    },
    {
      name: 'old replicas still terminating',
      deployment: deployment(
        {
          observedGeneration: 2,
          replicas: 3,
          updatedReplicas: 2,
          availableReplicas: 2,
          conditions: [progressing('ReplicaSetUpdated')],
        },
        { replicas: 2 },
      ),
      state: 'deploying',
      reason: /^1 old instance is still stopping$/,
    },
    {
      name: 'updated but not yet available',
      deployment: deployment(
        {
          observedGeneration: 2,
          replicas: 2,
          updatedReplicas: 2,
          readyReplicas: 1,
          availableReplicas: 1,
          conditions: [available('False')],
        },
        { replicas: 2 },
      ),
      state: 'deploying',
      reason: /^1 of 2 instances available$/,
    },
    {
      name: 'complete',
      deployment: deployment(settled(2), { replicas: 2 }),
      state: 'deployed',
      reason: /^2 of 2 instances available$/,
    },
    {
      name: 'replicas unset means one',
      deployment: deployment(settled(1)),
      state: 'deployed',
      reason: /^1 of 1 instances available$/,
    },
    {
      name: 'an autoscaled Deployment below min_instances waits for the autoscaler',
      deployment: deployment(settled(1), { replicas: 1 }),
      wanted: 2,
      state: 'deploying',
      reason: /^1 of 2 instances available$/,
    },
    {
      name: 'an autoscaled Deployment above min_instances',
      deployment: deployment(settled(3), { replicas: 3 }),
      wanted: 2,
      state: 'deployed',
      reason: /3 of 3/,
    },
    {
      name: 'a missing Secret key fails at once',
      deployment: deployment(
        { observedGeneration: 2, replicas: 1, updatedReplicas: 1, conditions: [progressing('ReplicaSetUpdated')] },
        { replicas: 1 },
      ),
      pods: [waitingPod('CreateContainerConfigError', "couldn't find key API_TOKEN in Secret default/weather-env")],
      state: 'failed',
      reason: /CreateContainerConfigError: couldn't find key API_TOKEN/,
    },
    {
      name: 'an invalid image name fails at once',
      deployment: deployment({ observedGeneration: 2, replicas: 1, updatedReplicas: 1 }, { replicas: 1 }),
      pods: [waitingPod('InvalidImageName')],
      state: 'failed',
      reason: /^weather-abc-1: InvalidImageName$/,
    },
    {
      name: 'a pull back-off is waited for, and said',
      deployment: deployment(
        { observedGeneration: 2, replicas: 1, updatedReplicas: 1, conditions: [progressing('ReplicaSetUpdated')] },
        { replicas: 1 },
      ),
      pods: [waitingPod('ErrImagePull', 'pull access denied')],
      state: 'deploying',
      reason: /^0 of 1 instances available; weather-abc-1: ErrImagePull: pull access denied$/,
    },
    {
      name: 'a crash loop is waited for, with the last exit',
      deployment: deployment({ observedGeneration: 2, replicas: 1, updatedReplicas: 1 }, { replicas: 1 }),
      pods: [
        {
          metadata: { name: 'p1' },
          status: {
            containerStatuses: [
              {
                state: { waiting: { reason: 'CrashLoopBackOff' } },
                lastState: { terminated: { exitCode: 1, reason: 'Error' } },
              },
            ],
          },
        },
      ],
      state: 'deploying',
      reason: /p1: CrashLoopBackOff: last exit 1 \(Error\)/,
    },
    {
      name: 'pods cannot be created (quota)',
      deployment: deployment(
        {
          observedGeneration: 2,
          replicas: 0,
          updatedReplicas: 0,
          conditions: [
            { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'exceeded quota: pods' },
          ],
        },
        { replicas: 1 },
      ),
      state: 'deploying',
      reason: /pods cannot be created: exceeded quota: pods/,
    },
    {
      name: 'a terminating pod does not count',
      deployment: deployment(settled(1), { replicas: 1 }),
      pods: [{ ...waitingPod('CreateContainerConfigError'), metadata: { name: 'old', deletionTimestamp: 'x' } }],
      state: 'deployed',
      reason: /1 of 1/,
    },
  ];
  for (const row of table) {
    it(row.name, () => {
      const rollout = rolloutState(row.deployment, row.pods ?? [], row.wanted ?? 1);
      expect(rollout.state).toBe(row.state);
      expect(rollout.reason).toMatch(row.reason);
    });
  }

  it('reports the counts it decided on', () => {
    const rollout = rolloutState(
      deployment(
        { observedGeneration: 2, replicas: 3, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 1 },
        { replicas: 3 },
      ),
    );
    expect(rollout.replicas).toEqual({ desired: 3, updated: 2, ready: 2, available: 1 });
    expect(availableInstances(deployment(settled(4)))).toBe(4);
    expect(availableInstances(undefined)).toBe(0);
  });
});

describe('podProblem', () => {
  it('prefers a fatal problem over one that may pass, and cuts long messages to one line', () => {
    const problem = podProblem([
      waitingPod('ImagePullBackOff', undefined, 'a'),
      waitingPod('CreateContainerConfigError', `line1\nline2 ${'x'.repeat(400)}`, 'b'),
    ]);
    expect(problem?.fatal).toBe(true);
    expect(problem?.text.startsWith('b: CreateContainerConfigError: line1 line2')).toBe(true);
    expect(problem!.text.length).toBeLessThan(340);
    expect(podProblem([waitingPod('ContainerCreating')])).toBeUndefined();
    expect(podProblem([])).toBeUndefined();
  });
  it('a pod no node takes (a claim that cannot bind): said, and waited for until the deadline names it', () => {
    const pending: PodView = {
      metadata: { name: 'w-1' },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.',
          },
        ],
      },
    };
    expect(podProblem([pending])).toEqual({
      fatal: false,
      text: 'w-1: Unschedulable: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.',
    });
    const stuck = rolloutState(
      deployment({
        observedGeneration: 2,
        replicas: 1,
        conditions: [progressing('ProgressDeadlineExceeded', 'False')],
      }),
      [pending],
    );
    expect(stuck).toMatchObject({
      state: 'failed',
      reason: expect.stringMatching(/unbound immediate PersistentVolumeClaims/),
    });
    // scheduled: nothing to say
    const scheduled = {
      ...pending,
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] },
    };
    expect(podProblem([scheduled])).toBeUndefined();
  });
});
