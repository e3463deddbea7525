/**
 * The local planner's reading of text: words split out of identifiers, a light stemmer, stop
 * words, number words, arithmetic operators, numbers and dates in a message. Pure.
 */

const STOP_WORDS = new Set(
  `a an the this that these those there here it its it's is are was were be been being am do does did done doing
  have has had having i me my mine myself we us our ours you your yours he him his she her they them their
  what which who whom whose when where why how can could would should will shall may might must
  to of in on at for with by from about as into onto over under up down out off than then so too very
  and or but if not no nor yes any some all each every both either neither other another such
  just also only again please thanks thank kindly hey
  tell give show get gets got let lets know want wants need needs like use used using uses
  check read see look find me'd i'm i'd i'll what's let's can't don't
  something anything thing things way much many more most few less least ok okay via per etc`.split(/\s+/),
);

// Generic verbs that describe any tool, so they do not tell tools apart.
const WEAK_WORDS = new Set(['return', 'returns', 'given', 'call', 'called', 'tool', 'tools', 'server', 'value', 'values', 'result', 'results']);

const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  hundred: 100,
};

const OPERATORS = new Set(['+', '-', '*', '/', '%', '^']);
// longer arithmetic is not something a message asks to compute
const MAX_EXPRESSION = 1000;
const DATE = /\b\d{4}-\d{2}-\d{2}\b/g;

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word.toLowerCase());
}

/** Lower-case words of a text, with identifiers split: `get_current_weather` and `myTasks` give their parts. */
export function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9']+/)
    .map((word) => word.replace(/^'+|'+$/g, '').replace(/'s$/, ''))
    .filter((word) => word !== '');
}

/** A light stemmer: enough for plurals and -ing/-ed forms to meet their base word. */
export function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(?:ss|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

function contentStemsOf(text: string): string[] {
  const stems: string[] = [];
  for (const word of splitWords(text)) {
    if (isStopWord(word) || WEAK_WORDS.has(word) || word.length < 2) continue;
    stems.push(stem(word));
  }
  stems.push(...operatorsIn(text));
  return [...new Set(stems)];
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
    if ((before !== undefined && /[A-Za-z]/.test(before)) || (after !== undefined && /[A-Za-z]/.test(after) && !isFunctionAt(clean, i + 1))) continue;
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
  const found: NumberMention[] = [];
  const blocked = spansOf(text, DATE);
  const pattern = /(?<![\w.])-?\d+(?:\.\d+)?(?![\w])|\b[a-z]+\b/gi;
  for (const match of text.matchAll(pattern)) {
    const start = match.index;
    const end = start + match[0].length;
    if (blocked.some((span) => start < span.end && end > span.start)) continue;
    const raw = match[0];
    if (/^[a-z]+$/i.test(raw)) {
      const value = NUMBER_WORDS[raw.toLowerCase()];
      if (value !== undefined) found.push({ value, start, end });
      continue;
    }
    // a trailing period belongs to the sentence: `is 12.` gives 12
    const value = Number(raw);
    if (Number.isFinite(value)) found.push({ value, start, end });
  }
  return found;
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
    for (let match = piece.exec(clean); match !== null && piece.lastIndex - start <= MAX_EXPRESSION; match = piece.exec(clean)) {
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
    if (operators > 0 && operands > 0 && /\d/.test(candidate) && (best === undefined || candidate.length > best.length)) best = candidate;
    // a start inside this expression gives a shorter one
    if (end > start) start = end - 1;
  }
  return best;
}

function spansOf(text: string, pattern: RegExp): Array<{ start: number; end: number }> {
  return [...text.matchAll(new RegExp(pattern.source, 'g'))].map((m) => ({ start: m.index, end: m.index + m[0].length }));
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
/** Numbers in a text, written with digits (`52.52`, `-3`) or as words (`three`); not those inside dates or words like `3d6`. */
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
