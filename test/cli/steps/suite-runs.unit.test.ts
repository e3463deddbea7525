/**
 * Repeated runs and several models summed up (pass rate, mean success rate and spread, precision,
 * recall, tokens), compared with a suite's previous run, and shown as a table per model.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { TestResult } from '../../../src/api/operations.js';
import { Output } from '../../../src/cli/output.js';
import { renderReport, type CaseReport, type TestReport } from '../../../src/cli/render/test-result.js';
import { compareSuiteRuns, type SuiteRunRecord } from '../../../src/cli/steps/suite-compare.js';
import { summarizeRuns, type ModelSummary } from '../../../src/cli/steps/suite-stats.js';

function run(name: string, model: string, rate: number, extra: Partial<TestResult> = {}): CaseReport {
  const passed = rate >= 0.8;
  return {
    name,
    message: `${name}?`,
    case_index: name.charCodeAt(0),
    ai_model: model,
    passed,
    failures: passed ? [] : [`success rate ${rate * 100}% is below 80%`],
    min_success_rate: 0.8,
    band: { label: 'good', level: 'ok' },
    guidance: { band: 'good', causes: [] },
    result: {
      ai_response: 'done',
      tools_used: ['add'],
      resources_accessed: [],
      execution_time: 0.5,
      success_rate: rate,
      ai_model: model,
      ...extra,
    },
  };
}

describe('summarizeRuns', () => {
  it('gives each case its pass rate, the mean success rate and its spread, per model', () => {
    const [local] = summarizeRuns([run('add', 'local', 1), run('add', 'local', 0.5), run('add', 'local', 1)], 0.6);
    const add = local!.cases[0]!;
    expect(add).toMatchObject({ name: 'add', ai_model: 'local', runs: 3, passed_runs: 2, passed: true });
    expect(add.pass_rate).toBeCloseTo(2 / 3);
    expect(add.success_rate.mean).toBeCloseTo(2.5 / 3);
    expect(add.success_rate).toMatchObject({ min: 0.5, max: 1 });
    expect(add.success_rate.stddev).toBeCloseTo(Math.sqrt(((1 / 6) ** 2 * 2 + (1 / 3) ** 2) / 3));
    expect(add.failures).toEqual(['success rate 50% is below 80% (1 of 3 runs)']);
  });

  it('fails a case whose pass rate is below the one required (every run by default)', () => {
    const [local] = summarizeRuns([run('add', 'local', 1), run('add', 'local', 0.5)]);
    expect(local!.cases[0]!.passed).toBe(false);
    expect(summarizeRuns([run('add', 'local', 1), run('add', 'local', 0.5)], 0.5)[0]!.cases[0]!.passed).toBe(true);
  });

  it('groups by model, in the order they ran, with precision, recall and tokens when reported', () => {
    const models = summarizeRuns([
      run('add', 'a', 1, { evaluation: { precision: 1, recall: 0.5 }, usage: { input_tokens: 10, output_tokens: 5 } }),
      run('sub', 'a', 0),
      run('add', 'b', 1),
    ]);
    expect(models.map((m) => m.ai_model)).toEqual(['a', 'b']);
    expect(models[0]).toMatchObject({ passed_cases: 1, pass_rate: 0.5, mean_success_rate: 0.5, tokens: 15 });
    expect(models[0]!.cases[0]).toMatchObject({ precision: 1, recall: 0.5, tokens: 15 });
    expect(models[0]!.cases[1]!.precision).toBeUndefined();
    expect(models[1]!.tokens).toBeUndefined();
  });
});

function stored(models: ModelSummary[]): SuiteRunRecord {
  return {
    suite: 'calc /x/server.yaml',
    server: 'calc',
    file: '/x/server.yaml',
    created_at: '2026-01-31T12:00:00.000Z',
    mcp_id: 'mcp_before',
    runs: 3,
    models,
  };
}

describe('compareSuiteRuns', () => {
  const before = summarizeRuns([run('add', 'local', 1), run('sub', 'local', 0.5), run('mul', 'local', 1)]);

  it('names the cases whose rates dropped, the fixed and the new ones', () => {
    const now = summarizeRuns([run('add', 'local', 0.5), run('sub', 'local', 1), run('div', 'local', 1)]);
    const comparison = compareSuiteRuns(stored(before), now);
    const byName = Object.fromEntries(comparison.changes.map((c) => [c.name, c]));
    expect(byName.add).toMatchObject({
      change: 'regressed',
      newly_failing: true,
      before: { pass_rate: 1, mean_success_rate: 1 },
      now: { pass_rate: 0, mean_success_rate: 0.5 },
    });
    expect(byName.sub).toMatchObject({ change: 'improved', fixed: true });
    expect(byName.div!.change).toBe('new');
    expect(byName.mul!.change).toBe('gone');
    expect(comparison.regressions).toBe(1);
    expect(comparison.previous).toEqual({ created_at: '2026-01-31T12:00:00.000Z', mcp_id: 'mcp_before', runs: 3 });
  });

  it('counts a drop within the tolerance as unchanged, and one beyond it as a regression', () => {
    const at = (rate: number) => summarizeRuns([run('add', 'local', rate)], 0);
    expect(compareSuiteRuns(stored(at(1)), at(0.95)).changes[0]!.change).toBe('unchanged');
    expect(compareSuiteRuns(stored(at(1)), at(0.9)).changes[0]!.change).toBe('regressed');
    expect(compareSuiteRuns(stored(at(1)), at(0.9), 0.2).changes[0]!.change).toBe('unchanged');
  });

  it('says when there is nothing to compare with', () => {
    const comparison = compareSuiteRuns(undefined, before);
    expect(comparison.previous).toBeUndefined();
    expect(comparison.regressions).toBe(0);
    expect(comparison.changes.every((c) => c.change === 'new')).toBe(true);
  });
});

describe('the per-model table', () => {
  function printed(report: TestReport): string {
    const stdout = new PassThrough();
    const chunks: Buffer[] = [];
    stdout.on('data', (c: Buffer) => chunks.push(c));
    const out = new Output({ stdout, stderr: new PassThrough(), json: false, quiet: false, color: false, ci: true });
    out.result(report, (p) => renderReport(p, report, false), { always: true });
    return Buffer.concat(chunks).toString('utf8');
  }

  it('shows each model, then each case with its runs passed and the spread of its success rate', () => {
    const cases = [
      run('add', 'mcpctl-local', 1, { evaluation: { precision: 1, recall: 1 } }),
      run('add', 'mcpctl-local', 1, { evaluation: { precision: 1, recall: 1 } }),
      run('add', 'local-llm', 1, { usage: { input_tokens: 100, output_tokens: 20 } }),
      run('add', 'local-llm', 0.5, { usage: { input_tokens: 100, output_tokens: 20 } }),
    ].map((c, i) => ({ ...c, run: (i % 2) + 1 }));
    const models = summarizeRuns(cases);
    const text = printed({
      passed: false,
      mcp_id: 'mcp_1',
      threshold: 0.8,
      runs: 2,
      pass_rate: 1,
      models,
      cases,
    });
    expect(text).toMatch(/model\s+cases passed\s+pass rate\s+success rate\s+precision\s+recall\s+tokens\s+time/);
    expect(text).toMatch(/mcpctl-local\s+1 of 1\s+100%\s+100%\s+100%\s+100%\s+–/);
    expect(text).toMatch(/local-llm\s+0 of 1\s+50%\s+75%\s+–\s+–\s+240/);
    expect(text).toContain('local-llm: 0 of 1 passed');
    expect(text).toMatch(/✖\s+add\s+1 of 2 \(50%\)\s+75% \(50%–100%\)\s+120/);
    // the failing run's causes are shown once
    expect(text.match(/is below 80%/g)).toHaveLength(1);
    expect(text).toContain('1 of 2 cases over 2 models passed (threshold 0.8, 2 runs each, pass rate 100%)');
  });
});
