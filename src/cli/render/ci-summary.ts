/**
 * Markdown for a CI job summary ($GITHUB_STEP_SUMMARY): test cases with their rates and causes,
 * a deployment with its URL, and the steps of `mcpctl up`. Pure.
 */
import type { Deployment, McpServer } from '../../api/operations.js';
import { connectUrl, shownStableUrls } from './deployment.js';
import { formatRate, formatSeconds } from './format.js';
import type { TestReport } from './test-result.js';

/** A Markdown table cell: no line breaks, no unescaped pipes. */
export function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

const PASS = '✅';
const FAIL = '❌';

export function testSummary(report: TestReport, heading = true): string {
  // with --runs or several models, a case of each model counts once, summed over its runs
  const summaries = report.models.flatMap((m) => m.cases);
  const passed = summaries.filter((c) => c.passed).length;
  const lines: string[] = [];
  if (heading) {
    lines.push(
      `### ${report.passed ? PASS : FAIL} mcpctl test: ${report.server ?? report.mcp_id} — ${passed} of ${summaries.length} ${summaries.length === 1 ? 'case' : 'cases'} passed`,
      '',
    );
  }
  lines.push('| case | result | success rate | tools used | resources read |', '|---|---|---|---|---|');
  for (const c of report.cases) {
    lines.push(
      `| ${cell(c.name)}${c.run === undefined ? '' : ` #${c.run}`} | ${c.passed ? `${PASS} passed` : `${FAIL} failed`} | ${formatRate(c.result.success_rate)} (${cell(c.band.label)}) | ${cell(c.result.tools_used.join(', ') || '—')} | ${cell(c.result.resources_accessed.join(', ') || '—')} |`,
    );
  }
  lines.push('', `Threshold ${report.threshold}, server \`${report.mcp_id}\`.`);
  for (const c of report.cases) {
    if (c.failures.length === 0 && c.guidance.causes.length === 0) continue;
    lines.push('', `**${cell(c.name)}**${c.passed ? '' : ` ${FAIL}`}`, '');
    for (const failure of c.failures) lines.push(`- ${failure}`);
    for (const cause of c.guidance.causes) lines.push(`- \`${cause.kind}\`: ${cause.message}`);
  }
  return lines.join('\n');
}

export function deploymentSummary(deployment: Deployment, name: string, heading = true): string {
  const ok = deployment.status === 'deployed';
  const live = ok || deployment.status === 'deploying';
  const rows: Array<[string, string | undefined]> = [
    ['deployment', `\`${deployment.deployment_id}\``],
    ['status', deployment.status],
    ['environment', deployment.environment],
    ['url', deployment.url],
    ['mcp endpoint', live ? connectUrl(deployment) : undefined],
    ['domain URL', shownStableUrls(deployment)],
    ['health', live ? deployment.health_check : undefined],
    ['deploy time', formatSeconds(deployment.deploy_time)],
    ['reason', deployment.reason],
  ];
  const lines = heading ? [`### ${ok ? PASS : FAIL} mcpctl deploy: ${name} — ${deployment.status}`, ''] : [];
  lines.push('| | |', '|---|---|');
  for (const [key, value] of rows) if (value !== undefined && value !== '') lines.push(`| ${key} | ${cell(value)} |`);
  for (const notice of deployment.notices ?? []) lines.push('', `> ${cell(notice)}`);
  return lines.join('\n');
}

export type StepStatus = 'ok' | 'failed' | 'skipped';

export interface UpStepSummary {
  step: string;
  status: StepStatus;
  /** one line: what it did, or why it failed or was skipped */
  detail: string;
}

export function upSummary(input: {
  name: string;
  ok: boolean;
  steps: UpStepSummary[];
  server?: McpServer | undefined;
  tests?: TestReport | undefined;
  deployment?: Deployment | undefined;
}): string {
  const mark = { ok: PASS, failed: FAIL, skipped: '⏭️' } as const;
  const lines = [`### ${input.ok ? PASS : FAIL} mcpctl up: ${input.name}`, '', '| step | result | |', '|---|---|---|'];
  for (const step of input.steps)
    lines.push(`| ${step.step} | ${mark[step.status]} ${step.status} | ${cell(step.detail)} |`);
  if (input.tests !== undefined) lines.push('', '#### Tests', '', testSummary(input.tests, false));
  if (input.deployment !== undefined)
    lines.push('', '#### Deployment', '', deploymentSummary(input.deployment, input.name, false));
  return lines.join('\n');
}
