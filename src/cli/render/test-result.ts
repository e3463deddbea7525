/** How a test run reads for people: the agent's reply, what it used, the success rate and its band. */
import { LIKELY_CAUSES, type TestResult } from '../../api/contract.js';
import type { Printer } from '../output.js';
import { formatList, formatRate, formatSeconds } from './format.js';

export interface CaseReport {
  name: string;
  message: string;
  ai_model?: string;
  user_id?: string;
  passed: boolean;
  /** what fell short: the success rate or an expectation */
  failures: string[];
  /** the success rate this case had to reach */
  min_success_rate: number;
  band: { label: string; level: 'ok' | 'warn' | 'bad' };
  result: TestResult;
}

export interface TestReport {
  passed: boolean;
  mcp_id: string;
  server?: string;
  threshold: number;
  cases: CaseReport[];
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line, i) => (i === 0 ? line : `${prefix}${line}`))
    .join('\n');
}

export function renderCase(p: Printer, report: CaseReport): void {
  const s = p.style;
  const r = report.result;
  p.line(`${report.passed ? s.green('✔') : s.red('✖')} ${s.bold(report.name)}`);
  const bandColour = report.band.level === 'ok' ? s.green : report.band.level === 'warn' ? s.yellow : s.red;
  const failedCalls = (r.tool_calls ?? []).filter((c) => !c.ok);
  p.fields([
    ['message', indent(report.message, ' '.repeat(18))],
    ['model', r.ai_model ?? report.ai_model],
    ['user', report.user_id],
    ['reply', indent(r.ai_response === '' ? s.dim('(empty)') : r.ai_response, ' '.repeat(18))],
    ['tools used', formatList(r.tools_used)],
    ['resources', formatList(r.resources_accessed)],
    ['execution time', formatSeconds(r.execution_time)],
    ['success rate', `${bandColour(`${formatRate(r.success_rate)}`)} (${report.band.label})`],
  ]);
  for (const call of failedCalls) p.line(`    ${s.red('failed call')} ${call.name}${call.error === undefined ? '' : `: ${call.error}`}`);
  if (r.success_rate < 1) {
    p.line(`  ${s.dim('likely causes:')}`);
    for (const cause of LIKELY_CAUSES) p.line(`    ${s.dim('-')} ${cause}`);
  } else if (r.tools_used.length === 0 && r.resources_accessed.length === 0) {
    // A rate of 1 with nothing used is vacuous: the spec's last cause is the likely one.
    p.warn(`no tool or resource was used: ${LIKELY_CAUSES[3]}, or ${LIKELY_CAUSES[1]}`);
  }
  for (const failure of report.failures) p.line(`  ${s.red('✖')} ${failure}`);
  p.line();
}

export function renderReport(p: Printer, report: TestReport, quiet: boolean): void {
  const passed = report.cases.filter((c) => c.passed).length;
  const summary = `${passed} of ${report.cases.length} ${report.cases.length === 1 ? 'case' : 'cases'} passed (threshold ${report.threshold})`;
  if (quiet) {
    p.line(summary);
    return;
  }
  for (const c of report.cases) renderCase(p, c);
  if (report.passed) p.success(summary);
  else p.line(`${p.style.red('✖')} ${summary}`);
}
