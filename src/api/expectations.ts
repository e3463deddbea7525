/**
 * A test run measured against what its case expects: tool-selection precision and recall, each
 * expected call matched by a call the agent made (with its arguments), and the reply's criteria
 * as a judge found them. The engine puts this in the result (`evaluation`); the CLI computes the
 * same for a service that sends none, and turns it into the case's failures. Pure: no IO.
 */
import { matchArguments, type ArgMismatch } from './arg-match.js';
import type { TestEvaluation, TestRequest, TestResult } from './operations.js';
import { judgeOffline } from './reply-judge.js';

export type Expect = NonNullable<TestRequest['expect']>;
type CallExpect = NonNullable<Expect['calls']>[number];
type CallCheck = NonNullable<TestEvaluation['calls']>[number];
type RecordedCall = NonNullable<TestResult['tool_calls']>[number];

/** The judge of `expect.reply` when none is named: the offline check of key words. */
export const OFFLINE_JUDGE = 'mcpctl-local';

/** The tools a case expects: those of `tools` and of `calls`; undefined when it says neither. */
export function expectedToolsOf(expect: Expect | undefined): string[] | undefined {
  if (expect?.tools === undefined && expect?.calls === undefined) return undefined;
  return [...new Set([...(expect.tools ?? []), ...(expect.calls ?? []).map((call) => call.tool)])];
}

/**
 * Precision (of the tools used, the share expected) and recall (of the tools expected, the share
 * used), over distinct tools. A share of nothing is 1 when the other side is empty too (nothing
 * expected, nothing used) and 0 otherwise.
 */
export function toolSelection(expected: readonly string[], used: readonly string[]) {
  const wanted = new Set(expected);
  const called = new Set(used);
  const hits = [...called].filter((tool) => wanted.has(tool)).length;
  const share = (part: number, whole: number, other: number) =>
    whole === 0 ? (other === 0 ? 1 : 0) : Math.round((part / whole) * 10_000) / 10_000;
  return {
    precision: share(hits, called.size, wanted.size),
    recall: share(hits, wanted.size, called.size),
    expected_tools: [...wanted],
    unexpected_tools: [...called].filter((tool) => !wanted.has(tool)),
    missed_tools: [...wanted].filter((tool) => !called.has(tool)),
  };
}

/**
 * Each expected call matched by a call of its tool, in any order; a call matches one expectation
 * at most, so two expected calls of a tool need two calls. An unmatched expectation names the
 * closest call of its tool (the fewest differing arguments) and how it differs.
 */
export function checkCalls(expected: readonly CallExpect[], calls: readonly RecordedCall[]): CallCheck[] {
  const taken = new Set<number>();
  return expected.map((wanted) => {
    let closest: { index: number; mismatches: ArgMismatch[] } | undefined;
    for (const [index, call] of calls.entries()) {
      if (call.name !== wanted.tool || taken.has(index)) continue;
      const mismatches =
        wanted.args === undefined
          ? []
          : call.arguments === undefined
            ? [{ path: 'args', expected: 'the arguments sent', got: 'none recorded: the service does not report them' }]
            : matchArguments(wanted.args, call.arguments);
      if (mismatches.length === 0) {
        taken.add(index);
        return { tool: wanted.tool, matched: true, call: index };
      }
      if (closest === undefined || mismatches.length < closest.mismatches.length) closest = { index, mismatches };
    }
    return closest === undefined
      ? { tool: wanted.tool, matched: false }
      : { tool: wanted.tool, matched: false, call: closest.index, mismatches: closest.mismatches };
  });
}

/**
 * The evaluation of a run against `expect`, with the reply judged offline when the judge is
 * `mcpctl-local` (a model judge's verdicts are the service's to add). Undefined when the case
 * expects nothing this measures.
 */
export function evaluateRun(
  result: Pick<TestResult, 'tools_used' | 'tool_calls' | 'ai_response'>,
  expect: Expect | undefined,
  judge: string = OFFLINE_JUDGE,
): TestEvaluation | undefined {
  const expected = expectedToolsOf(expect);
  const evaluation: TestEvaluation = {
    ...(expected === undefined ? {} : toolSelection(expected, result.tools_used)),
    ...(expect?.calls === undefined ? {} : { calls: checkCalls(expect.calls, result.tool_calls ?? []) }),
    ...(expect?.reply === undefined || judge !== OFFLINE_JUDGE
      ? {}
      : { reply: { judge, criteria: judgeOffline(result.ai_response, expect.reply) } }),
  };
  return Object.keys(evaluation).length === 0 ? undefined : evaluation;
}

/** What an evaluation says the run fell short of, one sentence each; empty when nothing did. */
export function evaluationFailures(
  evaluation: TestEvaluation | undefined,
  expect: Pick<Expect, 'calls' | 'reply'> | undefined,
): string[] {
  const failures: string[] = [];
  (evaluation?.calls ?? []).forEach((check, i) => {
    if (check.matched) return;
    const which = `expected call ${i + 1} (${check.tool})`;
    if (check.call === undefined) {
      failures.push(`${which}: the agent did not call ${check.tool}`);
      return;
    }
    const differences = (check.mismatches ?? []).map((m) => `${m.path} expected ${m.expected}, got ${m.got}`);
    failures.push(`${which}: call ${check.call + 1} of the run differs: ${differences.join('; ')}`);
  });
  if ((expect?.calls?.length ?? 0) > 0 && evaluation?.calls === undefined)
    failures.push('the service did not evaluate the expected calls');
  if ((expect?.reply?.length ?? 0) > 0) {
    const judged = evaluation?.reply;
    if (judged === undefined) failures.push('the reply was not judged: the service does not support expect.reply');
    else if (judged.error !== undefined) failures.push(`the judge ${judged.judge} gave no verdict: ${judged.error}`);
    else {
      for (const verdict of judged.criteria.filter((v) => !v.passed)) {
        const reason = verdict.reason === undefined ? '' : `: ${verdict.reason}`;
        failures.push(`the reply does not meet "${verdict.criterion}" (${judged.judge}${reason})`);
      }
    }
  }
  return failures;
}
