/**
 * What a case's `expect:` adds to a test request and to the judging of its result: the expected
 * tools, calls and reply criteria sent to the service with the judge model, the evaluation of the
 * result (the service's, or the same computed here for a service that sends none), and the
 * failures it shows.
 */
import type { TestRequestInput } from '../../api/client.js';
import { evaluateRun, evaluationFailures, OFFLINE_JUDGE } from '../../api/expectations.js';
import type { TestResult } from '../../api/operations.js';
import type { TestsConfig } from '../../definition/schema.js';

export type CaseExpectations = NonNullable<TestsConfig['cases'][number]['expect']>;

/** The `expect` and `judge_model` fields of a case's request; none when it expects nothing the service uses. */
export function expectationFields(
  expect: CaseExpectations | undefined,
  judge: string | undefined,
): Pick<TestRequestInput, 'expect' | 'judge_model'> {
  if (expect === undefined) return {};
  const sent = {
    ...(expect.tools === undefined ? {} : { tools: expect.tools }),
    ...(expect.calls === undefined ? {} : { calls: expect.calls }),
    ...(expect.reply === undefined ? {} : { reply: expect.reply }),
  };
  if (Object.keys(sent).length === 0) return {};
  const judged = expect.reply !== undefined && judge !== undefined && judge !== OFFLINE_JUDGE;
  return { expect: sent, ...(judged ? { judge_model: judge } : {}) };
}

/**
 * The result with its evaluation: the service's as it sent it, else computed here (a service
 * without the extension, or one that dropped `expect`). The reply is then judged here only
 * offline: a model judge runs where the models are.
 */
export function withEvaluation(
  result: TestResult,
  expect: CaseExpectations | undefined,
  judge: string | undefined,
): TestResult {
  if (result.evaluation !== undefined || expect === undefined) return result;
  const evaluation = evaluateRun(result, expect, judge ?? OFFLINE_JUDGE);
  return evaluation === undefined ? result : { ...result, evaluation };
}

/** The failures of a result's expected calls and reply criteria. */
export function expectationFailures(result: TestResult, expect: CaseExpectations | undefined): string[] {
  return evaluationFailures(result.evaluation, expect);
}
