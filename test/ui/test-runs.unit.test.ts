import { describe, expect, it } from 'vitest';
import { BAND_LABELS, classifySuccessRate, SUCCESS_BANDS } from '../../src/api/guidance.js';
import { bandOf, levelOfBand, toDetail, toSummaries } from '../../src/ui/test-runs.js';

describe('test runs on the dashboard', () => {
  it('has the bands of the CLI, with the same wording and level', () => {
    for (const rate of [1, 0.99, 0.8, 0.79, 0.5, 0.49, 0]) {
      const cli = classifySuccessRate(rate);
      expect(bandOf(rate)).toEqual({ label: cli.label, level: cli.level });
    }
    for (const band of SUCCESS_BANDS) expect(levelOfBand(band.label)).toBe(band.level);
    expect(BAND_LABELS).toHaveLength(4);
    expect(levelOfBand('a band of another service')).toBe('warn');
  });

  it('reads the list of runs', () => {
    const runs = toSummaries({
      runs: [
        {
          test_id: 'test_1',
          mcp_id: 'mcp_1',
          server: 'weather',
          created_at: '2026-03-10T11:00:00.000Z',
          model: 'mcpctl-local',
          message: 'What is the forecast in Paris?',
          success_rate: 0.5,
          band: 'some failures',
          calls: 2,
          failed_calls: 1,
          tools_used: ['get_forecast'],
          causes: 1,
        },
      ],
    });
    expect(runs).toEqual([
      {
        id: 'test_1',
        mcpId: 'mcp_1',
        server: 'weather',
        createdAt: '2026-03-10T11:00:00.000Z',
        model: 'mcpctl-local',
        successRate: 0.5,
        band: 'some failures',
        level: 'warn',
        message: 'What is the forecast in Paris?',
        calls: 2,
        failedCalls: 1,
        toolsUsed: ['get_forecast'],
      },
    ]);
    // a run whose server's record is gone names the server by its id
    expect(toSummaries({ runs: [{ test_id: 'test_2', mcp_id: 'mcp_2', server: '' }] })[0]?.server).toBeUndefined();
    expect(toSummaries({})).toEqual([]);
    expect(toSummaries(null)).toEqual([]);
  });

  it('reads one run with its request and result, computing the band when the service sent none', () => {
    const run = toDetail({
      test_id: 'test_2',
      mcp_id: 'mcp_1',
      request: { mcp_id: 'mcp_1', message: 'Weather in Berlin?', ai_model: 'mcpctl-local', expect: { tools: [] } },
      result: {
        ai_response: 'It failed',
        tools_used: ['get_forecast'],
        resources_accessed: [],
        execution_time: 1.2,
        success_rate: 0,
        tool_calls: [{ name: 'get_forecast', ok: false, error: 'answered 503', duration_ms: 31.4 }, { bad: true }],
        guidance: {
          band: 'major issues',
          causes: [{ kind: 'failed_calls', tools: ['get_forecast'], message: 'get_forecast: its call failed' }, {}],
        },
      },
    });
    expect(run).toMatchObject({
      id: 'test_2',
      message: 'Weather in Berlin?',
      model: 'mcpctl-local',
      successRate: 0,
      band: 'major issues',
      level: 'bad',
      expectedTools: [],
      toolsUsed: ['get_forecast'],
      calls: 1,
      failedCalls: 1,
      causes: [{ kind: 'failed_calls', tools: ['get_forecast'], message: 'get_forecast: its call failed' }],
      toolCalls: [{ name: 'get_forecast', ok: false, error: 'answered 503', duration_ms: 31.4 }],
    });
    expect(toDetail({ test_id: 'test_3', result: { success_rate: 0.9 } }).band).toBe('mostly successful');
  });
});
