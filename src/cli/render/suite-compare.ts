/**
 * What changed since the suite's previous run, for people: each case and model whose pass rate or
 * mean success rate moved (before → now), the new and the gone, and a count of the unchanged.
 */
import type { Printer } from '../output.js';
import type { CaseChange, SuiteComparison } from '../steps/suite-compare.js';
import { formatRate, formatTime } from './format.js';
import { serviceText } from './service-text.js';

function move(before: number | undefined, now: number | undefined): string {
  return `${before === undefined ? '–' : formatRate(before)} → ${now === undefined ? '–' : formatRate(now)}`;
}

function what(c: CaseChange): string {
  if (c.newly_failing) return 'regressed: fails now';
  if (c.fixed) return 'fixed';
  if (c.change === 'gone') return 'not run now';
  if (c.change === 'new') return 'new';
  return c.change;
}

export function renderComparison(p: Printer, comparison: SuiteComparison): void {
  const s = p.style;
  const previous = comparison.previous;
  if (previous === undefined) {
    p.text(`${s.dim('compare:')} this is the first kept run of this suite; the next run is compared with it`);
    p.line();
    return;
  }
  const when = formatTime(previous.created_at);
  p.line(s.bold(`Since the previous run (${when}, ${previous.mcp_id}, ${previous.runs} runs each):`));
  const moved = comparison.changes.filter((c) => c.change !== 'unchanged');
  const unchanged = comparison.changes.length - moved.length;
  if (moved.length > 0) {
    const colour = (c: CaseChange) =>
      c.change === 'regressed' ? s.red : c.change === 'improved' ? s.green : (text: string) => text;
    p.table(
      ['case', 'model', 'pass rate', 'success rate', 'change'],
      moved.map((c) => [
        c.name,
        serviceText(c.ai_model),
        move(c.before?.pass_rate, c.now?.pass_rate),
        move(c.before?.mean_success_rate, c.now?.mean_success_rate),
        colour(c)(what(c)),
      ]),
    );
  }
  const counts = [
    `${comparison.regressions} ${comparison.regressions === 1 ? 'regression' : 'regressions'}`,
    `${comparison.changes.filter((c) => c.fixed).length} fixed`,
    `${unchanged} unchanged`,
  ];
  p.text(`${counts.join(', ')} (a drop of more than ${formatRate(comparison.tolerance)} is a regression)`);
  p.line();
}
