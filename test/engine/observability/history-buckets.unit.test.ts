/**
 * The history's time buckets and the usage tally, in fake time: a request lands in its minute and
 * its hour, buckets roll over at the boundaries, retention drops what is past 24 h / 30 days,
 * merged buckets add up exactly, percentiles come from the histogram, and the views the API
 * answers with have every interval and the tables capped.
 */
import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  HOUR_MS,
  LATENCY_BOUNDS_MS,
  MINUTE_MS,
  emptyBucket,
  estimatePercentile,
  expire,
  mergeSteps,
  recordSample,
  total,
  type Sample,
  type Series,
} from '../../../src/engine/observability/history-buckets.js';
import { viewMetrics, viewUsage } from '../../../src/engine/observability/history-view.js';
import {
  MAX_CLIENTS,
  MAX_TOOLS,
  OTHER_CLIENTS,
  OTHER_TOOLS,
  expireDays,
  recordUsage,
  type UsageDay,
} from '../../../src/engine/observability/usage-tally.js';

const T0 = Date.parse('2026-03-10T12:00:00Z');

function sample(at: number, extra: Partial<Sample> = {}): Sample {
  return { at, latencyMs: 20, errorType: undefined, tool: true, toolError: false, bytesIn: 100, ...extra };
}

function fresh(): Series {
  return { minutes: [], hours: [] };
}

describe('history buckets', () => {
  it('a request lands in its minute and its hour; the next minute is a new bucket, the same hour is not', () => {
    const s = fresh();
    recordSample(s, sample(T0 + 5_000), T0 + 5_000);
    recordSample(s, sample(T0 + 59_999, { errorType: 'tool_error', toolError: true }), T0 + 59_999);
    recordSample(s, sample(T0 + 60_000, { latencyMs: 300, tool: false, bytesIn: 7 }), T0 + 60_000);
    expect(s.minutes.map((b) => [b.t - T0, b.requests])).toEqual([
      [0, 2],
      [MINUTE_MS, 1],
    ]);
    expect(s.hours).toHaveLength(1);
    expect(s.hours[0]).toMatchObject({
      t: T0,
      requests: 3,
      toolCalls: 2,
      toolErrors: 1,
      bytesIn: 207,
      errors: { tool_error: 1 },
      maxMs: 300,
    });
    recordSample(s, sample(T0 + HOUR_MS), T0 + HOUR_MS);
    expect(s.hours.map((b) => b.t - T0)).toEqual([0, HOUR_MS]);
  });

  it('a late request goes into its own (earlier) bucket, kept in time order', () => {
    const s = fresh();
    recordSample(s, sample(T0 + 3 * MINUTE_MS), T0 + 3 * MINUTE_MS);
    recordSample(s, sample(T0 + MINUTE_MS), T0 + 3 * MINUTE_MS);
    recordSample(s, sample(T0 + 2 * MINUTE_MS), T0 + 3 * MINUTE_MS);
    expect(s.minutes.map((b) => (b.t - T0) / MINUTE_MS)).toEqual([1, 2, 3]);
  });

  it('retention: minutes past 24 h and hours past 30 days are dropped; the bounds hold', () => {
    const s = fresh();
    // one request a minute for 31 days, expired as the engine does when it writes
    const end = T0 + 31 * DAY_MS;
    for (let t = T0; t < end; t += MINUTE_MS) {
      recordSample(s, sample(t), t);
      if (t % HOUR_MS === 0) expire(s, t);
    }
    expire(s, end);
    expect(s.minutes.length).toBeLessThanOrEqual(1440);
    expect(s.hours.length).toBeLessThanOrEqual(720);
    expect(s.minutes[0]!.t).toBeGreaterThanOrEqual(end - DAY_MS);
    expect(s.hours[0]!.t).toBeGreaterThanOrEqual(end - 30 * DAY_MS);
    // a request older than what is kept is not recorded at all
    const before = s.hours.length;
    recordSample(s, sample(T0), end);
    expect(s.hours.length).toBe(before);
  });

  it('merging: buckets add up exactly, errors by type and histogram included', () => {
    const s = fresh();
    for (let i = 0; i < 10; i += 1) {
      const at = T0 + i * MINUTE_MS;
      recordSample(s, sample(at, { latencyMs: i * 10, errorType: i % 3 === 0 ? 'http_5xx' : undefined }), at);
    }
    const steps = mergeSteps(s.minutes, T0, T0 + 10 * MINUTE_MS, 5 * MINUTE_MS);
    expect(steps.map((b) => b.requests)).toEqual([5, 5]);
    expect(steps.map((b) => b.errors.http_5xx)).toEqual([2, 2]);
    const all = total(steps);
    expect(all).toMatchObject({ requests: 10, bytesIn: 1000, toolCalls: 10, errors: { http_5xx: 4 }, maxMs: 90 });
    expect(all.latency.reduce((a, b) => a + b, 0)).toBe(10);
    expect(all.latency).toEqual(total(s.minutes).latency);
    // every interval is there, an empty one too
    expect(mergeSteps(s.minutes, T0 - 5 * MINUTE_MS, T0, 5 * MINUTE_MS)).toEqual([emptyBucket(T0 - 5 * MINUTE_MS)]);
  });

  it('percentiles are estimated within the histogram bucket they fall in', () => {
    const b = emptyBucket(T0);
    expect(estimatePercentile(b, 95)).toBeNull();
    // 90 fast (within 10–25 ms), 10 slow (within 250–500 ms)
    b.latency[LATENCY_BOUNDS_MS.indexOf(25)] = 90;
    b.latency[LATENCY_BOUNDS_MS.indexOf(500)] = 10;
    b.maxMs = 480;
    const p50 = estimatePercentile(b, 50)!;
    expect(p50).toBeGreaterThan(10);
    expect(p50).toBeLessThanOrEqual(25);
    const p95 = estimatePercentile(b, 95)!;
    expect(p95).toBeGreaterThan(250);
    expect(p95).toBeLessThanOrEqual(480);
    // beyond the last bound: up to the slowest request
    const slow = emptyBucket(T0);
    slow.latency[LATENCY_BOUNDS_MS.length] = 1;
    slow.maxMs = 45_000;
    expect(estimatePercentile(slow, 99)).toBe(45_000);
  });
});

describe('the metrics view', () => {
  it('minute resolution up to 24 h, hour beyond; the step fits the points asked for', () => {
    const s = fresh();
    const now = T0 + 30 * MINUTE_MS;
    recordSample(s, sample(T0 + 10 * MINUTE_MS, { errorType: 'tool_error', toolError: true }), now);
    recordSample(s, sample(T0 + 20 * MINUTE_MS), now);
    const hour = viewMetrics(s, { deploymentId: 'd', now, sinceMs: HOUR_MS });
    expect(hour).toMatchObject({ resolution_seconds: 60, step_seconds: 60 });
    expect(hour.points.length).toBeGreaterThanOrEqual(60);
    expect(hour.points.length).toBeLessThanOrEqual(61);
    expect(hour.totals).toMatchObject({
      requests: 2,
      errors: 1,
      error_rate: 0.5,
      errors_by_type: { tool_error: 1 },
      tool_calls: 2,
      tool_error_rate: 0.5,
    });
    const charted = viewMetrics(s, { deploymentId: 'd', now, sinceMs: 24 * HOUR_MS, points: 60 });
    expect(charted.points.length).toBeLessThanOrEqual(60);
    expect(charted.step_seconds % 60).toBe(0);
    expect(charted.totals.requests).toBe(2);
    const week = viewMetrics(s, { deploymentId: 'd', now, sinceMs: 7 * DAY_MS });
    expect(week).toMatchObject({ resolution_seconds: 3600 });
    expect(week.totals.requests).toBe(2);
    expect(viewMetrics(undefined, { deploymentId: 'd', now, sinceMs: HOUR_MS }).totals.requests).toBe(0);
  });
});

describe('usage', () => {
  it('counts per UTC day, tool, client and user; names past the limits are counted together', () => {
    const days: UsageDay[] = [];
    const now = T0;
    for (let i = 0; i < MAX_TOOLS + 5; i += 1)
      recordUsage(days, { at: now, failed: false, tool: `t${i}`, toolError: false }, now);
    for (let i = 0; i < MAX_CLIENTS + 3; i += 1)
      recordUsage(days, { at: now, failed: false, toolError: false, client: { name: `c${i}`, version: '1' } }, now);
    recordUsage(days, { at: now, failed: true, tool: '__proto__', toolError: true, user: 'alice' }, now);
    expect(days).toHaveLength(1);
    expect(Object.keys(days[0]!.tools)).toHaveLength(MAX_TOOLS + 1);
    expect(days[0]!.tools[OTHER_TOOLS]).toEqual({ requests: 6, toolCalls: 6, toolErrors: 1 });
    // the requests that named no client hold one of the places
    expect(days[0]!.clients[OTHER_CLIENTS]!.requests).toBe(4);
    expect(({} as Record<string, unknown>).requests).toBeUndefined();
    const view = viewUsage(days, { deploymentId: 'd', now, sinceMs: DAY_MS });
    expect(view.totals).toEqual({
      requests: MAX_TOOLS + 5 + MAX_CLIENTS + 3 + 1,
      errors: 1,
      tool_calls: MAX_TOOLS + 6,
      tool_errors: 1,
    });
    expect(view.users).toEqual([{ user: 'alice', requests: 1, tool_calls: 1, tool_errors: 1 }]);
    expect(view.clients[0]).toMatchObject({ name: '(unknown)', requests: MAX_TOOLS + 6 });
    expect(view.clients.find((c) => c.name === 'c0')).toEqual({
      name: 'c0',
      version: '1',
      requests: 1,
      tool_calls: 0,
      tool_errors: 0,
    });
    expect(view.days).toEqual([
      { day: '2026-03-10', requests: view.totals.requests, errors: 1, tool_calls: MAX_TOOLS + 6, tool_errors: 1 },
    ]);
  });

  it('30 days are kept; `since` counts whole UTC days', () => {
    const days: UsageDay[] = [];
    for (let d = 0; d < 40; d += 1) {
      const at = T0 + d * DAY_MS;
      recordUsage(days, { at, failed: false, tool: 'echo', toolError: false }, at);
      expireDays(days, at);
    }
    expect(days).toHaveLength(30);
    const now = T0 + 39 * DAY_MS;
    const week = viewUsage(days, { deploymentId: 'd', now, sinceMs: 7 * DAY_MS });
    expect(week.days).toHaveLength(8);
    expect(week.since).toBe('2026-04-11T00:00:00.000Z');
    expect(week.tools).toEqual([{ name: 'echo', calls: 8, errors: 0 }]);
  });
});
