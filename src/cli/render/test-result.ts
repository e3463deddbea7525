/**
 * How a test run reads for people: the agent's reply, what it used, the success rate and its
 * band, and each cause of the guidance with where the tools it names are defined. The reply, tool
 * names and causes come from the service: their control characters are shown as text.
 */
import type { TestResult } from '../../api/operations.js';
import type { Printer } from '../output.js';
import { formatList, formatRate, formatSeconds } from './format.js';
import { serviceData, serviceLines } from './service-text.js';

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
}

export interface TestReport {
  passed: boolean;
  mcp_id: string;
  server?: string;
  threshold: number;
  cases: CaseReport[];
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
  const passed = report.cases.filter((c) => c.passed).length;
  // the summary is the CLI's own words and numbers
  const summary = `${passed} of ${report.cases.length} ${report.cases.length === 1 ? 'case' : 'cases'} passed (threshold ${report.threshold})`;
  if (quiet) {
    p.line(summary);
    return;
  }
  for (const c of report.cases) renderCase(p, c, locateTool);
  if (report.passed) p.success(summary);
  else p.text(`${p.style.red('✖')} ${summary}`);
}
