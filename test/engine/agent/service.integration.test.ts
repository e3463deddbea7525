/**
 * The test service around any agent: a `${VAR}` without a default gets the build check's
 * placeholder (so the server starts, and calls that need the real value fail honestly), failed
 * calls count against the success rate, and a server that cannot start is a clear error.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestResult } from '../../../src/api/contract.js';
import { ServiceError } from '../../../src/engine/service-error.js';
import { requireBuilt } from '../../support/app.js';
import { createHarness, type Harness } from '../../support/agent.js';

const INVENTORY = join(import.meta.dirname, '..', '..', 'fixtures', 'agent', 'server.yaml');
let harness: Harness;

beforeAll(async () => {
  requireBuilt();
  harness = await createHarness();
});

afterAll(async () => {
  await harness?.close();
});

describe('the test service', () => {
  it('starts a server whose variables have no value, and reports the calls that fail for it', async () => {
    const record = await harness.record(INVENTORY);
    const result = TestResult.parse(
      await harness.service.test(record, {
        mcp_id: record.server.mcp_id,
        message: 'Count the stock of "lamps" and reorder 5 "lamps" from the supplier',
        ai_model: 'mcpctl-local',
      }),
    );
    expect(result.tools_used).toEqual(['count_stock', 'reorder_product']);
    expect(result.tool_calls).toMatchObject([
      { name: 'count_stock', ok: true },
      { name: 'reorder_product', ok: false, error: expect.stringContaining('Tool "reorder_product" failed') },
    ]);
    expect(result.success_rate).toBe(0.5);
    expect(result.ai_response).toContain('12 lamps in stock');
    expect(result.ai_response).toContain(
      'I called reorder_product with {"product":"lamps","quantity":5}, but it failed',
    );
  });

  it('counts an error result as a failed call', async () => {
    const record = await harness.record(INVENTORY);
    const result = await harness.service.test(record, {
      mcp_id: record.server.mcp_id,
      message: 'Show the price history of "desk lamps"',
      ai_model: 'mcpctl-local',
    });
    expect(result.tool_calls).toMatchObject([
      { name: 'price_history', ok: false, error: 'the price database is offline' },
    ]);
    expect(result.success_rate).toBe(0);
  });

  it('says so when the server cannot be started for the test', async () => {
    const record = await harness.record(INVENTORY);
    const broken = { ...record, bundleDir: join(record.bundleDir, 'missing') };
    const error = await harness.service
      .test(broken, { mcp_id: record.server.mcp_id, message: 'hi', ai_model: 'mcpctl-local' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({
      code: 'internal',
      message: expect.stringContaining('the server inventory could not be started for the test'),
    });
  });

  it('logs each run', () => {
    const runs = harness.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'test run');
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs[0]).toMatchObject({ ai_model: 'mcpctl-local', tool_calls: 2, success_rate: 0.5 });
  });
});
