/**
 * How a test run reads for people: the agent's reply, what it used, the success rate and its
 * band, and each cause of the guidance with where the tools it names are defined. The reply, tool
 * names and causes come from the service: their control characters are shown as text.
 */
import type { TestResult } from '../../api/operations.js';
import type { Printer } from '../output.js';
import { evaluationFields } from './evaluation.js';
import { formatList, formatRate, formatSeconds } from './format.js';
import { serviceData, serviceLines, serviceText } from './service-text.js';
import type { SuiteComparison } from '../steps/suite-compare.js';
import { renderComparison } from './suite-compare.js';
import type { CaseSummary, ModelSummary } from '../steps/suite-stats.js';

type Guidance = NonNullable<TestResult['guidance']>;

export interface CaseReport {
  name: string;
  message: string;
  /** the case's index in the file's tests.cases */
  case_index?: number;
  ai_model?: string;
  user_id?: string;
  passed: boolean;
  /** what fell short: the success rate or an expectation */
  failures: string[];
  /** the success rate this case had to reach */
  min_success_rate: number;
  band: { label: string; level: 'ok' | 'warn' | 'bad' };
  /** the service's guidance, or the CLI's when the service sends none */
  guidance: Guidance;
  result: TestResult;
  /** with --runs above 1: which run of the case this was, from 1 */
  run?: number;
}

export interface TestReport {
  passed: boolean;
  mcp_id: string;
  server?: string;
  threshold: number;
  /** how many times each case ran */
  runs: number;
  /** the share of its runs a case had to pass */
  pass_rate: number;
  /** the runs summed up per model, then per case */
  models: ModelSummary[];
  /** every run of every case */
  cases: CaseReport[];
  /** with --compare (or --fail-on-regression): what changed since the suite's previous run */
  comparison?: SuiteComparison;
  /** with --fail-on-regression: the comparison found a regression, which fails the gate */
  regressed?: boolean;
}

/** Where a tool is defined (`server.yaml:12:5`), when the definition file is at hand. */
export type LocateTool = (tool: string) => string | undefined;

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line, i) => (i === 0 ? line : `${prefix}${line}`))
    .join('\n');
}

export function renderCase(p: Printer, answer: CaseReport, locateTool: LocateTool = () => undefined): void {
  const s = p.style;
  const report = serviceData(answer);
  const r = report.result;
  // the message and the reply keep their line breaks
  const reply = serviceLines(answer.result.ai_response);
  p.line(`${report.passed ? s.green('✔') : s.red('✖')} ${s.bold(report.name)}`);
  const bandColour = report.band.level === 'ok' ? s.green : report.band.level === 'warn' ? s.yellow : s.red;
  p.fields([
    ['message', indent(serviceLines(answer.message), ' '.repeat(18))],
    ['model', r.ai_model ?? report.ai_model],
    ['user', report.user_id],
    ['reply', indent(reply === '' ? s.dim('(empty)') : reply, ' '.repeat(18))],
    ['tools used', formatList(r.tools_used)],
    ['resources', formatList(r.resources_accessed)],
    ['execution time', formatSeconds(r.execution_time)],
    ['success rate', `${bandColour(`${formatRate(r.success_rate)}`)} (${report.band.label})`],
    ...evaluationFields(r),
  ]);
  for (const cause of report.guidance.causes) {
    p.text(`  ${s.yellow('cause')} ${s.bold(cause.kind)}: ${cause.message}`, 4);
    for (const tool of cause.tools ?? []) {
      const where = locateTool(tool);
      if (where !== undefined) p.text(`        ${s.dim('→')} ${tool} is defined at ${where}`);
    }
  }
  for (const failure of report.failures) p.text(`  ${s.red('✖')} ${failure}`);
  p.line();
}

export function renderReport(p: Printer, report: TestReport, quiet: boolean, locateTool?: LocateTool): void {
  const summaries = report.models.flatMap((m) => m.cases);
  const passed = summaries.filter((c) => c.passed).length;
  const several = report.runs > 1 || report.models.length > 1;
  // the summary is the CLI's own words and numbers
  const noun = summaries.length === 1 ? 'case' : 'cases';
  const over = report.models.length > 1 ? ` over ${report.models.length} models` : '';
  const runs = report.runs > 1 ? `, ${report.runs} runs each, pass rate ${formatRate(report.pass_rate)}` : '';
  const summary = `${passed} of ${summaries.length} ${noun}${over} passed (threshold ${report.threshold}${runs})`;
  if (quiet) {
    p.line(summary);
    return;
  }
  if (several) {
    // one run of each failing case shows its causes; the tables sum up the rest
    const shown = new Set<string>();
    for (const c of report.cases) {
      const key = `${c.ai_model ?? c.result.ai_model ?? ''} ${c.case_index ?? ''} ${c.name}`;
      if (c.passed || shown.has(key)) continue;
      shown.add(key);
      renderCase(p, c.run === undefined ? c : { ...c, name: `${c.name} (run ${c.run} of ${report.runs})` }, locateTool);
    }
    renderModels(p, report.models);
  } else for (const c of report.cases) renderCase(p, c, locateTool);
  if (report.comparison !== undefined) renderComparison(p, report.comparison);
  if (report.passed) p.success(summary);
  else
    p.text(
      `${p.style.red('✖')} ${summary}${report.regressed === true ? ', but some regressed since the previous run' : ''}`,
    );
}

/** A rate for a table: a percentage, or a dash when not reported. */
function rateCell(rate: number | undefined): string {
  return rate === undefined ? '–' : formatRate(rate);
}

function spreadCell(c: CaseSummary): string {
  const { mean, min, max } = c.success_rate;
  return c.runs === 1 || min === max ? formatRate(mean) : `${formatRate(mean)} (${formatRate(min)}–${formatRate(max)})`;
}

/**
 * The runs summed up: one table of the models when there are several, then each model's cases
 * with their pass rate and the spread of their success rate. Precision, recall and tokens appear
 * when the service reports them.
 */
export function renderModels(p: Printer, models: readonly ModelSummary[]): void {
  const s = p.style;
  const metrics = (rows: ReadonlyArray<{ precision?: number; recall?: number; tokens?: number }>) => ({
    quality: rows.some((r) => r.precision !== undefined || r.recall !== undefined),
    tokens: rows.some((r) => r.tokens !== undefined),
  });
  if (models.length > 1) {
    const show = metrics(models);
    p.table(
      [
        'model',
        'cases passed',
        'pass rate',
        'success rate',
        ...(show.quality ? ['precision', 'recall'] : []),
        ...(show.tokens ? ['tokens'] : []),
        'time',
      ],
      models.map((m) => [
        serviceText(m.ai_model),
        `${m.passed_cases} of ${m.cases.length}`,
        formatRate(m.pass_rate),
        formatRate(m.mean_success_rate),
        ...(show.quality ? [rateCell(m.precision), rateCell(m.recall)] : []),
        ...(show.tokens ? [m.tokens === undefined ? '–' : String(Math.round(m.tokens))] : []),
        formatSeconds(m.duration) ?? '–',
      ]),
    );
    p.line();
  }
  for (const m of models) {
    const show = metrics(m.cases);
    p.line(s.bold(`${serviceText(m.ai_model)}: ${m.passed_cases} of ${m.cases.length} passed`));
    p.table(
      [
        '',
        'case',
        'runs passed',
        'success rate',
        ...(show.quality ? ['precision', 'recall'] : []),
        ...(show.tokens ? ['tokens/run'] : []),
        'time/run',
      ],
      m.cases.map((c) => [
        c.passed ? s.green('✔') : s.red('✖'),
        c.name,
        `${c.passed_runs} of ${c.runs} (${formatRate(c.pass_rate)})`,
        spreadCell(c),
        ...(show.quality ? [rateCell(c.precision), rateCell(c.recall)] : []),
        ...(show.tokens ? [c.tokens === undefined ? '–' : String(Math.round(c.tokens))] : []),
        formatSeconds(c.duration) ?? '–',
      ]),
    );
    p.line();
  }
}
