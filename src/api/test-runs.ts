/**
 * The answers of `GET /v1/tests` and `GET /v1/tests/{test_id}`: the runs of `POST /v1/test` a
 * service kept, each summed up for a list, and one whole with what was asked and what came back.
 * Pure: no IO.
 */
import { z } from 'zod';
import { classifySuccessRate } from './guidance.js';
import { TestRequest, TestResult, type TestRequest as TestRequestType } from './operations.js';

export const TEST_ID_PATTERN = /^test_[A-Za-z0-9]+$/;

/** Runs listed when the request says no `limit`, and the most it may ask for. */
export const TEST_RUNS_DEFAULT_LIMIT = 50;
export const TEST_RUNS_MAX_LIMIT = 500;

/** The characters of a run's message a summary carries; the whole run has all of it. */
export const SUMMARY_MESSAGE_CHARS = 200;

export const TestRunSummary = z.looseObject({
  test_id: z.string(),
  mcp_id: z.string(),
  /** the name of the server tested; empty when its record is gone */
  server: z.string(),
  created_at: z.string(),
  model: z.string(),
  /** the message sent to the agent, cut to SUMMARY_MESSAGE_CHARS characters */
  message: z.string(),
  success_rate: z.number().min(0).max(1),
  /** the success-rate band of the spec, as `mcpctl test` prints it */
  band: z.string(),
  /** the tool calls the agent made, and how many of them failed */
  calls: z.number().int().nonnegative(),
  failed_calls: z.number().int().nonnegative(),
  tools_used: z.array(z.string()),
  /** how many of the guidance's causes apply */
  causes: z.number().int().nonnegative(),
});
export type TestRunSummary = z.infer<typeof TestRunSummary>;

export const TestRunList = z.looseObject({ runs: z.array(TestRunSummary) });
export type TestRunList = z.infer<typeof TestRunList>;

/** One run whole: its summary, the request as sent (validated) and the result as it was answered. */
export const TestRun = TestRunSummary.extend({
  // A service may keep requests of an earlier contract: read them loosely.
  request: TestRequest.loose(),
  result: TestResult,
});
export type TestRun = z.infer<typeof TestRun>;

/** What a summary is made from: a kept run and the name of its server. */
export interface TestRunSource {
  test_id: string;
  mcp_id: string;
  server: string;
  created_at: string;
  request: TestRequestType;
  result: TestResult;
}

/**
 * A run's summary. The band is the one `mcpctl test` prints: the guidance's, or for a result
 * without guidance the band of its success rate (a run that used nothing is `major issues`, as the
 * guidance has it). The calls come from `tool_calls`; a result without them counts one call per
 * tool used, none failed.
 */
export function summarizeTestRun(source: TestRunSource): TestRunSummary {
  const { result, request } = source;
  const calls = result.tool_calls;
  return {
    test_id: source.test_id,
    mcp_id: source.mcp_id,
    server: source.server,
    created_at: source.created_at,
    model: result.ai_model ?? request.ai_model,
    message: request.message.slice(0, SUMMARY_MESSAGE_CHARS),
    success_rate: result.success_rate,
    band: result.guidance?.band ?? classifySuccessRate(usedNothing(result) ? 0 : result.success_rate).label,
    calls: calls?.length ?? result.tools_used.length,
    failed_calls: calls?.filter((call) => !call.ok).length ?? 0,
    tools_used: [...result.tools_used],
    causes: result.guidance?.causes.length ?? 0,
  };
}

function usedNothing(result: TestResult): boolean {
  return (
    (result.tool_calls?.length ?? 0) === 0 && result.tools_used.length === 0 && result.resources_accessed.length === 0
  );
}

/** A whole run: its summary, and the request and result as they were. */
export function describeTestRun(source: TestRunSource): TestRun {
  return { ...summarizeTestRun(source), request: source.request, result: source.result };
}
