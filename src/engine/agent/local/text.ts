/**
 * The local planner's reading of text: words split out of identifiers, a stemmer, stop words,
 * number words, arithmetic operators, numbers and dates in a message. Pure.
 */
import { isStopWord, splitWords } from '../../../definition/tokenize.js';
import { findWordNumbers } from './number-words.js';
import { stem, wordStems } from './words.js';

export { isStopWord, splitWords, stem };

const OPERATORS = new Set(['+', '-', '*', '/', '%', '^']);
// longer arithmetic is not something a message asks to compute
const MAX_EXPRESSION = 1000;
const DATE = /\b\d{4}-\d{2}-\d{2}\b/g;

function contentStemsOf(text: string): string[] {
  return [...new Set([...wordStems(text), ...operatorsIn(text)])];
}

/** Operators written as operators: not inside words (`X-MCP`, `km/h`) or dates. */
export function operatorsIn(text: string): string[] {
  const clean = text.replace(DATE, ' ').replace(/[a-z]+:\/\/\S*/gi, ' ');
  const found: string[] = [];
  for (let i = 0; i < clean.length; i += 1) {
    const char = clean[i]!;
    if (!OPERATORS.has(char)) continue;
    const before = clean.slice(0, i).trimEnd().at(-1);
    const after = clean.slice(i + 1).trimStart()[0];
    if (
      (before !== undefined && /[A-Za-z]/.test(before)) ||
      (after !== undefined && /[A-Za-z]/.test(after) && !isFunctionAt(clean, i + 1))
    )
      continue;
    found.push(char);
  }
  return found;
}

// `2 * sqrt(9)`: a letter after an operator is fine when it starts a function call.
function isFunctionAt(text: string, from: number): boolean {
  return /^\s*[a-z][a-z0-9]*\s*\(/i.test(text.slice(from));
}

export interface NumberMention {
  value: number;
  /** where it starts and ends in the text */
  start: number;
  end: number;
}

function findNumbersOf(text: string): NumberMention[] {
  const blocked = spansOf(text, DATE);
  const found: NumberMention[] = [];
  for (const match of text.matchAll(/(?<![\w.])-?\d+(?:\.\d+)?(?![\w])/g)) {
    const start = match.index;
    const end = start + match[0].length;
    if (blocked.some((span) => start < span.end && end > span.start)) continue;
    // a trailing period belongs to the sentence: `is 12.` gives 12
    const value = Number(match[0]);
    if (Number.isFinite(value)) found.push({ value, start, end });
  }
  found.push(...findWordNumbers(text));
  return found.sort((a, b) => a.start - b.start);
}

function findDatesOf(text: string): Array<{ value: string; start: number; end: number }> {
  return [...text.matchAll(DATE)].map((m) => ({ value: m[0], start: m.index, end: m.index + m[0].length }));
}

function findQuotedOf(text: string): Array<{ value: string; start: number; end: number }> {
  const found: Array<{ value: string; start: number; end: number }> = [];
  for (const match of text.matchAll(/"([^"]+)"|“([^”]+)”|(?<![\w])'([^']+)'(?![\w])|‘([^’]+)’/g)) {
    const value = match[1] ?? match[2] ?? match[3] ?? match[4] ?? '';
    if (value.trim() !== '') found.push({ value, start: match.index, end: match.index + match[0].length });
  }
  return found;
}

function findExpressionOf(text: string): string | undefined {
  const clean = text.replace(DATE, (date) => ' '.repeat(date.length));
  const piece = /\s*(?:(\d+(?:\.\d+)?|pi\b|e\b)|([a-z][a-z0-9]*)(?=\()|([-+*/%^])|([(),]))/giy;
  let best: string | undefined;
  for (let start = 0; start < clean.length; start += 1) {
    if (!/[\d(a-z-]/i.test(clean[start]!) || (start > 0 && /[a-z0-9.]/i.test(clean[start - 1]!))) continue;
    piece.lastIndex = start;
    let end = start;
    let depth = 0;
    let operators = 0;
    let operands = 0;
    for (
      let match = piece.exec(clean);
      match !== null && piece.lastIndex - start <= MAX_EXPRESSION;
      match = piece.exec(clean)
    ) {
      const [, operand, call, operator, punctuation] = match;
      if (operand !== undefined) operands += 1;
      else if (call !== undefined || operator !== undefined) operators += 1;
      else if (punctuation === '(') depth += 1;
      else if (punctuation === ')') {
        if (depth === 0) break;
        depth -= 1;
      }
      if (depth === 0 && (operand !== undefined || punctuation === ')')) end = piece.lastIndex;
    }
    const candidate = clean.slice(start, end).trim();
    if (operators > 0 && operands > 0 && /\d/.test(candidate) && (best === undefined || candidate.length > best.length))
      best = candidate;
    // a start inside this expression gives a shorter one
    if (end > start) start = end - 1;
  }
  return best;
}

function spansOf(text: string, pattern: RegExp): Array<{ start: number; end: number }> {
  return [...text.matchAll(new RegExp(pattern.source, 'g'))].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
  }));
}

const CONNECTORS = new Set(['of', 'de', 'del', 'da', 'di', 'la', 'le', 'am', 'an', 'van', 'von', 'upon']);

function findNamesOf(text: string): string[] {
  const names: string[] = [];
  const words = [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’.-]*/gu)];
  let current: string[] = [];
  let pendingConnectors: string[] = [];
  const flush = () => {
    if (current.length > 0) names.push(current.join(' '));
    current = [];
    pendingConnectors = [];
  };
  for (const [index, match] of words.entries()) {
    const word = match[0].replace(/[.’']+$/, '');
    const before = text.slice(index === 0 ? 0 : words[index - 1]!.index + words[index - 1]![0].length, match.index);
    const startsSentence = index === 0 || /[.?!:]\s*$/.test(before) || /\n/.test(before);
    const gap = /[,;()"“”]/.test(before);
    if (gap) flush();
    if (/^\p{Lu}/u.test(word) && word !== 'I' && !(startsSentence && current.length === 0) && !isStopWord(word)) {
      current.push(...pendingConnectors, word);
      pendingConnectors = [];
    } else if (current.length > 0 && CONNECTORS.has(word)) {
      pendingConnectors.push(word);
    } else {
      flush();
    }
  }
  flush();
  return names;
}

/**
 * The planner reads the same text many times (once per tool); these keep the last results. Their
 * arrays are shared: callers must not change them.
 */
function memo<T>(read: (text: string) => T): (text: string) => T {
  const cache = new Map<string, T>();
  return (text) => {
    let value = cache.get(text);
    if (value === undefined && !cache.has(text)) {
      value = read(text);
      if (cache.size >= 64) cache.clear();
      cache.set(text, value);
    }
    return value as T;
  };
}

/**
 * The stems a text is about: words that are not stop words, stemmed, plus the arithmetic
 * operators that stand between numbers or on their own (so `3 * 4` meets "+ - * /").
 */
export const contentStems = memo(contentStemsOf);
/** Numbers in a text, written with digits (`52.52`, `-3`) or as words (`three`, `twenty-five`); not those inside dates or words like `3d6`. */
export const findNumbers = memo(findNumbersOf);
/** Dates written as YYYY-MM-DD. */
export const findDates = memo(findDatesOf);
/** Strings in double or single quotes (or typographic quotes), in order. */
export const findQuoted = memo(findQuotedOf);
/**
 * The longest arithmetic expression in a text: numbers, operators, parentheses, function calls
 * (`sqrt(144)`) and the constants pi and e, with at least one operator or call in it.
 */
export const findExpression = memo(findExpressionOf);
/** Capitalised phrases that do not start a sentence (`Ada Lovelace`, `Frankfurt am Main`), in order. */
export const findNames = memo(findNamesOf);
