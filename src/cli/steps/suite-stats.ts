/**
 * What repeated runs of a suite add up to, per model and case: how many runs passed, the mean
 * success rate and its spread, and the tool-selection precision and recall, tokens and duration
 * when the service reports them. A case passes when its pass rate reaches the one required
 * (`--pass-rate`). Pure: no IO.
 */
import type { TestResult } from '../../api/operations.js';
import type { CaseReport } from '../render/test-result.js';

/** The model of runs whose request named none and whose result does not say: the service's default. */
export const DEFAULT_MODEL_LABEL = 'default';

/** A case passes when at least this share of its runs passed, unless `--pass-rate` says otherwise. */
export const DEFAULT_PASS_RATE = 1;

/** A success rate over several runs: the mean, the lowest and highest, and the standard deviation. */
export interface RateSpread {
  mean: number;
  min: number;
  max: number;
  stddev: number;
}

/** One case of the suite as one model did it over every run. */
export interface CaseSummary {
  name: string;
  case_index?: number;
  ai_model: string;
  runs: number;
  passed_runs: number;
  /** passed_runs / runs */
  pass_rate: number;
  /** pass_rate reached the pass rate required */
  passed: boolean;
  success_rate: RateSpread;
  /** means over the runs that report them */
  precision?: number;
  recall?: number;
  /** mean tokens per run, when the model reports them */
  tokens?: number;
  /** mean seconds per run */
  duration: number;
  /** what fell short, each with how many runs it happened in */
  failures: string[];
}

/** One model over the whole suite. */
export interface ModelSummary {
  ai_model: string;
  cases: CaseSummary[];
  passed_cases: number;
  /** runs passing / runs, over every case */
  pass_rate: number;
  mean_success_rate: number;
  precision?: number;
  recall?: number;
  /** tokens of every run, when the model reports them */
  tokens?: number;
  /** seconds of every run */
  duration: number;
}

/** What the service may report of a run beyond the success rate (older services do not). */
interface RunMetrics {
  precision?: number;
  recall?: number;
  tokens?: number;
}

/** Precision, recall and tokens of a run, when its result has them. */
export function runMetrics(result: TestResult): RunMetrics {
  const { precision, recall } = result.evaluation ?? {};
  const usage = result.usage;
  return {
    ...(precision === undefined ? {} : { precision }),
    ...(recall === undefined ? {} : { recall }),
    ...(usage === undefined ? {} : { tokens: usage.input_tokens + usage.output_tokens }),
  };
}

/** The model a run used: the one it asked for, else the one the service says it used. */
export function modelOf(run: Pick<CaseReport, 'ai_model' | 'result'>): string {
  return run.ai_model ?? run.result.ai_model ?? DEFAULT_MODEL_LABEL;
}

function mean(values: readonly number[]): number | undefined {
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;
}

export function spreadOf(values: readonly number[]): RateSpread {
  const m = mean(values) ?? 0;
  const variance = mean(values.map((v) => (v - m) ** 2)) ?? 0;
  return {
    mean: m,
    min: values.length === 0 ? 0 : Math.min(...values),
    max: values.length === 0 ? 0 : Math.max(...values),
    stddev: Math.sqrt(variance),
  };
}

/** The failures of the runs, each once, with how many runs it happened in when there were several. */
function countFailures(runs: readonly CaseReport[]): string[] {
  const counts = new Map<string, number>();
  for (const run of runs) for (const f of new Set(run.failures)) counts.set(f, (counts.get(f) ?? 0) + 1);
  return [...counts].map(([f, n]) => (runs.length === 1 ? f : `${f} (${n} of ${runs.length} runs)`));
}

/** Means of what the runs report, left out when none reports it. */
function metricMeans(results: readonly TestResult[]): RunMetrics {
  const metrics = results.map(runMetrics);
  const of = (key: keyof RunMetrics) => mean(metrics.flatMap((m) => (m[key] === undefined ? [] : [m[key]])));
  const precision = of('precision');
  const recall = of('recall');
  const tokens = of('tokens');
  return {
    ...(precision === undefined ? {} : { precision }),
    ...(recall === undefined ? {} : { recall }),
    ...(tokens === undefined ? {} : { tokens }),
  };
}

function summarizeCase(runs: readonly CaseReport[], model: string, passRate: number): CaseSummary {
  const first = runs[0]!;
  const passed = runs.filter((r) => r.passed).length;
  const rate = passed / runs.length;
  return {
    name: first.name,
    ...(first.case_index === undefined ? {} : { case_index: first.case_index }),
    ai_model: model,
    runs: runs.length,
    passed_runs: passed,
    pass_rate: rate,
    // a tiny tolerance so that 2 of 3 runs reach a required 0.66…
    passed: rate >= passRate - 1e-9,
    success_rate: spreadOf(runs.map((r) => r.result.success_rate)),
    ...metricMeans(runs.map((r) => r.result)),
    duration: mean(runs.map((r) => r.result.execution_time)) ?? 0,
    failures: countFailures(runs),
  };
}

/**
 * Groups the runs by model, then by case (in the order they ran), and sums each up. A case is
 * known by its name and its index in the file, so two cases of one name stay apart.
 */
export function summarizeRuns(runs: readonly CaseReport[], passRate: number = DEFAULT_PASS_RATE): ModelSummary[] {
  const byModel = new Map<string, Map<string, CaseReport[]>>();
  for (const run of runs) {
    const model = modelOf(run);
    const cases = byModel.get(model) ?? new Map<string, CaseReport[]>();
    byModel.set(model, cases);
    const key = `${run.case_index ?? ''}\u0000${run.name}`;
    cases.set(key, [...(cases.get(key) ?? []), run]);
  }
  return [...byModel].map(([model, cases]) => {
    const summaries = [...cases.values()].map((r) => summarizeCase(r, model, passRate));
    const all = [...cases.values()].flat();
    const tokens = all.map((r) => runMetrics(r.result).tokens).filter((t): t is number => t !== undefined);
    const { precision, recall } = metricMeans(all.map((r) => r.result));
    return {
      ai_model: model,
      cases: summaries,
      passed_cases: summaries.filter((c) => c.passed).length,
      pass_rate: all.filter((r) => r.passed).length / all.length,
      mean_success_rate: mean(all.map((r) => r.result.success_rate)) ?? 0,
      ...(precision === undefined ? {} : { precision }),
      ...(recall === undefined ? {} : { recall }),
      ...(tokens.length === 0 ? {} : { tokens: tokens.reduce((a, b) => a + b, 0) }),
      duration: all.reduce((sum, r) => sum + r.result.execution_time, 0),
    };
  });
}
