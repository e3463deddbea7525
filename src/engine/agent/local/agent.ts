/**
 * `mcpctl-local`: the offline agent. It plans from the message and the server's metadata
 * (planner.ts), fills each tool's arguments from the message or from what earlier calls
 * returned, calls a tool that can supply a missing value first (a place's coordinates before
 * its forecast), and writes a reply that quotes what it got. Deterministic for a given day
 * ("tomorrow" is read against the time of the run); no network.
 */
import type { Agent, Catalog, JsonSchema, ToolInfo, ToolOutcome } from '../agent-types.js';
import { rewriteArithmetic } from './arithmetic-words.js';
import { fillArguments } from './arguments.js';
import { indexCatalog, planRequest, toolStems } from './planner.js';
import { composeReply, type Step } from './reply.js';
import { contentStems, findNumbers, splitWords, stem } from './text.js';

// Words that name the same value: a tool that returns coordinates supplies a latitude.
const RELATED: Record<string, string[]> = {
  latitude: ['coordinat', 'lat', 'position', 'geocod'],
  longitude: ['coordinat', 'lon', 'lng', 'position', 'geocod'],
  lat: ['coordinat', 'latitud'],
  lon: ['coordinat', 'longitud'],
  lng: ['coordinat', 'longitud'],
};

/** The planner reads this much of a message: enough for any request, and it keeps a run fast. */
export const READ_CHARS = 4000;

export const runLocalAgent: Agent = (run) => localAgentAt(new Date())(run);

/** The agent for a run at a given time: "today" and "tomorrow" are read against it. */
export const localAgentAt =
  (now: Date): Agent =>
  async ({ message: whole, session, limits, signal }) => {
    const message = rewriteArithmetic(whole.slice(0, READ_CHARS));
    const catalog = session.catalog;
    const plan = planRequest(catalog, message, indexCatalog(catalog), { now });
    const steps: Step[] = [];
    const results: unknown[] = [];
    const called = new Set<string>();
    let budget = limits.maxToolCalls;

    let limited = false;
    const overBudget = (): boolean => {
      if (budget > 0) return false;
      if (!limited) steps.push({ kind: 'limit', limit: limits.maxToolCalls });
      limited = true;
      return true;
    };

    const call = async (tool: ToolInfo, args: Record<string, unknown>): Promise<ToolOutcome | undefined> => {
      if (overBudget() || signal.aborted) return undefined;
      budget -= 1;
      called.add(tool.name);
      const outcome = await session.callTool(tool.name, args);
      steps.push({ kind: 'call', tool: tool.name, args, outcome });
      if (outcome.ok && outcome.data !== undefined) results.push(outcome.data);
      return outcome;
    };

    const prepare = (tool: ToolInfo, text: string) => {
      const filled = fillArguments(tool.inputSchema, text, { toolWords: toolStems(tool), now });
      const found: Record<string, unknown> = {};
      for (const name of filled.missing) {
        const value = findInResults(results, name, tool.inputSchema.properties?.[name]?.type);
        if (value !== undefined) found[name] = value;
      }
      // in the schema's order, like the arguments taken from the message
      const order = Object.keys(tool.inputSchema.properties ?? {});
      const args = Object.fromEntries(
        order
          .filter((name) => name in filled.args || name in found)
          .map((name) => [name, filled.args[name] ?? found[name]]),
      );
      return { args, missing: filled.missing.filter((name) => !(name in found)) };
    };

    for (const step of plan) {
      if (signal.aborted || overBudget()) break;
      if (step.kind === 'resource' || step.kind === 'template') {
        if (step.uri === undefined) {
          const template = step.kind === 'template' ? step.template.uriTemplate : '';
          steps.push({ kind: 'needs-uri', template });
          session.noteUnmet(
            template,
            [...template.matchAll(/\{[^A-Za-z_]*([A-Za-z0-9_]+)/g)].map((m) => m[1]!),
          );
          continue;
        }
        budget -= 1;
        steps.push({ kind: 'read', uri: step.uri, outcome: await session.readResource(step.uri) });
        continue;
      }
      let filled = prepare(step.tool, step.text);
      if (filled.missing.length > 0) {
        const provider = findProvider(catalog, step.tool, filled.missing, message, called, now);
        if (provider !== undefined) {
          await call(provider.tool, provider.args);
          filled = prepare(step.tool, step.text);
        }
      }
      if (filled.missing.length > 0) {
        const unmapped = isUnmapped(catalog, step.tool, filled.missing, message);
        steps.push({ kind: unmapped ? 'unmapped' : 'needs', tool: step.tool.name, missing: filled.missing });
        session.noteUnmet(step.tool.name, filled.missing, unmapped);
        continue;
      }
      await call(step.tool, filled.args);
    }
    if (signal.aborted) steps.push({ kind: 'stopped' });
    return composeReply(steps);
  };

/**
 * Another tool that can supply the missing values: its name, description or output schema
 * mention them (or a related word), and the message gives all its own required arguments.
 */
function findProvider(
  catalog: Catalog,
  tool: ToolInfo,
  missing: string[],
  message: string,
  called: Set<string>,
  now: Date,
): { tool: ToolInfo; args: Record<string, unknown> } | undefined {
  let best: { tool: ToolInfo; args: Record<string, unknown>; covers: number } | undefined;
  for (const other of catalog.tools) {
    if (other.name === tool.name || called.has(other.name)) continue;
    const covers = covered(other, missing);
    if (covers === 0 || (best !== undefined && covers <= best.covers)) continue;
    // the words that chose the tool served are not the provider's argument either ("weather in berlin")
    const toolWords = [...toolStems(other), ...toolStems(tool)];
    const filled = fillArguments(other.inputSchema, message, { toolWords, now });
    if (filled.missing.length > 0) continue;
    best = { tool: other, args: filled.args, covers };
  }
  return best === undefined ? undefined : { tool: best.tool, args: best.args };
}

/** How many of the missing values a tool's name, description or output schema mentions (or a related word). */
function covered(tool: ToolInfo, missing: string[]): number {
  const about = new Set(
    contentStems(
      `${tool.name} ${tool.title ?? ''} ${tool.description ?? ''} ${Object.keys(tool.outputSchema?.properties ?? {}).join(' ')}`,
    ),
  );
  return missing.filter((name) => {
    const words = [stem(name), ...splitWords(name).map(stem), ...(RELATED[name.toLowerCase()] ?? [])];
    return words.some((w) => about.has(w));
  }).length;
}

/**
 * Whether values a tool lacks are the planner's failure to read the request rather than the
 * server's: a choice a person states (an enum value, yes or no), a number while the message has
 * numbers, or a value another tool of the server returns. Otherwise nothing on the server gives
 * it (coordinates with no geocoder).
 */
function isUnmapped(catalog: Catalog, tool: ToolInfo, missing: string[], message: string): boolean {
  const schemaOf = (name: string): JsonSchema => tool.inputSchema.properties?.[name] ?? {};
  const types = (name: string): unknown[] => {
    const type = schemaOf(name).type;
    return Array.isArray(type) ? type : [type];
  };
  if (missing.some((name) => Array.isArray(schemaOf(name).enum) || types(name).includes('boolean'))) return true;
  const numeric = missing.some((name) => types(name).includes('number') || types(name).includes('integer'));
  if (numeric && findNumbers(message).length > 0) return true;
  // a tool that returns them, not one that takes them too (the current weather at a latitude)
  return catalog.tools.some(
    (other) =>
      other.name !== tool.name &&
      !missing.some((name) => other.inputSchema.required?.includes(name)) &&
      covered(other, missing) > 0,
  );
}

/** A value named `name` in what earlier calls returned (the first match, breadth first), of the type the parameter wants. */
export function findInResults(results: unknown[], name: string, type: unknown): unknown {
  const wanted = name.toLowerCase();
  const related = new Set([wanted, ...(RELATED[wanted] ?? []).filter((w) => w.length <= 3)]);
  const queue: Array<{ value: unknown; depth: number }> = results.map((value) => ({ value, depth: 0 }));
  for (let index = 0; index < queue.length && index < 10_000; index += 1) {
    const { value, depth } = queue[index]!;
    if (depth > 8 || value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) queue.push({ value: item, depth: depth + 1 });
      continue;
    }
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      if (related.has(key.toLowerCase())) {
        const coerced = coerceTo(inner, type);
        if (coerced !== undefined) return coerced;
      }
    }
    for (const inner of Object.values(value as Record<string, unknown>)) queue.push({ value: inner, depth: depth + 1 });
  }
  return undefined;
}

function coerceTo(value: unknown, type: unknown): unknown {
  const types = Array.isArray(type) ? (type as unknown[]) : [type];
  if (types.includes('number') || types.includes('integer')) {
    const number =
      typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    if (!Number.isFinite(number)) return undefined;
    return types.includes('integer') && !types.includes('number') && !Number.isInteger(number) ? undefined : number;
  }
  if (types.includes('string'))
    return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
  return value;
}
