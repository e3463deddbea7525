/**
 * A test report for CI: GitHub annotations on the lines of the file, and a JUnit XML report, one
 * test case per run.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { CommandContext } from '../context.js';
import { UserError } from '../../shared/errors.js';
import { serviceText } from '../render/service-text.js';
import { toJUnitXml } from '../render/junit.js';
import type { CaseReport, TestReport } from '../render/test-result.js';
import { locateTool, type DefinitionFile } from './definition-file.js';
import { modelOf } from './suite-stats.js';

/**
 * In GitHub Actions: each failed case as an error on its line of the file (or, for a --message
 * run, on the first tool its causes name), and each cause that names a tool as a warning there.
 */
export function annotateReport(ctx: CommandContext, report: TestReport, file: DefinitionFile | undefined): void {
  if (!ctx.out.inGithubActions) return;
  const toolAt = (tool: string) => (file === undefined ? undefined : locateTool(file, tool));
  const warned = new Set<string>();
  // with --runs, a case that fails in several runs is one annotation
  const annotated = new Set<string>();
  for (const c of report.cases) {
    const key = `${modelOf(c)} ${c.case_index ?? ''} ${c.name}`;
    if (!c.passed && !annotated.has(key)) {
      annotated.add(key);
      const firstTool = c.guidance.causes.flatMap((cause) => cause.tools ?? [])[0];
      const where =
        file !== undefined && c.case_index !== undefined
          ? file.locate(`tests.cases[${c.case_index}]`)
          : firstTool === undefined
            ? undefined
            : toolAt(firstTool);
      const causes = c.guidance.causes.map((cause) => cause.kind);
      ctx.out.annotate(
        'error',
        serviceText(
          `test case "${runName(report, c)}" failed: ${c.failures.join('; ')}${causes.length === 0 ? '' : ` (causes: ${causes.join(', ')})`}`,
        ),
        where,
        'mcpctl test',
      );
    }
    for (const cause of c.guidance.causes) {
      for (const tool of cause.tools ?? []) {
        const where = toolAt(tool);
        if (where === undefined || warned.has(`${cause.kind} ${tool}`)) continue;
        warned.add(`${cause.kind} ${tool}`);
        ctx.out.annotate(
          'warning',
          serviceText(`${cause.kind}: ${cause.message}`),
          where,
          serviceText(`mcpctl test: ${tool}`),
        );
      }
    }
  }
}

/** A run's name in reports: the case's, with its model and run when there are several. */
export function runName(report: TestReport, c: CaseReport): string {
  const model = report.models.length > 1 ? ` [${modelOf(c)}]` : '';
  return `${c.name}${model}${c.run === undefined ? '' : ` #${c.run}`}`;
}

/** Writes the JUnit XML report of --junit. */
export async function writeJUnit(ctx: CommandContext, path: string, report: TestReport): Promise<void> {
  const xml = toJUnitXml({
    name: report.server ?? report.mcp_id,
    timestamp: new Date().toISOString(),
    cases: report.cases.map((c) => ({
      name: runName(report, c),
      time: c.result.execution_time,
      failures: [
        ...c.failures,
        ...(c.passed ? [] : c.guidance.causes.map((cause) => `${cause.kind}: ${cause.message}`)),
      ],
      output: [
        `message: ${c.message}`,
        `reply: ${c.result.ai_response}`,
        `tools used: ${c.result.tools_used.join(', ') || 'none'}`,
        `resources accessed: ${c.result.resources_accessed.join(', ') || 'none'}`,
        `success rate: ${c.result.success_rate} (${c.band.label})`,
        ...c.guidance.causes.map((cause) => `cause ${cause.kind}: ${cause.message}`),
      ].join('\n'),
    })),
  });
  const absolute = resolve(ctx.io.cwd, path);
  try {
    await mkdir(dirname(absolute), { recursive: true });
    await writeFile(absolute, xml);
  } catch (error) {
    throw new UserError(`cannot write the JUnit report ${path}: ${(error as Error).message}`, {
      hint: 'check the path given to --junit',
    });
  }
}
