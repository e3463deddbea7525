import { describe, expect, it } from 'vitest';
import {
  MAX_NAMES,
  OTHER_NAMES,
  SampleRing,
  summarizeMetrics,
  type RequestSample,
} from '../../../src/engine/deployments/samples.js';

/** The plain-array ring the columns replaced: what `since` must keep answering. */
function reference(capacity: number, samples: RequestSample[], from: number): RequestSample[] {
  return samples.slice(-capacity).filter((sample) => sample.t >= from);
}

function sample(i: number): RequestSample {
  const s: RequestSample = {
    t: 1_700_000_000_000 + i * 7.5,
    latencyMs: (i % 97) / 3,
    status: [200, 404, 499, 502, 0][i % 5]!,
  };
  if (i % 3 !== 2) s.method = i % 3 === 0 ? 'tools/call' : 'resources/read';
  if (i % 3 === 0) {
    s.tool = `tool_${i % 4}`;
    if (i % 6 === 0) s.toolError = i % 12 === 0;
  }
  return s;
}

describe('SampleRing', () => {
  it('gives back every field of the samples it holds, oldest first, before and after it wraps', () => {
    for (const [capacity, count] of [
      [10, 0],
      [10, 7],
      [10, 10],
      [10, 23],
      [3000, 2500],
      [3000, 7777],
    ] as const) {
      const ring = new SampleRing(capacity);
      const pushed = Array.from({ length: count }, (_, i) => sample(i));
      for (const s of pushed) ring.push(s);
      expect(ring.length).toBe(Math.min(capacity, count));
      expect(ring.since(0)).toEqual(reference(capacity, pushed, 0));
      const from = pushed[Math.floor(count * 0.8)]?.t ?? 0;
      expect(ring.since(from)).toEqual(reference(capacity, pushed, from));
    }
  });

  it('keeps the first names it sees and counts the names after them as one', () => {
    const ring = new SampleRing(5000);
    for (let i = 0; i < MAX_NAMES + 10; i++)
      ring.push({ t: i, latencyMs: 1, status: 200, method: 'tools/call', tool: `t${i}`, toolError: false });
    const tools = ring.since(0).map((s) => s.tool);
    // the method takes one of the names
    expect(new Set(tools.slice(0, MAX_NAMES - 1)).size).toBe(MAX_NAMES - 1);
    expect(tools.slice(MAX_NAMES - 1)).toEqual(Array.from({ length: 11 }, () => OTHER_NAMES));
    // names made up as methods first do not hide the tool calls after them
    const flooded = new SampleRing(5000);
    for (let i = 0; i < MAX_NAMES + 10; i++) flooded.push({ t: i, latencyMs: 1, status: 404, method: `m${i}` });
    flooded.push({ t: MAX_NAMES + 10, latencyMs: 1, status: 200, method: 'tools/call', tool: 'echo', toolError: true });
    const after = summarizeMetrics(flooded.since(0), { deploymentId: 'd', windowSeconds: 60_000, now: MAX_NAMES + 10 });
    expect(after.tool_calls).toBe(1);
    expect(after.per_tool).toEqual({ [OTHER_NAMES]: { calls: 1, errors: 1 } });
    const metrics = summarizeMetrics(ring.since(0), { deploymentId: 'd', windowSeconds: 60_000, now: MAX_NAMES + 10 });
    expect(metrics.per_tool[OTHER_NAMES]).toEqual({ calls: 11, errors: 0 });
    expect(metrics.per_tool.t0).toEqual({ calls: 1, errors: 0 });
  });

  it('sums the same metrics as the samples it was given', () => {
    const ring = new SampleRing(500);
    const pushed = Array.from({ length: 1200 }, (_, i) => sample(i));
    for (const s of pushed) ring.push(s);
    const now = pushed.at(-1)!.t;
    const options = { deploymentId: 'd', windowSeconds: 2, now };
    expect(summarizeMetrics(ring.since(now - 2000), options)).toEqual(
      summarizeMetrics(reference(500, pushed, now - 2000), options),
    );
  });
});
