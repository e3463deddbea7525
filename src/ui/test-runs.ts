/**
 * Test runs as `GET /v1/tests` and `GET /v1/tests/:id` give them, read into what the pages show. The
 * mapping from the service's fields lives here alone, tolerant of fields a service leaves out. The band
 * wording is the CLI's (src/api/guidance.ts). Pure.
 */
import type { Cause, TestResult, ToolCall } from './api-types.js';

export type BandLevel = 'ok' | 'warn' | 'bad';

export interface TestRunSummary {
  id: string;
  mcpId: string;
  server: string | undefined;
  createdAt: string | undefined;
  model: string | undefined;
  successRate: number | undefined;
  band: string;
  level: BandLevel;
  /** the message sent (the list has its first 200 characters) */
  message: string | undefined;
  /** tool calls, and how many failed */
  calls: number | undefined;
  failedCalls: number | undefined;
  toolsUsed: string[];
}

export interface TestRunDetail extends TestRunSummary {
  expectedTools: string[] | undefined;
  result: TestResult | undefined;
  causes: Cause[];
  toolCalls: ToolCall[];
}

// the spec's bands, as src/api/guidance.ts has them: a rate falls to the lower band between two
const BANDS: { min: number; label: string; level: BandLevel }[] = [
  { min: 1, label: 'all tool calls worked', level: 'ok' },
  { min: 0.8, label: 'mostly successful', level: 'ok' },
  { min: 0.5, label: 'some failures', level: 'warn' },
  { min: 0, label: 'major issues', level: 'bad' },
];

/** The band of a success rate. */
export function bandOf(rate: number): { label: string; level: BandLevel } {
  const { label, level } = BANDS.find((band) => rate >= band.min) ?? BANDS[BANDS.length - 1]!;
  return { label, level };
}

/** The level of a band label a service sent; an unknown label reads as a warning. */
export function levelOfBand(label: string): BandLevel {
  return BANDS.find((band) => band.label === label)?.level ?? 'warn';
}

type Loose = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
const object = (value: unknown): Loose | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Loose) : undefined;

/** One run of `GET /v1/tests`, or of the detail's summary fields. */
export function toSummary(run: Loose): TestRunSummary {
  const result = object(run.result);
  const rate = num(run.success_rate) ?? num(result?.success_rate);
  const guidance = object(result?.guidance);
  const band = text(run.band) ?? text(guidance?.band) ?? (rate === undefined ? 'no result' : bandOf(rate).label);
  const request = object(run.request);
  const calls = Array.isArray(result?.tool_calls)
    ? result.tool_calls.map(object).filter((call) => typeof call?.name === 'string')
    : undefined;
  return {
    id: text(run.test_id) ?? text(run.id) ?? '',
    mcpId: text(run.mcp_id) ?? text(request?.mcp_id) ?? '',
    // empty when the server's record is gone
    server: text(run.server) || undefined,
    createdAt: text(run.created_at),
    model: text(run.model) ?? text(run.ai_model) ?? text(result?.ai_model) ?? text(request?.ai_model),
    successRate: rate,
    band,
    level: levelOfBand(band),
    message: text(request?.message) ?? text(run.message),
    calls: num(run.calls) ?? calls?.length,
    failedCalls: num(run.failed_calls) ?? calls?.filter((call) => call?.ok !== true).length,
    toolsUsed: run.tools_used !== undefined ? strings(run.tools_used) : strings(result?.tools_used),
  };
}

/** The answer of `GET /v1/tests`: its runs, newest first as the service sent them. */
export function toSummaries(data: unknown): TestRunSummary[] {
  const runs = object(data)?.runs;
  return Array.isArray(runs) ? runs.map((run) => toSummary(object(run) ?? {})) : [];
}

/** The answer of `GET /v1/tests/:id`. */
export function toDetail(data: unknown): TestRunDetail {
  const run = object(data) ?? {};
  const request = object(run.request);
  const result = object(run.result);
  const guidance = object(result?.guidance);
  const expect = object(request?.expect);
  const causes = Array.isArray(guidance?.causes)
    ? guidance.causes
        .map(object)
        .filter((cause): cause is Loose => cause !== undefined && typeof cause.message === 'string')
        .map((cause) => ({
          kind: text(cause.kind) ?? 'cause',
          message: cause.message as string,
          tools: strings(cause.tools),
        }))
    : [];
  const toolCalls = Array.isArray(result?.tool_calls)
    ? result.tool_calls
        .map(object)
        .filter((call): call is Loose => call !== undefined && typeof call.name === 'string')
        .map((call) => ({
          name: call.name as string,
          ok: call.ok === true,
          ...(text(call.error) === undefined ? {} : { error: text(call.error)! }),
          ...(num(call.duration_ms) === undefined ? {} : { duration_ms: num(call.duration_ms)! }),
        }))
    : [];
  return {
    ...toSummary(run),
    expectedTools: expect?.tools === undefined ? undefined : strings(expect.tools),
    result: result === undefined ? undefined : (result as unknown as TestResult),
    causes,
    toolCalls,
  };
}
