/**
 * Filling a tool's arguments, or a URI template's variables, from the words of a message by
 * what the schema asks for: `name: value` pairs, quoted strings, numbers near the parameter's
 * name, enum values mentioned, strings that match the parameter's pattern, dates, arithmetic,
 * and for a lone text parameter the most likely phrase. Pure.
 */
import type { InputSchema, JsonSchema } from '../agent-types.js';
import {
  accepts,
  coerce,
  escapeRegExp,
  findPair,
  fits,
  isNear,
  lastWordBefore,
  likelyPhrase,
  matchPattern,
  type Span,
} from './argument-values.js';
import { findDates, findExpression, findNumbers, findQuoted, isStopWord, splitWords, stem } from './text.js';
import { namesOfValue, roleOf, roleOfCue } from './units.js';
import { dateFrom, findTimes } from './when.js';

export interface FilledArguments {
  args: Record<string, unknown>;
  /** required parameters no value was found for */
  missing: string[];
  /** how many values came from something only this schema asks for: a pair, an enum value, a pattern, a date, an expression, a number beside the parameter's name */
  specific: number;
}

const EXPRESSION_WORDS = /\b(expression|formula|equation|arithmetic|calculation|math)/i;
const DATE_WORDS = /\b(date|day|yyyy-mm-dd)\b/i;

export interface FillOptions {
  /** the stems of the words that chose the tool: not taken as its text arguments */
  toolWords?: string[];
  /** stop after the specific values (for scoring) */
  specificOnly?: boolean;
  /** what "today" and "tomorrow" are relative to; without it they are not read */
  now?: Date | undefined;
}

/** The arguments of a tool for a message, as far as the message tells them. */
export function fillArguments(schema: InputSchema, text: string, options: FillOptions = {}): FilledArguments {
  const fill = startFilling(schema, text, options.toolWords ?? [], options.now);
  for (const strategy of SPECIFIC_STRATEGIES) strategy(fill);
  if (options.specificOnly === true) return { args: fill.args, missing: [], specific: fill.specific };
  for (const strategy of GENERAL_STRATEGIES) strategy(fill);
  const { args, properties, required } = fill;
  const missing = [...required].filter((name) => !(name in args) && properties.some(([n]) => n === name));
  // in the schema's order, as a person would write them
  const ordered = Object.fromEntries(properties.filter(([name]) => name in args).map(([name]) => [name, args[name]]));
  return { args: ordered, missing, specific: fill.specific };
}

/** Arguments being filled: what is found so far, and which parts of the message are taken. */
interface Filling {
  text: string;
  toolWords: string[];
  now: Date | undefined;
  properties: Array<[string, JsonSchema]>;
  required: Set<string>;
  args: Record<string, unknown>;
  specific: number;
  take: (name: string, value: unknown, span?: Span, isSpecific?: boolean) => void;
  /** the span overlaps nothing taken yet */
  free: (span: Span) => boolean;
}

/** One way of finding values; it fills what it finds into `fill`. */
type Strategy = (fill: Filling) => void;

function startFilling(schema: InputSchema, text: string, toolWords: string[], now: Date | undefined): Filling {
  const properties = Object.entries(schema.properties ?? {}).filter(([, s]) => s !== null && typeof s === 'object');
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
  );
  const used: Span[] = [];
  const fill: Filling = {
    text,
    toolWords,
    now,
    properties,
    required,
    args: {},
    specific: 0,
    take: (name, value, span, isSpecific = true) => {
      fill.args[name] = value;
      if (span !== undefined) used.push(span);
      if (isSpecific) fill.specific += 1;
    },
    free: (span) => !used.some((u) => span.start < u.end && span.end > u.start),
  };
  return fill;
}

/** name: value, name=value */
const takePairs: Strategy = ({ text, properties, take }) => {
  for (const [name, property] of properties) {
    const pair = findPair(text, name);
    if (pair === undefined) continue;
    const value = coerce(pair.value, property);
    if (value !== undefined) take(name, value, pair);
  }
};

/**
 * Enum values mentioned, by the value or, for a unit, by its name ("miles" for `mi`): first
 * "<param> <value>" (to mi); then by the role a unit plays, the amount's own unit (10 miles)
 * being the one converted from and one after "to", "into" or "in" the one converted to; then in
 * the order they are mentioned.
 */
const takeEnumValues: Strategy = ({ text, properties, args, take, free }) => {
  const enumParams = properties.filter(
    ([name, p]) => !(name in args) && Array.isArray(p.enum) && p.enum.some((v) => typeof v === 'string'),
  );
  const mentions = enumMentions(text, enumParams);
  const offered = (property: JsonSchema, m: EnumMention) =>
    free(m.span) && (property.enum as unknown[]).includes(m.value);
  for (const [name, property] of enumParams) {
    const words = splitWords(name).map(stem);
    const direct = mentions.find(
      (m) => offered(property, m) && words.includes(stem(lastWordBefore(text, m.span.start))),
    );
    if (direct !== undefined) take(name, direct.value, direct.span);
  }
  for (const [name, property] of enumParams) {
    const role = roleOf(name, property.description);
    if (name in args || role === undefined) continue;
    const cast = mentions.find((m) => offered(property, m) && !isStopWord(m.word) && roleInText(text, m.span) === role);
    if (cast !== undefined) take(name, cast.value, cast.span);
  }
  for (const [name, property] of enumParams) {
    if (name in args) continue;
    // `in` (inches) or `at` only count right after the parameter's name: they are words too
    const next = mentions.find((m) => offered(property, m) && !isStopWord(m.word));
    if (next !== undefined) take(name, next.value, next.span);
  }
};

interface EnumMention {
  value: string;
  /** the words the message wrote it with */
  word: string;
  span: Span;
}

/** Where the message mentions a value of the parameters' enums, in the order it does. */
function enumMentions(text: string, enumParams: Array<[string, JsonSchema]>): EnumMention[] {
  const mentions: EnumMention[] = [];
  for (const [, property] of enumParams) {
    for (const value of property.enum as unknown[]) {
      if (typeof value !== 'string' || value === '') continue;
      for (const name of namesOfValue(value)) {
        const pattern = new RegExp(
          `(?<![\\p{L}\\p{N}_])${escapeRegExp(name).replace(/ /g, '[\\s-]+')}(?![\\p{L}\\p{N}_])`,
          'giu',
        );
        for (const match of text.matchAll(pattern)) {
          const span = { start: match.index, end: match.index + match[0].length };
          if (!mentions.some((m) => m.span.start < span.end && m.span.end > span.start))
            mentions.push({ value, word: match[0], span });
        }
      }
    }
  }
  return mentions.sort((a, b) => a.span.start - b.span.start);
}

/** The role the words before a unit give it: a number (the amount's unit), or "from", "to", "in". */
function roleInText(text: string, span: Span): 'source' | 'target' | undefined {
  const amount = findNumbers(text).some(
    (n) => n.end <= span.start && /^\s*(?:degrees?\s+)?$/i.test(text.slice(n.end, span.start)),
  );
  if (amount) return 'source';
  return roleOfCue(lastWordBefore(text, span.start));
}

/** Strings by their pattern, dates (written out, or "tomorrow" and the like), arithmetic. */
const takeShapedStrings: Strategy = ({ text, now, properties, args, take, free }) => {
  for (const [name, property] of properties) {
    if (name in args || !accepts(property, 'string')) continue;
    if (typeof property.pattern === 'string') {
      const match = matchPattern(text, property.pattern, free);
      if (match !== undefined) take(name, match.value, match);
      continue;
    }
    const about = `${name} ${property.description ?? ''}`;
    if (property.format === 'date' || DATE_WORDS.test(splitWords(name).join(' ')) || /yyyy-mm-dd/i.test(about)) {
      const date = findDates(text).find(free) ?? relativeDates(text, now).find(free);
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
};

/** The dates of the days a message names relative to now ("tomorrow"), each its first day. */
function relativeDates(text: string, now: Date | undefined): Array<Span & { value: string }> {
  if (now === undefined) return [];
  return findTimes(text, now).map((time) => ({ start: time.start, end: time.end, value: dateFrom(now, time.first) }));
}

/**
 * A number of days (a parameter named `days`, or described as days) from the days a message
 * names relative to now: through tomorrow is 2, through Sunday for "this weekend" on a Thursday 4.
 */
const takeDays: Strategy = ({ text, now, properties, args, take, free }) => {
  if (now === undefined) return;
  const times = findTimes(text, now).filter((time) => time.last >= 0 && free(time));
  if (times.length === 0) return;
  for (const [name, property] of properties) {
    if (name in args || !(accepts(property, 'integer') || accepts(property, 'number'))) continue;
    const about = splitWords(name).map(stem).includes('day') || /\bdays\b/i.test(String(property.description ?? ''));
    if (!about) continue;
    const days = Math.max(...times.map((time) => time.last)) + 1;
    if (fits(days, property)) take(name, days, times[0]);
  }
};

/** Numbers: next to the parameter's name (three days, top 5), then the rest in order for required ones, then lists. */
const takeNumbers: Strategy = ({ text, properties, required, args, take, free }) => {
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
    const items = property.items ?? {};
    if (name in args || !accepts(property, 'array') || !(accepts(items, 'number') || accepts(items, 'integer')))
      continue;
    const found = numbers.filter((n) => free(n) && fits(n.value, items));
    if (found.length > 0)
      take(
        name,
        found.map((n) => n.value),
        undefined,
        false,
      );
  }
};

/** Text: quoted strings in order, then one phrase for a lone text parameter. */
const takeText: Strategy = ({ text, toolWords, properties, required, args, take, free }) => {
  const textParams = properties.filter(
    ([name, p]) => !(name in args) && accepts(p, 'string') && !Array.isArray(p.enum) && typeof p.pattern !== 'string',
  );
  const quoted = findQuoted(text).filter(free);
  for (const [name] of textParams) {
    if (!required.has(name) && textParams.length > 1) continue;
    const next = quoted.find(free);
    if (next !== undefined) take(name, next.value, next, false);
  }
  const requiredText = textParams.filter(([name]) => !(name in args) && required.has(name));
  const lone = requiredText.length === 1 ? requiredText[0] : undefined;
  if (lone === undefined) return;
  const phrase = likelyPhrase(text, toolWords, lone[1]);
  if (phrase !== undefined) take(lone[0], phrase, undefined, false);
};

/** A required parameter with a default takes it. */
const takeDefaults: Strategy = ({ properties, required, args }) => {
  for (const [name, property] of properties) {
    if (!(name in args) && required.has(name) && property.default !== undefined) args[name] = property.default;
  }
};

/** Values from something only this schema asks for (what scoring counts), in the order they are tried. */
const SPECIFIC_STRATEGIES: readonly Strategy[] = [takePairs, takeEnumValues, takeShapedStrings, takeDays, takeNumbers];
/** What fills the rest when a call is being made. */
const GENERAL_STRATEGIES: readonly Strategy[] = [takeText, takeDefaults];

/**
 * A URI from a URI template, its variables filled from the message (pairs, values the
 * description lists and the message mentions, dates, quoted strings); undefined when one is unknown.
 * Only simple `{var}` expressions are filled.
 */
export function fillUriTemplate(
  uriTemplate: string,
  description: string | undefined,
  text: string,
  now?: Date,
): string | undefined {
  return fillTemplate(uriTemplate, description, text, now)?.uri;
}

/** Like fillUriTemplate, and whether every variable came from something specific (not just a quoted string). */
export function fillTemplate(
  uriTemplate: string,
  description: string | undefined,
  text: string,
  now?: Date,
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
        ? (findDates(text)[0]?.value ?? relativeDates(text, now)[0]?.value)
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
