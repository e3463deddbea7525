import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/shared/errors.js';
import { createStepRunner, StepFailed } from '../../src/cli/steps/step-runner.js';

const STEPS = ['validate', 'build', 'deploy'] as const;

describe('createStepRunner', () => {
  it('records each step that ends as ok, and a check made ahead leaves its step to run', async () => {
    const steps = createStepRunner(STEPS, (error) => error);
    expect(await steps.run('validate', () => Promise.resolve(1))).toBe(1);
    await steps.run('build', () => Promise.resolve(), { done: false });
    expect(steps.records.map((r) => r.status)).toEqual(['ok', 'skipped', 'skipped']);
    expect(steps.finish()).toBeUndefined();
    expect(steps.records[2]).toEqual({ step: 'deploy', status: 'skipped' });
  });

  it('records the explained error of a failing step, and the steps after it as not run', async () => {
    const explained = new UserError('no such server', { code: 'not_found', hint: 'build it first' });
    const steps = createStepRunner(STEPS, () => explained);
    await steps.run('validate', () => Promise.resolve());
    await expect(steps.run('build', () => Promise.reject(new Error('404')))).rejects.toBeInstanceOf(StepFailed);
    expect(steps.finish()?.step).toBe('build');
    expect(steps.records).toEqual([
      { step: 'validate', status: 'ok' },
      {
        step: 'build',
        status: 'failed',
        error: { code: 'not_found', message: 'no such server', exit_code: explained.exitCode, hint: 'build it first' },
      },
      { step: 'deploy', status: 'skipped', reason: 'not run: the build step failed' },
    ]);
  });

  it('rethrows what is not a user error, and lets a step explain its own errors', async () => {
    const bug = new TypeError('bug');
    const steps = createStepRunner(STEPS, (error) => error);
    await expect(steps.run('validate', () => Promise.reject(bug))).rejects.toBe(bug);
    const own = new UserError('line 3: bad');
    await expect(steps.run('build', () => Promise.reject(bug), { explain: () => own })).rejects.toMatchObject({
      error: own,
    });
  });
});
