/** The summary of a kept test run: what GET /v1/tests shows of each run, as the CLI would print it. */
import { describe, expect, it } from 'vitest';
import type { TestRequest, TestResult } from '../../src/api/contract.js';
import {
  describeTestRun,
  SUMMARY_MESSAGE_CHARS,
  summarizeTestRun,
  TestRun,
  TestRunSummary,
  type TestRunSource,
} from '../../src/api/test-runs.js';

function source(result: Partial<TestResult>, request: Partial<TestRequest> = {}): TestRunSource {
  return {
    test_id: 'test_abc',
    mcp_id: 'mcp_abc',
    server: 'weather',
    created_at: '2026-01-31T12:00:00.000Z',
    request: { mcp_id: 'mcp_abc', message: 'forecast for Paris', ai_model: 'mcpctl-local', ...request },
    result: {
      ai_response: 'Sunny',
      tools_used: [],
      resources_accessed: [],
      execution_time: 0.1,
      success_rate: 1,
      ...result,
    },
  };
}

const call = (name: string, ok: boolean) => ({ name, ok, ...(ok ? {} : { error: 'failed' }) });

describe('summarizeTestRun', () => {
  it.each([
    {
      what: 'every call worked',
      result: { tools_used: ['get_forecast'], tool_calls: [call('get_forecast', true)], success_rate: 1 },
      expected: { band: 'all tool calls worked', calls: 1, failed_calls: 0 },
    },
    {
      what: 'one call of four failed',
      result: {
        tools_used: ['a', 'b'],
        tool_calls: [call('a', true), call('a', true), call('b', true), call('b', false)],
        success_rate: 0.75,
      },
      expected: { band: 'some failures', calls: 4, failed_calls: 1 },
    },
    {
      what: 'the rate falls between the spec’s bands (0.9): the lower one',
      result: { tools_used: ['a'], success_rate: 0.9 },
      expected: { band: 'mostly successful', calls: 1, failed_calls: 0 },
    },
    {
      what: 'nothing used, whatever rate a service reported',
      result: { success_rate: 1 },
      expected: { band: 'major issues', calls: 0, failed_calls: 0 },
    },
    {
      what: 'only a resource read, no call',
      result: { resources_accessed: ['weather://cities'], success_rate: 1 },
      expected: { band: 'all tool calls worked', calls: 0, failed_calls: 0 },
    },
    {
      what: 'the service’s own guidance band is the one printed',
      result: {
        tools_used: ['a'],
        success_rate: 1,
        guidance: { band: 'mostly successful', causes: [{ kind: 'similar_descriptions', message: 'm' }] },
      },
      expected: { band: 'mostly successful', causes: 1 },
    },
  ])('$what', ({ result, expected }) => {
    const summary = summarizeTestRun(source(result));
    expect(summary).toMatchObject(expected);
    expect(TestRunSummary.parse(summary)).toEqual(summary);
  });

  it('names the model that answered, else the one asked for', () => {
    expect(summarizeTestRun(source({ ai_model: 'claude-sonnet-4-5' })).model).toBe('claude-sonnet-4-5');
    expect(summarizeTestRun(source({}, { ai_model: 'gpt-4.1-mini' })).model).toBe('gpt-4.1-mini');
  });

  it('cuts a long message; the whole run keeps all of it', () => {
    const message = 'x'.repeat(SUMMARY_MESSAGE_CHARS + 50);
    const run = source({}, { message });
    expect(summarizeTestRun(run).message).toHaveLength(SUMMARY_MESSAGE_CHARS);
    const whole = describeTestRun(run);
    expect(whole.request.message).toBe(message);
    expect(TestRun.parse(whole)).toEqual(whole);
  });

  it('copies the tools used, so a summary shares nothing with the record', () => {
    const run = source({ tools_used: ['a'] });
    summarizeTestRun(run).tools_used.push('b');
    expect(run.result.tools_used).toEqual(['a']);
  });
});
