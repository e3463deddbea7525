/**
 * The lines a run's evaluation adds under a test case: tool-selection precision and recall, the
 * expected calls matched, the reply's criteria met, and the tokens the model reported.
 */
import type { TestResult } from '../../api/operations.js';
import { formatCount, formatRate } from './format.js';

/** The evaluation's fields for `Printer.fields`; none for a run that has none. */
export function evaluationFields(result: TestResult): Array<[string, string | undefined]> {
  const evaluation = result.evaluation;
  const rows: Array<[string, string | undefined]> = [];
  if (evaluation?.precision !== undefined && evaluation.recall !== undefined) {
    const off = [
      ...(evaluation.unexpected_tools ?? []).map((tool) => `unexpected ${tool}`),
      ...(evaluation.missed_tools ?? []).map((tool) => `missed ${tool}`),
    ];
    rows.push([
      'tool selection',
      `precision ${formatRate(evaluation.precision)}, recall ${formatRate(evaluation.recall)}${off.length === 0 ? '' : ` (${off.join(', ')})`}`,
    ]);
  }
  const calls = evaluation?.calls;
  if (calls !== undefined && calls.length > 0)
    rows.push(['expected calls', `${calls.filter((c) => c.matched).length} of ${calls.length} matched`]);
  const reply = evaluation?.reply;
  if (reply !== undefined) {
    const met = reply.criteria.filter((c) => c.passed).length;
    rows.push([
      'reply criteria',
      reply.error === undefined
        ? `${met} of ${reply.criteria.length} met (judge ${reply.judge})`
        : `not judged by ${reply.judge}`,
    ]);
  }
  if (result.usage !== undefined) {
    const { input_tokens: input, output_tokens: output } = result.usage;
    rows.push(['tokens', `${formatCount(input)} in, ${formatCount(output)} out`]);
  }
  return rows;
}
