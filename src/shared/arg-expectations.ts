/**
 * The forms an expected tool argument takes in a test case (`expect.calls[].args`), read the same
 * way where a definition is checked, where `POST /v1/test` is validated and where a run is judged:
 *
 * - a string, number, boolean or null: that value exactly;
 * - a list: a list of as many items, each matched by its own form;
 * - `{ match: "/expression/flags" }`: a string (or a number, by its text) the pattern finds;
 * - `{ approx: 52.5, within: 0.1 }`: a number (or a numeric string) at most `within` away;
 * - `{ equals: … }`: exactly that value, objects included (all their keys, none more);
 * - any other object: only the keys it gives, each by its own form (partial, at every depth).
 *
 * An object with a key `match`, `approx` or `equals` is always read as that form, so a mistyped
 * one is an error rather than a silent exact comparison; an argument object that has such a key
 * itself is expected with `equals`. Pure: no IO.
 */

export type ArgExpectation =
  | { kind: 'exact'; value: string | number | boolean | null }
  | { kind: 'list'; items: unknown[] }
  | { kind: 'pattern'; source: string; flags: string }
  | { kind: 'approx'; approx: number; within: number }
  | { kind: 'equals'; value: unknown }
  | { kind: 'partial'; entries: Array<[string, unknown]> };

/** A problem with an expected argument, at its path under `args`. */
export interface ArgExpectationProblem {
  path: Array<string | number>;
  message: string;
}

/** The tolerance of `{ approx }` without `within`: rounding only. */
export const DEFAULT_WITHIN = 1e-9;

const FORM_KEYS = ['match', 'approx', 'equals'] as const;
const PATTERN = /^\/(.+)\/([a-z]*)$/s;
const PATTERN_FLAGS = /^[imsu]*$/;
const MAX_DEPTH = 16;

/** How an expected value is compared, or a problem saying why it is not a valid form. */
export function readArgExpectation(value: unknown): ArgExpectation | { problem: string } {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return { kind: 'exact', value };
  if (typeof value === 'number')
    return Number.isFinite(value) ? { kind: 'exact', value } : { problem: 'must be a finite number' };
  if (Array.isArray(value)) return { kind: 'list', items: value };
  if (typeof value !== 'object') return { problem: 'must be a JSON value' };
  const record = value as Record<string, unknown>;
  const form = FORM_KEYS.find((key) => key in record);
  if (form === undefined) return { kind: 'partial', entries: Object.entries(record) };
  const extra = Object.keys(record).filter((key) => key !== form && !(form === 'approx' && key === 'within'));
  if (extra.length > 0) {
    return {
      problem: `${form} goes alone${form === 'approx' ? ' (or with within)' : ''}, not with ${extra.join(', ')}: to expect an argument object with a key ${form}, write { equals: { … } }`,
    };
  }
  if (form === 'equals') return { kind: 'equals', value: record.equals };
  if (form === 'approx') {
    const { approx, within = DEFAULT_WITHIN } = record;
    if (typeof approx !== 'number' || !Number.isFinite(approx)) return { problem: 'approx must be a number' };
    if (typeof within !== 'number' || !(within >= 0)) return { problem: 'within must be a number ≥ 0' };
    return { kind: 'approx', approx, within };
  }
  return readPattern(record.match);
}

function readPattern(match: unknown): ArgExpectation | { problem: string } {
  const hint = 'write a pattern as "/expression/flags", such as "/^ber/i"';
  if (typeof match !== 'string') return { problem: `match must be a string: ${hint}` };
  const parts = PATTERN.exec(match);
  if (parts === null) return { problem: `"${match}" is not a pattern: ${hint}` };
  const [, source = '', flags = ''] = parts;
  if (!PATTERN_FLAGS.test(flags)) return { problem: `the flags "${flags}" are not supported: use i, m, s or u` };
  try {
    // compiling checks the syntax only; matching runs on a linear-time engine (shared/linear-regexp.ts)
    new RegExp(source, `${flags.replace('u', '')}u`);
  } catch (error) {
    return { problem: `"${match}" is not a valid pattern: ${error instanceof Error ? error.message : String(error)}` };
  }
  return { kind: 'pattern', source, flags };
}

/** Every problem in an expectation's `args`, each at its path, walking lists and partial objects. */
export function argExpectationProblems(args: Record<string, unknown>): ArgExpectationProblem[] {
  const problems: ArgExpectationProblem[] = [];
  const visit = (value: unknown, path: Array<string | number>): void => {
    if (path.length > MAX_DEPTH) {
      problems.push({ path, message: `nested deeper than ${MAX_DEPTH} levels` });
      return;
    }
    const form = readArgExpectation(value);
    if ('problem' in form) problems.push({ path, message: form.problem });
    else if (form.kind === 'list') form.items.forEach((item, i) => visit(item, [...path, i]));
    else if (form.kind === 'partial') for (const [key, item] of form.entries) visit(item, [...path, key]);
  };
  for (const [key, value] of Object.entries(args)) visit(value, [key]);
  return problems;
}
