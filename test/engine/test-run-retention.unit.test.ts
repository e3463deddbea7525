/** How many test runs the store keeps: the newest, at most so many in all and per server. */
import { join } from 'node:path';
import { readdir } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore } from '../../src/engine/store/file-store.js';
import { testRunsToDrop, type RetainedRun } from '../../src/engine/store/test-run-retention.js';
import type { TestRunRecord } from '../../src/engine/records.js';
import { tempHome } from '../support/app.js';

/** Runs newest first: `servers[i]` is the server of the i-th newest. */
function runs(servers: string): RetainedRun[] {
  return [...servers].map((server, i) => ({
    id: `test_${i}`,
    mcpId: `mcp_${server}`,
    createdAt: new Date(Date.UTC(2026, 0, 1) - i * 1000).toISOString(),
  }));
}

describe('testRunsToDrop', () => {
  it.each([
    { what: 'fewer than both limits: none', servers: 'aab', limits: { total: 5, perServer: 3 }, drop: [] },
    { what: 'beyond the total: the oldest', servers: 'abcde', limits: { total: 3, perServer: 3 }, drop: [3, 4] },
    {
      what: 'beyond one server’s share: its oldest',
      servers: 'aabaa',
      limits: { total: 10, perServer: 2 },
      drop: [3, 4],
    },
    {
      what: 'both: a server’s dropped runs do not count toward the total',
      servers: 'aaabbc',
      limits: { total: 4, perServer: 2 },
      drop: [2, 5],
    },
    { what: 'nothing kept', servers: '', limits: { total: 1, perServer: 1 }, drop: [] },
  ])('$what', ({ servers, limits, drop }) => {
    expect(testRunsToDrop(runs(servers), limits)).toEqual(drop.map((i) => `test_${i}`));
  });
});

describe('the file store keeps the newest test runs', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function record(id: string, mcpId: string, second: number): TestRunRecord {
    return {
      id,
      mcpId,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
      request: { mcp_id: mcpId, message: `run ${id}`, ai_model: 'mcpctl-local' },
      result: { ai_response: '', tools_used: [], resources_accessed: [], execution_time: 0, success_rate: 0 },
    };
  }

  it('drops the oldest files beyond the limits as runs are kept, and at open', async () => {
    const home = await tempHome('mcpctl-test-runs-');
    cleanups.push(() => home.cleanup());
    const dir = join(home.dir, 'store');
    const roomy = await FileStore.open({ dir, testRunRetention: { total: 100, perServer: 100 } });
    for (let i = 0; i < 6; i++) await roomy.putTestRun(record(`test_${i}`, i % 3 === 0 ? 'mcp_a' : 'mcp_b', i));
    await roomy.close();

    // reopened with tighter limits: the surplus goes at once
    const store = await FileStore.open({ dir, testRunRetention: { total: 4, perServer: 3 } });
    cleanups.push(() => store.close());
    const files = async () => (await readdir(join(dir, 'tests'))).sort();
    expect((await store.listTestRuns()).map((r) => r.id)).toEqual(['test_5', 'test_4', 'test_3', 'test_2']);
    expect(await files()).toEqual(['test_2.json', 'test_3.json', 'test_4.json', 'test_5.json']);

    await store.putTestRun(record('test_6', 'mcp_b', 6));
    await store.putTestRun(record('test_7', 'mcp_b', 7));
    // mcp_b keeps its newest 3 (7, 6, 5); mcp_a's 3 fits the total of 4
    expect((await store.listTestRuns()).map((r) => r.id)).toEqual(['test_7', 'test_6', 'test_5', 'test_3']);
    expect(await files()).toEqual(['test_3.json', 'test_5.json', 'test_6.json', 'test_7.json']);
    expect(await store.getTestRun('test_2')).toBeUndefined();
    expect((await store.getTestRun('test_3'))?.request.message).toBe('run test_3');
  });

  it('lists by server, newest first, at most `limit`, as copies', async () => {
    const home = await tempHome('mcpctl-test-runs-');
    cleanups.push(() => home.cleanup());
    const store = await FileStore.open({ dir: join(home.dir, 'store') });
    cleanups.push(() => store.close());
    for (let i = 0; i < 5; i++) await store.putTestRun(record(`test_${i}`, i % 2 === 0 ? 'mcp_a' : 'mcp_b', i));
    expect((await store.listTestRuns({ mcpId: 'mcp_a' })).map((r) => r.id)).toEqual(['test_4', 'test_2', 'test_0']);
    expect((await store.listTestRuns({ limit: 2 })).map((r) => r.id)).toEqual(['test_4', 'test_3']);
    const [first] = await store.listTestRuns({ limit: 1 });
    first!.result.tools_used.push('changed');
    expect((await store.getTestRun('test_4'))?.result.tools_used).toEqual([]);
  });
});
