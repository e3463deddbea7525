/**
 * The kept runs of POST /v1/test read back over /v1: GET /v1/tests lists them newest first with a
 * summary each, GET /v1/tests/:id gives one whole. Real engine on loopback, real builds and real
 * runs of the offline agent (mcpctl-local) against the built runtime, from dist/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import type { TestResult } from '../../../src/api/contract.js';
import { TestRun, TestRunList } from '../../../src/api/test-runs.js';
import type { RunningEngine } from '../../../src/engine/engine.js';
import { call, requireBuilt, TEST_KEY, weatherDefinition } from '../../support/app.js';
import { startRealEngine } from '../../support/engine.js';
import { tempDir, type TempDir } from '../../support/temp.js';

/** A message the offline agent answers with get_forecast. */
const FORECAST = 'What is the forecast in Paris? Use get_forecast.';
/** A message that matches no tool and no resource: the agent uses nothing. */
const NOTHING = 'Sing me a song about the sea.';

let home: TempDir;
let engine: RunningEngine;
let client: ApiClient;
let weather: string;
let other: string;
/** what POST /v1/test answered, in the order the runs were made */
const answers: Array<{ mcpId: string; message: string; result: TestResult }> = [];

async function runTest(mcpId: string, message: string): Promise<void> {
  answers.push({ mcpId, message, result: await client.test({ mcp_id: mcpId, message }) });
}

beforeAll(async () => {
  requireBuilt();
  home = await tempDir('mcpctl-test-runs-');
  engine = await startRealEngine(home.dir, { apiKey: TEST_KEY });
  client = new ApiClient({ baseUrl: engine.url, apiKey: TEST_KEY });
  weather = (await client.build(weatherDefinition())).mcp_id;
  other = (await client.build(weatherDefinition('almanac'))).mcp_id;
  await runTest(weather, FORECAST);
  await runTest(weather, NOTHING);
  await runTest(other, FORECAST);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await engine?.close(1000);
  await home?.cleanup();
});

describe('GET /v1/tests', () => {
  it('lists every kept run newest first, each summed up as the CLI would print it', async () => {
    const answer = await call(engine.url, 'GET', '/v1/tests');
    expect(answer.status).toBe(200);
    const { runs } = TestRunList.parse((answer.body as { data: unknown }).data);
    expect(runs.map((r) => r.mcp_id)).toEqual([other, weather, weather]);
    expect(new Set(runs.map((r) => r.test_id)).size).toBe(3);
    for (const run of runs) expect(run.test_id).toMatch(/^test_[a-z0-9]+$/);

    const [almanac, nothing, forecast] = runs;
    expect(forecast).toMatchObject({
      server: 'weather',
      model: 'mcpctl-local',
      message: FORECAST,
      success_rate: 1,
      band: 'all tool calls worked',
      calls: 1,
      failed_calls: 0,
      tools_used: ['get_forecast'],
    });
    expect(almanac).toMatchObject({ server: 'almanac', tools_used: ['get_forecast'], band: 'all tool calls worked' });
    // a run that used nothing tested nothing: 0, and the lowest band
    expect(nothing).toMatchObject({ server: 'weather', success_rate: 0, band: 'major issues', calls: 0 });
    expect(nothing!.causes).toBeGreaterThan(0);
    expect(Date.parse(forecast!.created_at)).toBeLessThanOrEqual(Date.parse(almanac!.created_at));
  });

  it('filters by server and limits the count, through the API client too', async () => {
    const ofWeather = await client.testRuns({ mcpId: weather });
    expect(ofWeather.map((r) => r.message)).toEqual([NOTHING, FORECAST]);
    expect(await client.testRuns({ mcpId: 'mcp_nothere' })).toEqual([]);
    const newest = await client.testRuns({ limit: 1 });
    expect(newest.map((r) => r.mcp_id)).toEqual([other]);
  });

  it('refuses a malformed mcp_id or an out-of-range limit with 400 naming the parameter', async () => {
    for (const [query, parameter] of [
      ['mcp_id=deploy_abc', 'mcp_id'],
      ['mcp_id=', 'mcp_id'],
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=2.5', 'limit'],
      ['limit=many', 'limit'],
    ] as const) {
      const answer = await call(engine.url, 'GET', `/v1/tests?${query}`);
      expect(answer.status, query).toBe(400);
      const body = answer.body as { success: boolean; error: { code: string; message: string; details: unknown[] } };
      expect(body.success).toBe(false);
      expect(body.error.code).toBe('bad_request');
      expect(body.error.message).toContain(parameter);
      expect(body.error.details).toEqual([expect.objectContaining({ path: `query.${parameter}` })]);
    }
    expect((await call(engine.url, 'GET', '/v1/tests?limit=500')).status).toBe(200);
  });

  it('ATTACK: the runs (messages, replies, tool errors) are not shown without the API key', async () => {
    for (const key of [null, 'wrong-key-0123456789abcdef0123456789']) {
      const list = await call(engine.url, 'GET', '/v1/tests', { key });
      expect(list.status).toBe(401);
      expect(list.text).not.toContain('Paris');
      const runs = await client.testRuns();
      const one = await call(engine.url, 'GET', `/v1/tests/${runs[0]!.test_id}`, { key });
      expect(one.status).toBe(401);
      expect(one.text).not.toContain('Paris');
    }
  });
});

describe('GET /v1/tests/:test_id', () => {
  it('gives the whole run: its summary, the request and the result as POST /v1/test answered it', async () => {
    const summaries = await client.testRuns();
    for (const [index, summary] of summaries.entries()) {
      const answer = await call(engine.url, 'GET', `/v1/tests/${summary.test_id}`);
      expect(answer.status).toBe(200);
      const run = TestRun.parse((answer.body as { data: unknown }).data);
      const made = answers[answers.length - 1 - index]!;
      expect(run).toMatchObject(summary);
      expect(run.request).toMatchObject({ mcp_id: made.mcpId, message: made.message, ai_model: 'mcpctl-local' });
      expect(run.result).toEqual(made.result);
    }
    const viaClient = await client.testRun(summaries[0]!.test_id);
    expect(viaClient.result).toEqual(answers.at(-1)!.result);
  });

  it('404 for an unknown run, 400 for an id not shaped like one', async () => {
    const unknown = await call(engine.url, 'GET', '/v1/tests/test_nothere');
    expect(unknown.status).toBe(404);
    expect((unknown.body as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('test_nothere'),
    });
    for (const id of ['deploy_abc', 'test_', 'test_a.b', '..%2F..%2Fstore%2Fmeta']) {
      const bad = await call(engine.url, 'GET', `/v1/tests/${id}`);
      expect(bad.status, id).toBe(400);
      expect((bad.body as { error: { code: string } }).error.code).toBe('bad_request');
    }
  });
});
