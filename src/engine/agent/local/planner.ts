/**
 * The local planner: which tools to call and which resources to read for a message, from the
 * words of their names, titles, descriptions and parameters. Word matching, not language
 * understanding: arithmetic asked in words is first written as an expression, then each
 * candidate is scored by the message's words it shares, or words that stand for them
 * (weighted by where they appear and by how rare they are in this server), and only candidates
 * above a threshold are used. Pure.
 */
import type { Catalog, ResourceInfo, ResourceTemplateInfo, ToolInfo } from '../agent-types.js';
import { rewriteArithmetic } from './arithmetic-words.js';
import { fillArguments, fillTemplate, fillUriTemplate } from './arguments.js';
import { contentStems, splitWords, stem } from './text.js';
import { namesOfValue } from './units.js';
import { synonymsOf } from './words.js';

export type Candidate =
  | { kind: 'tool'; key: string; tool: ToolInfo }
  | { kind: 'resource'; key: string; resource: ResourceInfo }
  | { kind: 'template'; key: string; template: ResourceTemplateInfo };

export type PlannedStep =
  /** `text`: the part of the message the arguments come from */
  | { kind: 'tool'; tool: ToolInfo; text: string }
  | { kind: 'resource'; uri: string }
  /** `uri` is undefined when the message does not give the template's variables */
  | { kind: 'template'; template: ResourceTemplateInfo; uri: string | undefined };

export interface Scored {
  candidate: Candidate;
  score: number;
  /** the message's stems it shares */
  matched: string[];
}

/** A message of more parts than this is taken as one request (a list, a text to work on). */
const MAX_CLAUSES = 8;

/** Below this score a candidate is not used: one shared word of a description, or a rare word of a parameter. */
export const MIN_SCORE = 2;

const WEIGHT = { name: 3, description: 2, parameter: 1 } as const;
/** Added for each value (at most two) the message gives that only this candidate's schema asks for: `3d6` for a dice pattern, a date for `{day}`. */
const SPECIFIC_BONUS = 2;
/** A word that stands for a candidate's word counts for less than the word itself. */
const SYNONYM_FACTOR = 0.8;

export interface PlanOptions {
  /** what "today" and "tomorrow" are relative to; without it they are not read */
  now?: Date | undefined;
}

interface Entry {
  candidate: Candidate;
  weights: Map<string, number>;
}

export interface CatalogIndex {
  entries: Entry[];
  /** in how many candidates each stem occurs */
  frequency: Map<string, number>;
}

export function indexCatalog(catalog: Catalog): CatalogIndex {
  const entries: Entry[] = [];
  for (const tool of catalog.tools) {
    const weights = new Map<string, number>();
    add(weights, `${tool.name} ${tool.title ?? ''}`, WEIGHT.name);
    add(weights, tool.description ?? '', WEIGHT.description);
    for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
      // a unit's names too: "miles" meets `mi`
      const enumText = Array.isArray(schema?.enum)
        ? schema.enum.flatMap((v) => (typeof v === 'string' ? namesOfValue(v) : [])).join(' ')
        : '';
      add(
        weights,
        `${name} ${typeof schema?.description === 'string' ? schema.description : ''} ${enumText}`,
        WEIGHT.parameter,
      );
    }
    entries.push({ candidate: { kind: 'tool', key: `tool:${tool.name}`, tool }, weights });
  }
  for (const resource of catalog.resources) {
    const weights = new Map<string, number>();
    add(
      weights,
      `${resource.name} ${resource.title ?? ''} ${resource.uri.replace(/^[a-z][a-z0-9+.-]*:\/\//i, ' ')}`,
      WEIGHT.name,
    );
    add(weights, resource.description ?? '', WEIGHT.description);
    entries.push({ candidate: { kind: 'resource', key: `resource:${resource.uri}`, resource }, weights });
  }
  for (const template of catalog.templates) {
    const weights = new Map<string, number>();
    const literal = template.uriTemplate.replace(/^[a-z][a-z0-9+.-]*:\/\//i, ' ').replace(/\{[^}]*\}/g, ' ');
    add(weights, `${template.name} ${template.title ?? ''} ${literal}`, WEIGHT.name);
    add(weights, template.description ?? '', WEIGHT.description);
    add(
      weights,
      [...template.uriTemplate.matchAll(/\{[^A-Za-z_]*([A-Za-z0-9_]+)/g)].map((m) => m[1]).join(' '),
      WEIGHT.parameter,
    );
    entries.push({ candidate: { kind: 'template', key: `template:${template.uriTemplate}`, template }, weights });
  }
  const frequency = new Map<string, number>();
  for (const entry of entries)
    for (const stem of entry.weights.keys()) frequency.set(stem, (frequency.get(stem) ?? 0) + 1);
  return { entries, frequency };
}

function add(weights: Map<string, number>, text: string, weight: number): void {
  for (const stem of contentStems(text)) weights.set(stem, Math.max(weights.get(stem) ?? 0, weight));
}

/** Every candidate with its score for a text, best first (ties keep the server's order). */
export function scoreCandidates(index: CatalogIndex, text: string, options: PlanOptions = {}): Scored[] {
  const stems = contentStems(text).filter((s) => !/^\d+(?:\.\d+)?$/.test(s));
  const total = index.entries.length;
  // rarer words tell candidates apart better: 1 for a word every candidate has, more for rarer ones
  const value = (entry: Entry, word: string) =>
    (entry.weights.get(word) ?? 0) * (1 + Math.log(total / (index.frequency.get(word) ?? 1)));
  const scored = index.entries.map((entry, order) => {
    let score = 0;
    const matched: string[] = [];
    for (const stem of stems) {
      // the word itself, or else the best of the words that stand for it: each word of the message counts once
      let best = value(entry, stem);
      let word = stem;
      if (best === 0) {
        for (const synonym of synonymsOf(stem)) {
          const worth = value(entry, synonym) * SYNONYM_FACTOR;
          if (worth > best) [best, word] = [worth, synonym];
        }
      }
      if (best === 0) continue;
      score += best;
      matched.push(word);
    }
    score += SPECIFIC_BONUS * Math.min(2, specificValues(entry.candidate, text, options.now));
    return { candidate: entry.candidate, score: Math.round(score * 100) / 100, matched, order };
  });
  return scored.sort((a, b) => b.score - a.score || a.order - b.order).map(({ order: _order, ...rest }) => rest);
}

/**
 * The steps for a message, its arithmetic in words read as an expression ("2 plus 3" is `2 + 3`):
 * the tools and resources it names outright; else, when it asks for
 * several things (clauses joined by "and", "then", or several sentences) that match different
 * candidates, the best of each; else the single best candidate above the threshold; else nothing.
 */
export function planRequest(
  catalog: Catalog,
  request: string,
  index = indexCatalog(catalog),
  options: PlanOptions = {},
): PlannedStep[] {
  const message = rewriteArithmetic(request);
  const named = namedInMessage(catalog, message, options.now);
  if (named.length > 0) return named;

  const clauses = splitClauses(message);
  if (clauses.length > 1 && clauses.length <= MAX_CLAUSES) {
    const picks: Array<{ candidate: Candidate; text: string }> = [];
    for (const clause of clauses) {
      const best = scoreCandidates(index, clause, options)[0];
      if (best !== undefined && best.score >= MIN_SCORE && !picks.some((p) => p.candidate.key === best.candidate.key))
        picks.push({ candidate: best.candidate, text: clause });
    }
    if (picks.length > 1) return picks.map((p) => toStep(p.candidate, p.text, options.now));
  }
  const best = scoreCandidates(index, message, options)[0];
  if (best === undefined || best.score < MIN_SCORE) return [];
  return [toStep(best.candidate, message, options.now)];
}

/** The stems of a tool's name, title and description: the words that chose the tool, not its arguments. */
export function toolStems(tool: ToolInfo): string[] {
  return [...splitWords(`${tool.name} ${tool.title ?? ''}`).map(stem), ...contentStems(tool.description ?? '')];
}

function specificValues(candidate: Candidate, text: string, now: Date | undefined): number {
  if (candidate.kind === 'tool')
    return fillArguments(candidate.tool.inputSchema, text, { specificOnly: true, now }).specific;
  if (candidate.kind === 'template')
    return fillTemplate(candidate.template.uriTemplate, candidate.template.description, text, now)?.specific === true
      ? 1
      : 0;
  return 0;
}

function toStep(candidate: Candidate, text: string, now: Date | undefined): PlannedStep {
  switch (candidate.kind) {
    case 'tool':
      return { kind: 'tool', tool: candidate.tool, text };
    case 'resource':
      return { kind: 'resource', uri: candidate.resource.uri };
    case 'template':
      return {
        kind: 'template',
        template: candidate.template,
        uri: fillUriTemplate(candidate.template.uriTemplate, candidate.template.description, text, now),
      };
  }
}

/**
 * Tools named outright, by their identifier (`get_forecast`, `myTasks`) or as words run
 * together (`who am I` for `whoami`), and resource URIs written out; in the order the message
 * names them. A plain-word name (`convert`) is left to scoring, where its name weighs most.
 */
function namedInMessage(catalog: Catalog, message: string, now: Date | undefined): PlannedStep[] {
  const found: Array<{ at: number; step: PlannedStep }> = [];
  const words = [...message.matchAll(/[A-Za-z0-9]+/g)];
  for (const tool of catalog.tools) {
    let at = -1;
    if (/[_-]|[a-z][A-Z]|\d/.test(tool.name))
      at = message.search(new RegExp(`(?<![\\w-])${escapeRegExp(tool.name)}(?![\\w-])`));
    if (at === -1) at = wordsRunTogether(words, tool.name.toLowerCase());
    if (at !== -1) found.push({ at, step: { kind: 'tool', tool, text: message } });
  }
  for (const match of message.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi)) {
    const uri = match[0].replace(/[.,;:!?)]+$/, '');
    if (catalog.resources.some((r) => r.uri === uri)) {
      found.push({ at: match.index, step: { kind: 'resource', uri } });
      continue;
    }
    const template = catalog.templates.find((t) => matchesTemplate(t.uriTemplate, uri));
    if (template !== undefined) found.push({ at: match.index, step: { kind: 'template', template, uri } });
  }
  found.sort((a, b) => a.at - b.at);
  // Each named tool takes its arguments from its own clause when that gives them all.
  const clauses = clauseSpans(message);
  for (const f of found) {
    if (f.step.kind !== 'tool') continue;
    const clause = clauses.find((c) => f.at >= c.start && f.at < c.end);
    const text = clause === undefined ? message : message.slice(clause.start, clause.end);
    if (fillArguments(f.step.tool.inputSchema, text, { toolWords: toolStems(f.step.tool), now }).missing.length === 0)
      f.step = { ...f.step, text };
  }
  return found.map((f) => f.step);
}

/** Where a tool's name appears as two to four words run together (`who am I` for `whoami`). */
function wordsRunTogether(words: RegExpExecArray[], name: string): number {
  if (!/^[a-z0-9]+$/.test(name) || name.length < 4) return -1;
  for (let i = 0; i < words.length; i += 1) {
    let joined = '';
    for (let j = i; j < Math.min(words.length, i + 4); j += 1) {
      joined += words[j]![0].toLowerCase();
      if (joined.length > name.length) break;
      if (joined === name && j > i) return words[i]!.index;
    }
  }
  return -1;
}

/** Whether a URI fits a template whose variables are simple `{name}` segments. */
export function matchesTemplate(uriTemplate: string, uri: string): boolean {
  const pattern = uriTemplate
    .split(/(\{[^}]*\})/)
    .map((part) => (part.startsWith('{') ? '[^/?#]+' : escapeRegExp(part)))
    .join('');
  return new RegExp(`^${pattern}$`).test(uri);
}

/**
 * The parts of a message that ask for different things: sentences, and clauses joined by
 * "and", "then", "also" or ";". Quoted text and what follows a colon are data, never split.
 */
export function splitClauses(message: string): string[] {
  return clauseSpans(message)
    .map((span) => message.slice(span.start, span.end).trim())
    .filter((clause) => clause !== '');
}

function clauseSpans(message: string): Array<{ start: number; end: number }> {
  let masked = message.replace(/"[^"]*"|“[^”]*”|‘[^’]*’/g, (m) => '_'.repeat(m.length));
  const colon = /:\s/.exec(masked);
  if (colon !== null) masked = masked.slice(0, colon.index + 1) + '_'.repeat(masked.length - colon.index - 1);
  const separator =
    /(?<=[.?!])\s+(?=\S)|\s*;\s*(?:(?:and )?then\s+|also\s+)?|\s+(?:and then|and also|then|also|and|plus)\s+/gi;
  const spans: Array<{ start: number; end: number }> = [];
  let start = 0;
  for (const match of masked.matchAll(separator)) {
    spans.push({ start, end: match.index });
    start = match.index + match[0].length;
  }
  spans.push({ start, end: message.length });
  return spans;
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
