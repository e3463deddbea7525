/**
 * Filling a tool's arguments, or a URI template's variables, from the words of a message by
 * what the schema asks for: `name: value` pairs, quoted strings, numbers near the parameter's
 * name, enum values mentioned, strings that match the parameter's pattern, dates, arithmetic,
 * and for a lone text parameter the most likely phrase. Pure.
 */
import { compileLinear, type LinearRegExp } from '../../../shared/linear-regexp.js';
import type { InputSchema, JsonSchema } from '../agent-types.js';
import {
  findDates,
  findExpression,
  findNames,
  findNumbers,
  findQuoted,
  isStopWord,
  splitWords,
  stem,
  type NumberMention,
} from './text.js';

export interface FilledArguments {
  args: Record<string, unknown>;
  /** required parameters no value was found for */
  missing: string[];
  /** how many values came from something only this schema asks for: a pair, an enum value, a pattern, a date, an expression, a number beside the parameter's name */
  specific: number;
}

interface Span {
  start: number;
  end: number;
}

const CUE_WORDS = ['about', 'for', 'called', 'named', 'titled', 'on', 'regarding', 'containing', 'with'];
const EXPRESSION_WORDS = /\b(expression|formula|equation|arithmetic|calculation|math)/i;
const DATE_WORDS = /\b(date|day|yyyy-mm-dd)\b/i;
const MAX_PHRASE = 500;
/** How far around a value the parameter's name is looked for. */
const NEAR = 40;

/** The arguments of a tool for a message, as far as the message tells them. `specificOnly` stops after the specific values (for scoring). */
export function fillArguments(
  schema: InputSchema,
  text: string,
  options: { toolWords?: string[]; specificOnly?: boolean } = {},
): FilledArguments {
  const properties = Object.entries(schema.properties ?? {}).filter(([, s]) => s !== null && typeof s === 'object');
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
  );
  const args: Record<string, unknown> = {};
  const used: Span[] = [];
  let specific = 0;
  const take = (name: string, value: unknown, span?: Span, isSpecific = true) => {
    args[name] = value;
    if (span !== undefined) used.push(span);
    if (isSpecific) specific += 1;
  };
  const free = (span: Span) => !used.some((u) => span.start < u.end && span.end > u.start);

  // 1. name: value, name=value
  for (const [name, property] of properties) {
    const pair = findPair(text, name);
    if (pair === undefined) continue;
    const value = coerce(pair.value, property);
    if (value !== undefined) take(name, value, pair);
  }

  // 2. enum values mentioned: first "<param> <value>" (to mi), then in the order they are mentioned
  const enumParams = properties.filter(
    ([name, p]) => !(name in args) && Array.isArray(p.enum) && p.enum.some((v) => typeof v === 'string'),
  );
  const mentions: Array<{ value: string; span: Span }> = [];
  for (const [, property] of enumParams) {
    for (const value of property.enum as unknown[]) {
      if (typeof value !== 'string' || value === '') continue;
      for (const match of text.matchAll(
        new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(value)}(?![\\p{L}\\p{N}_])`, 'giu'),
      )) {
        const span = { start: match.index, end: match.index + match[0].length };
        if (!mentions.some((m) => m.span.start === span.start)) mentions.push({ value, span });
      }
    }
  }
  mentions.sort((a, b) => a.span.start - b.span.start);
  for (const [name, property] of enumParams) {
    const words = splitWords(name).map(stem);
    const direct = mentions.find(
      (m) =>
        free(m.span) &&
        (property.enum as unknown[]).includes(m.value) &&
        words.includes(stem(lastWordBefore(text, m.span.start))),
    );
    if (direct !== undefined) take(name, direct.value, direct.span);
  }
  for (const [name, property] of enumParams) {
    if (name in args) continue;
    // `in` (inches) or `at` only count right after the parameter's name: they are words too
    const next = mentions.find(
      (m) => free(m.span) && (property.enum as unknown[]).includes(m.value) && !isStopWord(m.value),
    );
    if (next !== undefined) take(name, next.value, next.span);
  }

  // 3. strings by their pattern, dates, arithmetic
  for (const [name, property] of properties) {
    if (name in args || !accepts(property, 'string')) continue;
    if (typeof property.pattern === 'string') {
      const match = matchPattern(text, property.pattern, free);
      if (match !== undefined) take(name, match.value, match);
      continue;
    }
    const about = `${name} ${property.description ?? ''}`;
    if (property.format === 'date' || DATE_WORDS.test(splitWords(name).join(' ')) || /yyyy-mm-dd/i.test(about)) {
      const date = findDates(text).find(free);
      if (date !== undefined) take(name, date.value, date);
      continue;
    }
    if (EXPRESSION_WORDS.test(about)) {
      const expression = findExpression(text);
      if (expression !== undefined) {
        const start = text.indexOf(expression);
        take(name, expression, { start, end: start + expression.length });
      }
    }
  }

  // 4. numbers: next to the parameter's name (three days, top 5), then the rest in order for required ones
  const numbers = findNumbers(text).filter(free);
  const numberParams = properties.filter(
    ([name, p]) => !(name in args) && (accepts(p, 'number') || accepts(p, 'integer')),
  );
  for (const [name, property] of numberParams) {
    const near = numbers.find((n) => free(n) && fits(n.value, property) && isNear(text, n, name));
    if (near !== undefined) take(name, near.value, near);
  }
  for (const [name, property] of numberParams) {
    if (name in args || !required.has(name)) continue;
    const next = numbers.find((n) => free(n) && fits(n.value, property));
    if (next !== undefined) take(name, next.value, next, false);
  }
  for (const [name, property] of properties) {
    if (
      name in args ||
      !accepts(property, 'array') ||
      !(accepts(property.items ?? {}, 'number') || accepts(property.items ?? {}, 'integer'))
    )
      continue;
    const items = numbers.filter((n) => free(n) && fits(n.value, property.items ?? {}));
    if (items.length > 0)
      take(
        name,
        items.map((n) => n.value),
        undefined,
        false,
      );
  }

  if (options.specificOnly === true) return { args, missing: [], specific };

  // 5. text: quoted strings in order, then one phrase for a lone text parameter
  const textParams = properties.filter(
    ([name, p]) => !(name in args) && accepts(p, 'string') && !Array.isArray(p.enum) && typeof p.pattern !== 'string',
  );
  const quoted = findQuoted(text).filter(free);
  for (const [name] of textParams) {
    if (!required.has(name) && textParams.length > 1) continue;
    const next = quoted.find(free);
    if (next !== undefined) take(name, next.value, next, false);
  }
  const openText = textParams.filter(([name]) => !(name in args));
  const requiredText = openText.filter(([name]) => required.has(name));
  const lone = requiredText.length === 1 ? requiredText[0] : undefined;
  if (lone !== undefined) {
    const phrase = likelyPhrase(text, options.toolWords ?? [], lone[1]);
    if (phrase !== undefined) take(lone[0], phrase, undefined, false);
  }

  // 6. a required parameter with a default takes it
  for (const [name, property] of properties) {
    if (!(name in args) && required.has(name) && property.default !== undefined) args[name] = property.default;
  }
  const missing = [...required].filter((name) => !(name in args) && properties.some(([n]) => n === name));
  // in the schema's order, as a person would write them
  const ordered = Object.fromEntries(properties.filter(([name]) => name in args).map(([name]) => [name, args[name]]));
  return { args: ordered, missing, specific };
}

/**
 * A URI from a URI template, its variables filled from the message (pairs, values the
 * description lists and the message mentions, dates, quoted strings); undefined when one is unknown.
 * Only simple `{var}` expressions are filled.
 */
export function fillUriTemplate(
  uriTemplate: string,
  description: string | undefined,
  text: string,
): string | undefined {
  return fillTemplate(uriTemplate, description, text)?.uri;
}

/** Like fillUriTemplate, and whether every variable came from something specific (not just a quoted string). */
export function fillTemplate(
  uriTemplate: string,
  description: string | undefined,
  text: string,
): { uri: string; specific: boolean } | undefined {
  const variables = [...uriTemplate.matchAll(/\{([^}]*)\}/g)];
  if (variables.length === 0) return { uri: uriTemplate, specific: false };
  const listed = listedValues(description ?? '');
  const values = new Map<string, string>();
  let specific = true;
  for (const [, expression] of variables) {
    if (expression === undefined || !/^[A-Za-z0-9_]+$/.test(expression)) return undefined;
    if (values.has(expression)) continue;
    const pair = findPair(text, expression);
    const mentioned = listed.find((value) =>
      new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(value)}(?![\\p{L}\\p{N}_])`, 'iu').test(text),
    );
    const date =
      DATE_WORDS.test(splitWords(expression).join(' ')) || /yyyy-mm-dd/i.test(description ?? '')
        ? findDates(text)[0]?.value
        : undefined;
    const value = pair?.value ?? mentioned ?? date ?? findQuoted(text)[0]?.value;
    if (value === undefined || value === '') return undefined;
    if ((pair?.value ?? mentioned ?? date) === undefined) specific = false;
    values.set(expression, value);
  }
  return {
    uri: uriTemplate.replace(/\{([^}]*)\}/g, (_, name: string) => encodeURIComponent(values.get(name) ?? '')),
    specific,
  };
}

/** Values a description lists in parentheses: "Meeting notes by topic (release, onboarding)". */
export function listedValues(description: string): string[] {
  const values: string[] = [];
  for (const match of description.matchAll(/\(([^()]+)\)/g)) {
    const parts = match[1]!.split(/,|\bor\b|\band\b/).map((p) => p.trim().replace(/^(?:such as|e\.g\.)\s+/i, ''));
    if (parts.length < 2) continue;
    for (const part of parts) if (/^[\w.-]{1,40}$/.test(part)) values.push(part);
  }
  return values;
}

function findPair(text: string, name: string): (Span & { value: string }) | undefined {
  const names = [...new Set([name, name.replace(/[_-]+/g, ' ')])].map(escapeRegExp).join('|');
  const pattern = new RegExp(`(?<![\\w])(?:${names})\\s*[:=]\\s*(?:"([^"]*)"|'([^']*)'|([^\\s,;)]+))`, 'i');
  const match = pattern.exec(text);
  if (match === null) return undefined;
  const value = match[1] ?? match[2] ?? (match[3] ?? '').replace(/[.?!]+$/, '');
  // `notes://x` is a URI, not a pair
  if (value.startsWith('//')) return undefined;
  return { value, start: match.index, end: match.index + match[0].length };
}

function coerce(raw: string, schema: JsonSchema): unknown {
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
function accepts(schema: JsonSchema, type: string): boolean {
  const declared = schema.type;
  if (declared === undefined) return type === 'string' && schema.enum === undefined && schema.properties === undefined;
  if (Array.isArray(declared)) return declared.includes(type) || (type === 'integer' && declared.includes('number'));
  return declared === type || (type === 'integer' && declared === 'number');
}

function fits(value: number, schema: JsonSchema): boolean {
  if (schema.type === 'integer' && !Number.isInteger(value)) return false;
  if (typeof schema.minimum === 'number' && value < schema.minimum) return false;
  if (typeof schema.maximum === 'number' && value > schema.maximum) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
  return true;
}

/** "three days", "days: 3", "top 5", "limit of 4": a number beside a word of the parameter's name. */
function isNear(text: string, number: NumberMention, name: string): boolean {
  const words = new Set(splitWords(name).map(stem));
  const after = /^\s*([A-Za-z]+)/.exec(text.slice(number.end, number.end + NEAR))?.[1];
  const before = /([A-Za-z]+)\s*(?:of|:|=|is)?\s*$/.exec(
    text.slice(Math.max(0, number.start - NEAR), number.start),
  )?.[1];
  return (after !== undefined && words.has(stem(after))) || (before !== undefined && words.has(stem(before)));
}

function lastWordBefore(text: string, index: number): string {
  return /([A-Za-z]+)\W*$/.exec(text.slice(Math.max(0, index - NEAR), index))?.[1] ?? '';
}

function matchPattern(
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
 * without stop words and the words that named the tool.
 */
function likelyPhrase(text: string, toolWords: string[], schema: JsonSchema): string | undefined {
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
  const name = findNames(text).find((n) => !toolWords.includes(stem(n.toLowerCase())));
  if (name !== undefined) return name;
  const toolStems = new Set(toolWords);
  for (const cue of CUE_WORDS) {
    const match = new RegExp(`\\b${cue}\\s+(.+?)(?:[.?!;]|$)`, 'i').exec(text);
    if (match === null) continue;
    const words = splitWords(match[1]!).filter((w) => !isStopWord(w) && !toolStems.has(stem(w)));
    if (words.length > 0) return clip(words.join(' '));
  }
  const rest = splitWords(text).filter((w) => !isStopWord(w) && !toolStems.has(stem(w)));
  return rest.length === 0 ? undefined : clip(rest.join(' '));
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
