/**
 * A command made of named steps run in order (`up`: validate, build, test, deploy). Each step's
 * status, result or error is recorded for `--json` and the CI summary; the first step that fails
 * ends the run, and the steps after it are recorded as not run, with why.
 */
import { UserError } from '../../shared/errors.js';
import type { StepStatus } from '../render/ci-summary.js';

export interface StepRecord<Name extends string = string> {
  step: Name;
  status: StepStatus;
  /** why it was skipped */
  reason?: string;
  /** what it produced */
  result?: unknown;
  error?: StepError;
}

/** A failed step's error as `--json` shows it. */
export interface StepError {
  code: string;
  message: string;
  exit_code: number;
  problems?: unknown[];
  hint?: string;
  request_id?: string;
}

/** A step that failed: already recorded, the run ends with its error. */
export class StepFailed extends Error {
  constructor(readonly error: UserError) {
    super(error.message);
  }
}

/** Turns what a step threw into what the user is told: a UserError, or anything else (a bug, rethrown). */
export type ExplainError = (error: unknown) => unknown;

export interface StepOptions {
  /** how this step's errors are explained, instead of the runner's */
  explain?: ExplainError;
  /** false: a check made ahead for a later step, which leaves that step to run */
  done?: boolean;
}

export interface StepRunner<Name extends string> {
  /** every step, in order, as recorded so far */
  readonly records: StepRecord<Name>[];
  /** Runs one step: recorded ok when it ends, or its error (explained) recorded and the run ended. */
  run<T>(name: Name, work: () => Promise<T>, options?: StepOptions): Promise<T>;
  /** Adds to a step's record (its result, or why it was skipped). */
  record(name: Name, update: Partial<StepRecord<Name>>): void;
  /** Records a step's failure; the error to end the run with. */
  fail(name: Name, error: UserError): StepFailed;
  /** The step that failed, with every step after it recorded as not run because of it. */
  finish(): StepRecord<Name> | undefined;
}

export function createStepRunner<Name extends string>(names: readonly Name[], explain: ExplainError): StepRunner<Name> {
  const records: StepRecord<Name>[] = names.map((step) => ({ step, status: 'skipped' }));
  const record = (name: Name, update: Partial<StepRecord<Name>>): void => {
    Object.assign(
      records.find((r) => r.step === name)!,
      update,
    );
  };
  const fail = (name: Name, error: UserError): StepFailed => {
    record(name, { status: 'failed', error: stepError(error) });
    return new StepFailed(error);
  };
  const run = async <T>(name: Name, work: () => Promise<T>, options: StepOptions = {}): Promise<T> => {
    try {
      const result = await work();
      if (options.done !== false) record(name, { status: 'ok' });
      return result;
    } catch (error) {
      const explained = (options.explain ?? explain)(error);
      if (!(explained instanceof UserError)) throw explained;
      throw fail(name, explained);
    }
  };
  const finish = (): StepRecord<Name> | undefined => {
    const failed = records.find((r) => r.status === 'failed');
    if (failed === undefined) return undefined;
    for (const r of records)
      if (r.status === 'skipped' && r.reason === undefined) r.reason = `not run: the ${failed.step} step failed`;
    return failed;
  };
  return { records, run, record, fail, finish };
}

function stepError(error: UserError): StepError {
  return {
    code: error.code,
    message: error.message,
    exit_code: error.exitCode,
    ...(error.problems.length === 0 ? {} : { problems: error.problems }),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    ...(error.requestId === undefined ? {} : { request_id: error.requestId }),
  };
}
