/**
 * The small readings of a message that filling arguments is built from: a `name: value` pair,
 * a raw value coerced to a schema's type, whether a number fits a schema or sits near a
 * parameter's name, a match of a parameter's pattern, and the most likely free-text phrase.
 */
import { compileLinear, type LinearRegExp } from '../../../shared/linear-regexp.js';
import type { JsonSchema } from '../agent-types.js';
import { findNames, isStopWord, splitWords, stem, type NumberMention } from './text.js';
import { isTimeWord } from './when.js';

const CUE_WORDS = ['about', 'for', 'called', 'named', 'titled', 'on', 'regarding', 'containing', 'with'];
const MAX_PHRASE = 500;
/** How far around a value the parameter's name is looked for. */
const NEAR = 40;

export interface Span {
  start: number;
  end: number;
}

export function findPair(text: string, name: string): (Span & { value: string }) | undefined {
  const names = [...new Set([name, name.replace(/[_-]+/g, ' ')])].map(escapeRegExp).join('|');
  const pattern = new RegExp(`(?<![\\w])(?:${names})\\s*[:=]\\s*(?:"([^"]*)"|'([^']*)'|([^\\s,;)]+))`, 'i');
  const match = pattern.exec(text);
  if (match === null) return undefined;
  const value = match[1] ?? match[2] ?? (match[3] ?? '').replace(/[.?!]+$/, '');
  // `notes://x` is a URI, not a pair
  if (value.startsWith('//')) return undefined;
  return { value, start: match.index, end: match.index + match[0].length };
}

export function coerce(raw: string, schema: JsonSchema): unknown {
  if (accepts(schema, 'integer') && /^-?\d+$/.test(raw)) return fits(Number(raw), schema) ? Number(raw) : undefined;
  if (accepts(schema, 'number') && /^-?\d+(?:\.\d+)?$/.test(raw))
    return fits(Number(raw), schema) ? Number(raw) : undefined;
  if (accepts(schema, 'boolean') && /^(true|false|yes|no)$/i.test(raw)) return /^(true|yes)$/i.test(raw);
  if (Array.isArray(schema.enum))
    return schema.enum.find((v) => typeof v === 'string' && v.toLowerCase() === raw.toLowerCase());
  if (accepts(schema, 'string')) return raw;
  return undefined;
}

/** Whether a schema accepts a JSON type (a schema without `type` accepts anything). */
export function accepts(schema: JsonSchema, type: string): boolean {
  const declared = schema.type;
  if (declared === undefined) return type === 'string' && schema.enum === undefined && schema.properties === undefined;
  if (Array.isArray(declared)) return declared.includes(type) || (type === 'integer' && declared.includes('number'));
  return declared === type || (type === 'integer' && declared === 'number');
}

export function fits(value: number, schema: JsonSchema): boolean {
  if (schema.type === 'integer' && !Number.isInteger(value)) return false;
  if (typeof schema.minimum === 'number' && value < schema.minimum) return false;
  if (typeof schema.maximum === 'number' && value > schema.maximum) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
  return true;
}

/** "three days", "days: 3", "top 5", "limit of 4": a number beside a word of the parameter's name. */
export function isNear(text: string, number: NumberMention, name: string): boolean {
  const words = new Set(splitWords(name).map(stem));
  const after = /^\s*([A-Za-z]+)/.exec(text.slice(number.end, number.end + NEAR))?.[1];
  const before = /([A-Za-z]+)\s*(?:of|:|=|is)?\s*$/.exec(
    text.slice(Math.max(0, number.start - NEAR), number.start),
  )?.[1];
  return (after !== undefined && words.has(stem(after))) || (before !== undefined && words.has(stem(before)));
}

export function lastWordBefore(text: string, index: number): string {
  return /([A-Za-z]+)\W*$/.exec(text.slice(Math.max(0, index - NEAR), index))?.[1] ?? '';
}

export function matchPattern(
  text: string,
  pattern: string,
  free: (span: Span) => boolean,
): (Span & { value: string }) | undefined {
  // the definition's pattern, on the linear-time engine: no message can make it backtrack for long
  let regex: LinearRegExp;
  try {
    regex = compileLinear(pattern, 'u');
  } catch {
    return undefined;
  }
  for (const match of text.matchAll(/[^\s,;!?"'()]+/g)) {
    const value = match[0].replace(/[.:]+$/, '');
    const span = { start: match.index, end: match.index + value.length };
    if (value !== '' && free(span) && regex.test(value)) return { value, ...span };
  }
  return undefined;
}

/**
 * The phrase a lone text parameter most likely wants: the text after a colon, a capitalised
 * name, the words after a cue such as "about" or "for", or else the message's own words
 * without stop words, words of time ("tomorrow") and the words that named the tool.
 */
export function likelyPhrase(text: string, toolWords: string[], schema: JsonSchema): string | undefined {
  const clip = (value: string) => {
    const trimmed = value
      .trim()
      .replace(/^["'“‘]|["'”’]$/g, '')
      .replace(/[\s.?!,;]+$/, '')
      .trim();
    const limited =
      typeof schema.maxLength === 'number' ? trimmed.slice(0, schema.maxLength) : trimmed.slice(0, MAX_PHRASE);
    return limited === '' ? undefined : limited;
  };
  // `notes://x` has no space after its colon, so it is not a colon of the sentence
  const colon = /:\s+(\S[\s\S]*)$/.exec(text);
  if (colon !== null) {
    const value = clip(colon[1]!);
    if (value !== undefined) return value;
  }
  const name = findNames(text).find((n) => !toolWords.includes(stem(n.toLowerCase())) && !isTimeWord(n));
  if (name !== undefined) return name;
  const toolStems = new Set(toolWords);
  for (const cue of CUE_WORDS) {
    const match = new RegExp(`\\b${cue}\\s+(.+?)(?:[.?!;]|$)`, 'i').exec(text);
    if (match === null) continue;
    const words = splitWords(match[1]!).filter((w) => !isStopWord(w) && !isTimeWord(w) && !toolStems.has(stem(w)));
    if (words.length > 0) return clip(words.join(' '));
  }
  const rest = splitWords(text).filter((w) => !isStopWord(w) && !isTimeWord(w) && !toolStems.has(stem(w)));
  return rest.length === 0 ? undefined : clip(rest.join(' '));
}

export function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
