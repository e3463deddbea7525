/**
 * Matching a call's arguments against what a test expects of them, by the forms of
 * shared/arg-expectations.ts: each difference with the argument's path, what was expected and what
 * was sent. Patterns run on the linear-time engine, as the server's own do. Pure: no IO.
 */
import { readArgExpectation } from '../shared/arg-expectations.js';
import { compileLinear } from '../shared/linear-regexp.js';

export type ArgMismatch = {
  /** the argument, as `args.units` or `args.place.city` or `args.days[1]` */
  path: string;
  expected: string;
  got: string;
};

const MAX_SHOWN = 80;

/** Where `actual` differs from `expected`; empty when every expected argument matches. */
export function matchArguments(expected: Record<string, unknown>, actual: unknown): ArgMismatch[] {
  const mismatches: ArgMismatch[] = [];
  matchValue(expected, actual, 'args', mismatches);
  return mismatches;
}

function matchValue(expected: unknown, actual: unknown, path: string, out: ArgMismatch[]): void {
  const form = readArgExpectation(expected);
  const differ = (wanted: string) => void out.push({ path, expected: wanted, got: show(actual) });
  if ('problem' in form) {
    out.push({ path, expected: `a valid expectation (${form.problem})`, got: show(actual) });
    return;
  }
  switch (form.kind) {
    case 'exact':
      if (actual !== form.value) differ(show(form.value));
      return;
    case 'equals':
      if (!deepEqual(form.value, actual)) differ(show(form.value));
      return;
    case 'approx': {
      const number = numberOf(actual);
      if (number === undefined || Math.abs(number - form.approx) > form.within)
        differ(`${form.approx} ± ${form.within}`);
      return;
    }
    case 'pattern': {
      const text = typeof actual === 'string' ? actual : typeof actual === 'number' ? String(actual) : undefined;
      const wanted = `a match of /${form.source}/${form.flags}`;
      let pattern;
      try {
        pattern = compileLinear(form.source, form.flags);
      } catch (error) {
        out.push({ path, expected: `${wanted} (${(error as Error).message})`, got: show(actual) });
        return;
      }
      if (text === undefined || !pattern.test(text)) differ(wanted);
      return;
    }
    case 'list':
      if (!Array.isArray(actual) || actual.length !== form.items.length) {
        differ(`a list of ${form.items.length} ${form.items.length === 1 ? 'item' : 'items'}: ${show(expected)}`);
        return;
      }
      form.items.forEach((item, i) => matchValue(item, actual[i], `${path}[${i}]`, out));
      return;
    case 'partial': {
      if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
        differ(`an object with ${form.entries.map(([key]) => key).join(', ') || 'any keys'}`);
        return;
      }
      const record = actual as Record<string, unknown>;
      for (const [key, item] of form.entries) {
        const at = `${path}.${key}`;
        if (!Object.hasOwn(record, key)) out.push({ path: at, expected: describeExpected(item), got: 'nothing' });
        else matchValue(item, record[key], at, out);
      }
    }
  }
}

/** What an expected value asks for, in the words of a mismatch. */
function describeExpected(expected: unknown): string {
  const form = readArgExpectation(expected);
  if ('problem' in form) return 'a valid expectation';
  if (form.kind === 'approx') return `${form.approx} ± ${form.within}`;
  if (form.kind === 'pattern') return `a match of /${form.source}/${form.flags}`;
  if (form.kind === 'equals') return show(form.value);
  return show(expected);
}

/** A number, or a string that is one ("52.5"): models send either. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

/** JSON equality: the same keys with equal values, lists item by item. */
export function deepEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (left === null || right === null || typeof left !== 'object' || typeof right !== 'object') return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  if (Array.isArray(left)) {
    const other = right as unknown[];
    return left.length === other.length && left.every((item, i) => deepEqual(item, other[i]));
  }
  const a = left as Record<string, unknown>;
  const b = right as Record<string, unknown>;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
  );
}

/** A value as JSON text, cut to a length a message can carry. */
function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  // JSON.stringify gives undefined only for what JSON cannot hold (a function): not from a parsed run
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text;
}
