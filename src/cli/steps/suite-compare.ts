/**
 * What changed between two runs of the same suite, per case and model: pass rate and mean success
 * rate before and now, the cases that fail now and passed before, and those fixed. A drop of more
 * than the tolerance in either rate, or a case that newly fails, is a regression. Pure: no IO.
 */
import type { ModelSummary } from './suite-stats.js';

/** Drops up to this much (either rate, 0 to 1) are noise, not a regression. */
export const REGRESSION_TOLERANCE = 0.05;

/** One stored run of a suite: what the comparison needs of it. */
export interface SuiteRunRecord {
  /** the suite's key: the server's name and the definition file's path */
  suite: string;
  server: string;
  file: string;
  created_at: string;
  mcp_id: string;
  /** runs of each case */
  runs: number;
  models: ModelSummary[];
}

export interface Rates {
  pass_rate: number;
  mean_success_rate: number;
  passed: boolean;
}

export type ChangeKind = 'regressed' | 'improved' | 'unchanged' | 'new' | 'gone';

export interface CaseChange {
  name: string;
  ai_model: string;
  change: ChangeKind;
  before?: Rates;
  now?: Rates;
  /** failed now, passed before */
  newly_failing: boolean;
  /** passes now, failed before */
  fixed: boolean;
}

export interface SuiteComparison {
  /** the run compared with; absent when this is the suite's first stored run */
  previous?: { created_at: string; mcp_id: string; runs: number };
  tolerance: number;
  changes: CaseChange[];
  /** how many changes are regressions */
  regressions: number;
}

function ratesOf(models: readonly ModelSummary[]): Map<string, Rates & { name: string; ai_model: string }> {
  const rates = new Map<string, Rates & { name: string; ai_model: string }>();
  for (const m of models) {
    for (const c of m.cases) {
      rates.set(`${m.ai_model}\u0000${c.name}`, {
        name: c.name,
        ai_model: m.ai_model,
        pass_rate: c.pass_rate,
        mean_success_rate: c.success_rate.mean,
        passed: c.passed,
      });
    }
  }
  return rates;
}

function kindOf(before: Rates, now: Rates, tolerance: number): ChangeKind {
  const passDrop = before.pass_rate - now.pass_rate;
  const rateDrop = before.mean_success_rate - now.mean_success_rate;
  // a hair over the tolerance from floating-point sums is not a change
  const beyond = (delta: number) => delta > tolerance + 1e-9;
  if (beyond(passDrop) || beyond(rateDrop) || (before.passed && !now.passed)) return 'regressed';
  if (beyond(-passDrop) || beyond(-rateDrop) || (!before.passed && now.passed)) return 'improved';
  return 'unchanged';
}

/** Compares this run's summaries with the previous run of the suite (undefined when there is none). */
export function compareSuiteRuns(
  previous: SuiteRunRecord | undefined,
  now: readonly ModelSummary[],
  tolerance: number = REGRESSION_TOLERANCE,
): SuiteComparison {
  const after = ratesOf(now);
  if (previous === undefined) {
    const changes = [...after.values()].map(({ name, ai_model, ...rates }) => ({
      name,
      ai_model,
      change: 'new' as const,
      now: rates,
      newly_failing: false,
      fixed: false,
    }));
    return { tolerance, changes, regressions: 0 };
  }
  const before = ratesOf(previous.models);
  const changes: CaseChange[] = [];
  for (const [key, { name, ai_model, ...rates }] of after) {
    const old = before.get(key);
    if (old === undefined) {
      changes.push({ name, ai_model, change: 'new', now: rates, newly_failing: false, fixed: false });
      continue;
    }
    const { name: _n, ai_model: _m, ...was } = old;
    changes.push({
      name,
      ai_model,
      change: kindOf(was, rates, tolerance),
      before: was,
      now: rates,
      newly_failing: was.passed && !rates.passed,
      fixed: !was.passed && rates.passed,
    });
  }
  for (const [key, { name, ai_model, ...was }] of before) {
    if (!after.has(key))
      changes.push({ name, ai_model, change: 'gone', before: was, newly_failing: false, fixed: false });
  }
  return {
    previous: { created_at: previous.created_at, mcp_id: previous.mcp_id, runs: previous.runs },
    tolerance,
    changes,
    regressions: changes.filter((c) => c.change === 'regressed').length,
  };
}
