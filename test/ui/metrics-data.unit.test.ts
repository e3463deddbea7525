import { describe, expect, it } from 'vitest';
import type { MetricsHistory } from '../../src/ui/api-types.js';
import { chartData, hasValues, isolatedPoints } from '../../src/ui/metrics-data.js';

const history: MetricsHistory = {
  deployment_id: 'deploy_1',
  since: '2026-03-10T11:00:00.000Z',
  until: '2026-03-10T11:02:30.000Z',
  step_seconds: 60,
  totals: { requests: 120, errors: 6, error_rate: 0.05 },
  points: [
    { t: '2026-03-10T11:00:00.000Z', requests: 60, errors: 3, p50_ms: 3, p95_ms: 9, p99_ms: 12.5 },
    // a quiet minute: no latency, no error rate, zero throughput
    { t: '2026-03-10T11:01:00.000Z', requests: 0, errors: 0, p50_ms: null, p95_ms: null, p99_ms: null },
    { t: '2026-03-10T11:02:00.000Z', requests: 60, errors: 3, p50_ms: 4, p95_ms: 10, p99_ms: null },
  ],
};

describe('metrics history as chart columns', () => {
  it('gives Unix seconds and one column per series, with gaps where nothing happened', () => {
    const data = chartData(history);
    const t0 = Date.parse('2026-03-10T11:00:00.000Z') / 1000;
    expect(data.latency).toEqual([
      [t0, t0 + 60, t0 + 120],
      [3, null, 4],
      [9, null, 10],
      [12.5, null, null],
    ]);
    expect(data.throughput).toEqual([
      [t0, t0 + 60, t0 + 120],
      [1, 0, 1],
    ]);
    expect(data.errorRate).toEqual([
      [t0, t0 + 60, t0 + 120],
      [5, null, 5],
    ]);
  });

  it('uses the step of the answer for requests per second', () => {
    const hourly = { ...history, step_seconds: 3600, points: [{ t: history.since, requests: 7200 }] };
    expect(chartData(hourly).throughput[1]).toEqual([2]);
  });

  it('skips a point whose time is not a time, and knows an empty chart', () => {
    const data = chartData({ ...history, points: [{ t: 'soon', requests: 5 }] });
    expect(data.latency[0]).toEqual([]);
    expect(hasValues(data.latency)).toBe(false);
    expect(hasValues(chartData(history).latency)).toBe(true);
    expect(hasValues(chartData({ ...history, points: [history.points[1]!] }).latency)).toBe(false);
  });

  it('finds the values no line can be drawn through', () => {
    expect(isolatedPoints([null, 3, null, 4, 5, null, 6])).toEqual([1, 6]);
    expect(isolatedPoints([7])).toEqual([0]);
    expect(isolatedPoints([1, 2])).toEqual([]);
    expect(isolatedPoints([null, undefined])).toEqual([]);
  });
});
