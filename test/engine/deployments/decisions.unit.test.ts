import { describe, expect, it } from 'vitest';
import {
  answerStandsForCheck,
  decideRestart,
  failsWhenGivenUp,
  idlePeriodMs,
  launchOutcome,
  nextCheckDelay,
  planReplacement,
  planScale,
  shouldIdle,
  shouldReplace,
  type CheckObservation,
  type LaunchedInstance,
} from '../../../src/engine/deployments/decisions.js';
import type { InstanceState } from '../../../src/engine/deployments/instance-states.js';

const limits = { maxRestarts: 3, restartBackoffMs: 100, restartBackoffMaxMs: 1_000, unhealthyThreshold: 3 };

describe('decideRestart', () => {
  it.each([
    { consecutive: 1, permanent: false, expected: { kind: 'restart', delayMs: 100 } },
    { consecutive: 2, permanent: false, expected: { kind: 'restart', delayMs: 200 } },
    { consecutive: 3, permanent: false, expected: { kind: 'restart', delayMs: 400 } },
    { consecutive: 4, permanent: false, expected: { kind: 'giveUp', why: 'given up after 3 restarts in a row' } },
    {
      consecutive: 1,
      permanent: true,
      expected: { kind: 'giveUp', why: 'not restarted: the server refused to start' },
    },
  ])('failure $consecutive in a row (permanent: $permanent)', ({ consecutive, permanent, expected }) => {
    expect(decideRestart(consecutive, permanent, limits)).toEqual(expected);
  });
});

describe('health checks', () => {
  const seen = (change: Partial<CheckObservation>): CheckObservation => ({
    state: 'healthy',
    running: true,
    checkDelay: 1_000,
    intervalMs: 1_000,
    now: 10_000,
    lastCheck: 9_000,
    answeredAt: 0,
    requestedAt: 0,
    outstanding: 0,
    ...change,
  });

  it.each([
    { case: 'a healthy instance answered since the last tick', change: { answeredAt: 9_500 }, stands: true },
    { case: 'no answer since the last tick', change: { answeredAt: 8_000 }, stands: false },
    { case: 'its process does not run', change: { answeredAt: 9_500, running: false }, stands: false },
    { case: 'still starting', change: { answeredAt: 9_500, state: 'starting' as const }, stands: false },
    {
      case: 'unhealthy, answered after the failed check',
      change: { state: 'unhealthy' as const, answeredAt: 9_500 },
      stands: true,
    },
    {
      case: 'unhealthy, answered only before the failed check',
      change: { state: 'unhealthy' as const, lastCheck: 9_800, answeredAt: 9_500 },
      stands: false,
    },
  ])('an answer stands for a check: $case', ({ change, stands }) => {
    expect(answerStandsForCheck(seen(change))).toBe(stands);
  });

  it.each([
    { case: 'not checked', change: {}, checked: false, delay: 1_000 },
    { case: 'healthy and idle: doubles', change: {}, checked: true, delay: 2_000 },
    { case: 'idle for long: capped at 8 intervals', change: { checkDelay: 8_000 }, checked: true, delay: 8_000 },
    { case: 'requests in flight', change: { outstanding: 1 }, checked: true, delay: 1_000 },
    { case: 'a request since the last tick', change: { requestedAt: 9_500 }, checked: true, delay: 1_000 },
    { case: 'unhealthy', change: { state: 'unhealthy' as const }, checked: true, delay: 1_000 },
  ])('next check delay: $case', ({ change, checked, delay }) => {
    expect(nextCheckDelay(seen(change), checked)).toBe(delay);
  });

  it.each([
    [2, false],
    [3, true],
    [4, true],
  ])('%i failed checks in a row replace the process: %s', (failed, replace) => {
    expect(shouldReplace(failed, limits)).toBe(replace);
  });
});

describe('launchOutcome', () => {
  const serving: LaunchedInstance = { state: 'healthy', serving: true, failure: undefined };
  const starting: LaunchedInstance = { state: 'starting', serving: false, failure: undefined };
  const failed: LaunchedInstance = { state: 'failed', serving: false, failure: 'it crashed' };
  const stopped: LaunchedInstance = { state: 'stopped', serving: false, failure: undefined };

  it.each([
    { verb: 'starting', started: [serving, serving], active: true, outcome: { done: true } },
    { verb: 'starting', started: [serving, starting], active: true, outcome: undefined },
    { verb: 'starting', started: [serving, failed], active: true, outcome: { done: false, reason: 'it crashed' } },
    { verb: 'restoring', started: [serving, failed], active: true, outcome: { done: true } },
    { verb: 'restoring', started: [starting, failed], active: true, outcome: undefined },
    { verb: 'restoring', started: [failed, failed], active: true, outcome: { done: false, reason: 'it crashed' } },
    {
      verb: 'starting',
      started: [starting],
      active: false,
      outcome: { done: false, reason: 'stopped while starting' },
    },
    { verb: 'starting', started: [stopped], active: true, outcome: { done: false, reason: 'stopped while starting' } },
  ] as const)('$verb %#', ({ verb, started, active, outcome }) => {
    expect(launchOutcome(verb, started, active)).toEqual(outcome);
  });
});

describe('planScale', () => {
  const instance = (name: string, state: InstanceState, serving: boolean, outstanding: number) => ({
    name,
    state,
    serving,
    outstanding,
  });
  const a = instance('a', 'healthy', true, 2);
  const b = instance('b', 'healthy', true, 0);
  const c = instance('c', 'starting', false, 0);
  const d = instance('d', 'draining', false, 1);

  it.each([
    { case: 'up from one', instances: [a], desired: 3, start: 2, drain: [] },
    { case: 'draining ones do not count', instances: [a, d], desired: 2, start: 1, drain: [] },
    { case: 'down: not serving first', instances: [a, b, c], desired: 2, start: 0, drain: ['c'] },
    { case: 'down: then the least busy', instances: [a, b, c], desired: 1, start: 0, drain: ['c', 'b'] },
    { case: 'as desired', instances: [a, b], desired: 2, start: 0, drain: [] },
  ])('$case', ({ instances, desired, start, drain }) => {
    const plan = planScale(instances, desired);
    expect({ start: plan.start, drain: plan.drain.map((one) => one.name) }).toEqual({ start, drain });
  });

  it('drains the newest of equals first', () => {
    const older = instance('older', 'healthy', true, 0);
    const newer = instance('newer', 'healthy', true, 0);
    expect(planScale([older, newer], 1).drain.map((one) => one.name)).toEqual(['newer']);
  });
});

describe('deployment rules', () => {
  it.each([
    { states: ['failed', 'stopped'], fails: true },
    { states: ['failed', 'healthy'], fails: false },
    { states: ['failed', 'starting'], fails: false },
  ] as const)('given up with $states left: fails $fails', ({ states, fails }) => {
    expect(failsWhenGivenUp(states.map((state) => ({ state })))).toBe(fails);
  });

  const at = (id: string, createdAt: string) => ({ id, createdAt });
  it.each([
    { case: 'replaces the older ones', rivals: [at('a', '1'), at('b', '2')], stops: ['a by new', 'b by new'] },
    { case: 'a newer rival replaces it', rivals: [at('a', '1'), at('z', '9')], stops: ['a by new', 'new by z'] },
    { case: 'same time: the lower id is older', rivals: [at('m', '5')], stops: ['m by new'] },
    { case: 'no rivals', rivals: [], stops: [] },
  ])('planReplacement: $case', ({ rivals, stops }) => {
    const plan = planReplacement(at('new', '5'), rivals);
    expect(plan.map(({ stop, by }) => `${stop.id} by ${by.id}`)).toEqual(stops);
  });

  const candidate = { status: 'deployed', idle: false, lastActivity: 0, busy: false, periodMs: 1_000 };
  it.each([
    { case: 'no request for its period', change: {}, now: 1_000, idle: true },
    { case: 'not idle for long enough', change: {}, now: 999, idle: false },
    { case: 'never idles (no period)', change: { periodMs: undefined }, now: 1_000_000, idle: false },
    { case: 'idle already', change: { idle: true }, now: 1_000, idle: false },
    { case: 'not deployed', change: { status: 'deploying' }, now: 1_000, idle: false },
    { case: 'requests in flight', change: { busy: true }, now: 1_000, idle: false },
  ])('shouldIdle: $case', ({ change, now, idle }) => {
    expect(shouldIdle({ ...candidate, ...change }, now)).toBe(idle);
  });

  const defaults = { devIdleMs: 300_000, stagingIdleMs: 600_000 };
  it.each([
    { case: 'development default', environment: 'development', scaling: undefined, ms: 300_000 },
    { case: 'staging default', environment: 'staging', scaling: undefined, ms: 600_000 },
    { case: 'its own period', environment: 'staging', scaling: { idle_seconds: 30 }, ms: 30_000 },
    { case: '0: never', environment: 'development', scaling: { idle_seconds: 0 }, ms: undefined },
    { case: 'production keeps its instances', environment: 'production', scaling: { idle_seconds: 30 }, ms: undefined },
    { case: 'production with min_instances 0', environment: 'production', scaling: { min_instances: 0 }, ms: 600_000 },
    {
      case: 'production with min_instances 0 and its own period',
      environment: 'production',
      scaling: { min_instances: 0, idle_seconds: 1 },
      ms: 1_000,
    },
  ])('idlePeriodMs: $case', ({ environment, scaling, ms }) => {
    expect(idlePeriodMs(environment, scaling, defaults)).toBe(ms);
  });
});
