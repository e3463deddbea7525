/**
 * The guidance of real runs: each fixture under test/fixtures/guidance, tested with the offline
 * agent through the test service (real runtime, real MCP), produces exactly its cause; the
 * healthy one produces none.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestResult } from '../../../src/api/contract.js';
import { loadDefinition } from '../../../src/definition/load.js';
import { requireBuilt } from '../../support/app.js';
import { createHarness, type Harness } from '../../support/agent.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'guidance');

let harness: Harness;
beforeAll(async () => {
  requireBuilt();
  harness = await createHarness();
});
afterAll(async () => {
  await harness?.close();
});

/** Runs the fixture's first case as `mcpctl test` sends it: its message and its expected tools. */
async function runFixture(name: string): Promise<TestResult> {
  const file = join(FIXTURES, `${name}.yaml`);
  const testCase = (await loadDefinition(file)).definition.tests!.cases[0]!;
  const record = await harness.record(file);
  return harness.service.test(record, {
    mcp_id: record.server.mcp_id,
    message: testCase.message,
    ai_model: 'mcpctl-local',
    ...(testCase.expect?.tools === undefined ? {} : { expect: { tools: testCase.expect.tools } }),
  });
}

describe('guidance of runs with the offline agent', () => {
  it('a healthy case: the right tool worked, no cause', async () => {
    const result = await runFixture('healthy');
    expect(result).toMatchObject({ tools_used: ['exchange_rate'], success_rate: 1 });
    expect(result.guidance).toEqual({ band: 'all tool calls worked', causes: [] });
  });

  it('similar_descriptions: the wrong one of two near-identical tools, named with the words they share, at a rate of 1', async () => {
    const result = await runFixture('similar-descriptions');
    expect(result).toMatchObject({ tools_used: ['find_customer'], success_rate: 1 });
    expect(result.guidance).toEqual({
      band: 'all tool calls worked',
      causes: [
        {
          kind: 'similar_descriptions',
          message:
            'the agent called find_customer where find_supplier was expected; their descriptions share "looks", "account", "holder", "name", "balance" and "status" (similarity 0.75): say in each what sets it apart',
          tools: ['find_customer', 'find_supplier'],
          calls: [0],
        },
      ],
    });
  });

  it('missing_tool: a candidate whose required inputs nothing gives, named with those inputs', async () => {
    const result = await runFixture('missing-tool');
    expect(result).toMatchObject({ tools_used: [], resources_accessed: [], success_rate: 0 });
    expect(result.guidance).toEqual({
      band: 'major issues',
      causes: [
        {
          kind: 'missing_tool',
          message:
            "the agent would call get_forecast, but neither the message nor any tool's output gives its latitude and longitude: add a tool that returns them, or make them optional",
          tools: ['get_forecast'],
        },
      ],
    });
  });

  it('failed_calls: the failing tool with its error, and how it failed (exit code)', async () => {
    const result = await runFixture('failed-calls');
    expect(result).toMatchObject({ tools_used: ['exchange_rate'], success_rate: 0 });
    expect(result.tool_calls).toEqual([
      expect.objectContaining({ name: 'exchange_rate', ok: false, failure: { kind: 'exit_code', exit_code: 3 } }),
    ]);
    expect(result.guidance).toEqual({
      band: 'major issues',
      causes: [
        {
          kind: 'failed_calls',
          message: expect.stringMatching(
            /^exchange_rate: its call failed; the handler failed: its program exited with code 3: .*no reference rates published yet today/,
          ),
          tools: ['exchange_rate'],
          calls: [0],
        },
      ],
    });
  });

  it('not_understood: nothing used and nothing matched', async () => {
    const result = await runFixture('not-understood');
    expect(result).toMatchObject({ tools_used: [], resources_accessed: [], tool_calls: [], success_rate: 0 });
    expect(result.guidance?.band).toBe('major issues');
    expect(result.guidance?.causes.map((c) => c.kind)).toEqual(['not_understood']);
    expect(result.guidance?.causes[0]?.message).toMatch(/^no tool or resource on this server matched the request/);
  });

  it('arguments the input schema rejects are told apart from a failing handler', async () => {
    const file = join(FIXTURES, 'healthy.yaml');
    const record = await harness.record(file);
    // quoted text fills the required string, which the schema's pattern then rejects
    const result = await harness.service.test(record, {
      mcp_id: record.server.mcp_id,
      message: 'exchange_rate currency: "dollars"',
      ai_model: 'mcpctl-local',
    });
    expect(result.tool_calls).toEqual([
      expect.objectContaining({ name: 'exchange_rate', ok: false, failure: { kind: 'arguments' } }),
    ]);
    expect(result.guidance?.causes).toEqual([
      expect.objectContaining({
        kind: 'failed_calls',
        message: expect.stringContaining(
          'exchange_rate: its call failed; the arguments were rejected by its input schema: Invalid arguments',
        ),
      }),
    ]);
  });
});
