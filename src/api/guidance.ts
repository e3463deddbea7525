/**
 * Guidance for a test run: the spec's success-rate band, and the typical causes of a poor result
 * that apply to *this* run, each naming the tools and calls it is about. A pure function of the
 * run (calls, reads, reply), the server's tools, the case's expected tools and the agent's own
 * account of what it could not call. The engine computes it for `POST /v1/test`; the CLI computes
 * the same when a service sends none. docs/api.md describes every cause.
 */
import { CLOSE, compareDescriptions, NEAR_IDENTICAL, quoteWords } from '../definition/descriptions.js';

/** Success-rate bands of the spec. */
export const SUCCESS_BANDS = [
  { min: 1, label: 'all tool calls worked', level: 'ok' },
  { min: 0.8, label: 'mostly successful', level: 'ok' },
  { min: 0.5, label: 'some failures', level: 'warn' },
  { min: 0, label: 'major issues', level: 'bad' },
] as const;
export type SuccessBand = (typeof SUCCESS_BANDS)[number];
export type BandLabel = SuccessBand['label'];
export const BAND_LABELS = SUCCESS_BANDS.map((band) => band.label) as unknown as readonly [BandLabel, ...BandLabel[]];

/** The spec's guidance band for a success rate. The spec leaves 0.7–0.8 and 0.9–1.0 between bands: they fall to the lower one. */
export function classifySuccessRate(rate: number): SuccessBand {
  for (const band of SUCCESS_BANDS) if (rate >= band.min) return band;
  return SUCCESS_BANDS[SUCCESS_BANDS.length - 1]!;
}

/** The spec's four typical causes, and the offline planner's own: a request it could not read (a model may). */
export const CAUSE_KINDS = [
  'similar_descriptions',
  'missing_tool',
  'failed_calls',
  'not_understood',
  'planner_unmapped',
] as const;
export type CauseKind = (typeof CAUSE_KINDS)[number];

// type aliases, not interfaces, so they fit the contract's open-ended (looseObject) types
export type Cause = {
  kind: CauseKind;
  message: string;
  /** the tools it is about, in the order the message names them */
  tools?: string[];
  /** the calls it is about: indexes into the result's `tool_calls` */
  calls?: number[];
};

export type Guidance = {
  band: BandLabel;
  causes: Cause[];
};

/** Why a tool call failed. */
export type CallFailure =
  /** the server rejected the arguments (its input schema), or the model's arguments were not JSON */
  | { kind: 'arguments' }
  /** the server has no tool of that name */
  | { kind: 'unknown_tool' }
  /** the handler failed: an HTTP call it made answered this status */
  | { kind: 'http_status'; status: number }
  /** the handler failed: its program exited with this code, or was ended by a signal */
  | { kind: 'exit_code'; exit_code?: number; signal?: string }
  /** the handler failed: it ran out of time */
  | { kind: 'timeout' }
  /** the handler failed: it threw or answered with an error */
  | { kind: 'thrown' };

/**
 * The key of a tool error result's `_meta` under which this project's runtime says how the call
 * failed (a CallFailure), so an agent need not guess it from the error's words.
 */
export const FAILURE_META = 'mcpctl/failure';

export interface GuidanceCall {
  name: string;
  ok: boolean;
  error?: string | undefined;
  /** how it failed, when the service knows; otherwise it is read from `error` */
  failure?:
    | { kind: string; status?: number | undefined; exit_code?: number | undefined; signal?: string | undefined }
    | undefined;
}

export interface GuidanceInput {
  run: {
    ai_response: string;
    success_rate: number;
    tools_used: readonly string[];
    resources_accessed: readonly string[];
    /** every call; absent when the service does not report them */
    tool_calls?: readonly GuidanceCall[] | undefined;
    ai_model?: string | undefined;
  };
  /** the server's tools with their descriptions, when known */
  tools?: ReadonlyArray<{ name: string; description?: string | undefined }> | undefined;
  /** the tools the case expects the agent to call; `[]` expects none; absent: no expectation */
  expectedTools?: readonly string[] | undefined;
  /**
   * What the agent had in mind but could not call, for want of inputs neither the message nor an
   * earlier call gave (mcpctl-local says so itself). Absent: read from the reply.
   */
  unmet?: ReadonlyArray<Unmet> | undefined;
}

/** A tool (or resource template) the agent had in mind but could not use, for want of these inputs. */
export type Unmet = {
  tool: string;
  missing: readonly string[];
  /** the planner could not read them from the request, though the request or another tool may give them */
  unmapped?: boolean | undefined;
};

const LOCAL_MODEL = 'mcpctl-local';
const ERROR_CHARS = 240;

export function computeGuidance(input: GuidanceInput): Guidance {
  const { run } = input;
  const calls = run.tool_calls ?? [];
  const usedNothing = calls.length === 0 && run.tools_used.length === 0 && run.resources_accessed.length === 0;
  const band = classifySuccessRate(usedNothing ? 0 : run.success_rate).label;
  const unmet = unmetOf(input);
  const missing = missingToolCauses(
    input,
    unmet.filter((u) => u.unmapped !== true),
  );
  const unmapped = unmappedCauses(unmet.filter((u) => u.unmapped === true));
  const causes: Cause[] = [
    ...similarDescriptionCauses(input),
    ...unmapped,
    ...missing,
    ...failedCallCauses(input),
    ...(usedNothing && unmet.length === 0 && missing.length === 0 && !expectsNoTool(input)
      ? [notUnderstood(input)]
      : []),
  ];
  return { band, causes };
}

function expectsNoTool(input: GuidanceInput): boolean {
  return input.expectedTools !== undefined && input.expectedTools.length === 0;
}

// ---------------------------------------------------------------------------------------------
// similar_descriptions

function similarDescriptionCauses({ run, tools, expectedTools }: GuidanceInput): Cause[] {
  if (tools === undefined) return [];
  const description = new Map(tools.map((t) => [t.name, t.description ?? '']));
  const causes: Cause[] = [];
  if (expectedTools !== undefined) {
    // The right tools are known: a wrong one used in place of a right one not used.
    const notUsed = expectedTools.filter((name) => !run.tools_used.includes(name) && description.has(name));
    for (const wrong of run.tools_used.filter((name) => !expectedTools.includes(name) && description.has(name))) {
      const best = notUsed
        .map((right) => ({ right, ...compareDescriptions(description.get(wrong)!, description.get(right)!) }))
        .sort((a, b) => b.score - a.score)[0];
      if (best === undefined || best.score < CLOSE) continue;
      causes.push({
        kind: 'similar_descriptions',
        message:
          `the agent called ${wrong} where ${best.right} was expected; their descriptions share ${quoteWords(best.shared)} ` +
          `(similarity ${best.score}): say in each what sets it apart`,
        tools: [wrong, best.right],
        calls: callIndexes(run.tool_calls, wrong),
      });
    }
    return causes;
  }
  // Without expectations: a tool used from a pair of near-identical descriptions.
  const named = new Set<string>();
  for (const used of run.tools_used) {
    if (!description.has(used) || named.has(used)) continue;
    const best = tools
      .filter((t) => t.name !== used)
      .map((t) => ({ other: t.name, ...compareDescriptions(description.get(used)!, t.description ?? '') }))
      .sort((a, b) => b.score - a.score)[0];
    if (best === undefined || best.score < NEAR_IDENTICAL) continue;
    named.add(used).add(best.other);
    causes.push({
      kind: 'similar_descriptions',
      message:
        `the agent called ${used}, whose description is near-identical to ${best.other}'s (they share ${quoteWords(best.shared)}; ` +
        `similarity ${best.score}), so either may be chosen for the same request: say in each what sets it apart`,
      tools: [used, best.other],
      calls: callIndexes(run.tool_calls, used),
    });
  }
  return causes;
}

function callIndexes(calls: readonly GuidanceCall[] | undefined, name: string): number[] | undefined {
  const indexes = (calls ?? []).flatMap((call, index) => (call.name === name ? [index] : []));
  return indexes.length === 0 ? undefined : indexes;
}

// ---------------------------------------------------------------------------------------------
// missing_tool

/** How mcpctl-local says it could not call a tool (src/engine/agent/local/reply.ts). */
const LOCAL_NEEDS = /I would use (\S+), but the message does not give its (.+?), so I did not call it\./g;
const LOCAL_UNMAPPED = /I would use (\S+), but I could not read its (.+?) from the message, so I did not call it\./g;
/** How a model says no tool fits: "I don't have a tool for…", "none of the available tools…". */
const LACKS_TOOL = [
  /\b(?:I|we) (?:do not|don't|did not|didn't|does not) have (?:a|an|any|the) (?:[\w-]+ ){0,3}(?:tool|function)s?\b/i,
  /\bno (?:[\w-]+ ){0,2}(?:tool|function)s? (?:is |are )?(?:available|that (?:can|could|would|lets?)|to (?:do|get|look|find|check|answer)|for (?:this|that|it))\b/i,
  /\bnone of the (?:available |provided |given )?(?:tools|functions)\b/i,
  /\b(?:lack|lacking|missing|without) (?:a|an|the|any) (?:[\w-]+ ){0,2}(?:tool|function)\b/i,
  /\b(?:tools|functions) (?:I have|available to me|at my disposal) (?:do not|don't|cannot|can't)\b/i,
];

/** What the agent could not use: its own account, else what an mcpctl-local reply says. */
function unmetOf({ run, unmet }: GuidanceInput): readonly Unmet[] {
  if (unmet !== undefined) return unmet;
  const read = (pattern: RegExp, unmapped: boolean): Unmet[] =>
    [...run.ai_response.matchAll(pattern)].map((m) => ({
      tool: m[1]!,
      missing: m[2]!.split(/, | and /).filter((s) => s !== ''),
      ...(unmapped ? { unmapped } : {}),
    }));
  return [...read(LOCAL_UNMAPPED, true), ...read(LOCAL_NEEDS, false)];
}

function missingToolCauses({ run }: GuidanceInput, needs: readonly Unmet[]): Cause[] {
  const causes: Cause[] = needs.map(({ tool, missing }) => {
    const them = missing.length === 1 ? 'it' : 'them';
    // a resource template (notes://{day}) is read, not called
    if (tool.includes('://')) {
      return {
        kind: 'missing_tool' as const,
        message: `the agent would read ${tool}, but the message does not give its ${listWords(missing)}: add a tool or resource that lists ${them}`,
      };
    }
    return {
      kind: 'missing_tool' as const,
      message: `the agent would call ${tool}, but neither the message nor any tool's output gives its ${listWords(missing)}: add a tool that returns ${them}, or make ${them} optional`,
      tools: [tool],
    };
  });
  if (run.ai_model !== LOCAL_MODEL && run.ai_model !== undefined) {
    const said = saysLacksTool(run.ai_response);
    if (said !== undefined) causes.push({ kind: 'missing_tool', message: `the model said no tool fits: "${said}"` });
  }
  return causes;
}

/** The sentence of a reply in which a model says it lacks a tool, if it does. */
export function saysLacksTool(reply: string): string | undefined {
  for (const sentence of reply.split(/(?<=[.!?])\s+|\n+/)) {
    if (LACKS_TOOL.some((pattern) => pattern.test(sentence))) return clip(sentence.trim(), ERROR_CHARS);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// planner_unmapped

function unmappedCauses(unmapped: readonly Unmet[]): Cause[] {
  return unmapped.map(({ tool, missing }) => ({
    kind: 'planner_unmapped' as const,
    message:
      `mcpctl-local could not map the request to ${tool}'s ${listWords(missing)}: it reads words and numbers, ` +
      'not meaning, so this says nothing against the server; try the request with a model (--model …), ' +
      'or write the values as the schema lists them',
    tools: [tool],
  }));
}

// ---------------------------------------------------------------------------------------------
// failed_calls

function failedCallCauses({ run }: GuidanceInput): Cause[] {
  const calls = run.tool_calls;
  if (calls === undefined) {
    // The service does not say which calls failed, only how many.
    if (run.success_rate >= 1 || run.tools_used.length === 0) return [];
    return [
      {
        kind: 'failed_calls',
        message: `${Math.round((1 - run.success_rate) * 100)}% of the tool calls failed (the service does not say which)`,
        tools: [...run.tools_used],
      },
    ];
  }
  const byTool = new Map<string, number[]>();
  calls.forEach((call, index) => {
    if (!call.ok) byTool.set(call.name, [...(byTool.get(call.name) ?? []), index]);
  });
  return [...byTool].map(([tool, indexes]) => {
    const first = calls[indexes[0]!]!;
    const failure = failureOf(first);
    const all = calls.filter((c) => c.name === tool).length;
    const count = all === 1 ? 'its call failed' : `${indexes.length} of its ${all} calls failed`;
    const error =
      first.error === undefined || first.error === ''
        ? ''
        : `: ${clip(first.error.replace(/\s+/g, ' ').trim(), ERROR_CHARS)}`;
    return {
      kind: 'failed_calls' as const,
      message: `${tool}: ${count}; ${describeFailure(failure)}${error}`,
      tools: [tool],
      calls: indexes,
    };
  });
}

/** How a call failed: what the service says, else what its error text shows. */
export function failureOf(call: GuidanceCall): CallFailure {
  const given = call.failure;
  if (given !== undefined) {
    switch (given.kind) {
      case 'arguments':
      case 'unknown_tool':
      case 'timeout':
      case 'thrown':
        return { kind: given.kind };
      case 'http_status':
        if (typeof given.status === 'number') return { kind: 'http_status', status: given.status };
        break;
      case 'exit_code':
        return {
          kind: 'exit_code',
          ...(typeof given.exit_code === 'number' ? { exit_code: given.exit_code } : {}),
          ...(typeof given.signal === 'string' ? { signal: given.signal } : {}),
        };
    }
  }
  return classifyToolError(call.error ?? '');
}

/**
 * Reads how a call failed from its error text, for servers and services that do not say it
 * otherwise: the wording of the MCP SDKs, JSON-RPC error codes, and this project's runtime.
 */
export function classifyToolError(error: string): CallFailure {
  // an unknown tool is also -32602 (invalid params) in the SDKs: ask for it first
  if (/\bunknown tool\b|\btool\b[^.]{0,40}\bnot found\b|no tool named|-32601/i.test(error))
    return { kind: 'unknown_tool' };
  if (
    /invalid arguments|input validation|invalid params|-32602|not valid JSON|arguments? (?:are|is) not JSON|does not match (?:its|the) input ?schema/i.test(
      error,
    )
  )
    return { kind: 'arguments' };
  if (/\btime-?out\b|timed out|did not finish within|no answer within/i.test(error)) return { kind: 'timeout' };
  const status = /\banswered (\d{3})\b|\bHTTP (\d{3})\b|\bstatus(?: code)? (\d{3})\b/i.exec(error);
  if (status !== null) return { kind: 'http_status', status: Number(status[1] ?? status[2] ?? status[3]) };
  const exit = /exited with (?:code|status) (\d+)|exit (?:code|status) (\d+)/i.exec(error);
  if (exit !== null) return { kind: 'exit_code', exit_code: Number(exit[1] ?? exit[2]) };
  const signal = /(?:was ended|killed|terminated) by (SIG[A-Z]+)/.exec(error);
  if (signal !== null) return { kind: 'exit_code', signal: signal[1]! };
  return { kind: 'thrown' };
}

export function describeFailure(failure: CallFailure): string {
  switch (failure.kind) {
    case 'arguments':
      return 'the arguments were rejected by its input schema';
    case 'unknown_tool':
      return 'the server has no tool of this name';
    case 'http_status':
      return `the handler failed: its HTTP call answered ${failure.status}`;
    case 'exit_code':
      return failure.signal === undefined
        ? `the handler failed: its program exited with code ${failure.exit_code ?? '?'}`
        : `the handler failed: its program was ended by ${failure.signal}`;
    case 'timeout':
      return 'the handler failed: it ran out of time';
    case 'thrown':
      return 'the handler failed with an error';
  }
}

// ---------------------------------------------------------------------------------------------
// not_understood

function notUnderstood({ run }: GuidanceInput): Cause {
  const local = run.ai_model === LOCAL_MODEL;
  const who = local
    ? 'no tool or resource on this server matched the request'
    : 'the agent used no tool and no resource';
  // the offline planner matches words: a model may understand what it did not
  const model = local ? ' (or see whether a model understands it as it is: --model …)' : '';
  return {
    kind: 'not_understood',
    message:
      `${who}: if the server should handle it, describe the right tool with the words people ask with${model}; ` +
      'if it should not, expect that with expect: { tools: [] }',
  };
}

// ---------------------------------------------------------------------------------------------

function listWords(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)!}`;
}

function clip(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}
