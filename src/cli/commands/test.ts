/**
 * `mcpctl test <mcp_id|file>`: let the service's AI agent use a server, one message (`--message`)
 * or every case of the file's `tests:`, and judge each against its threshold and expectations.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { MCP_ID_PATTERN, classifySuccessRate, type TestResult } from '../../api/contract.js';
import type { TestsConfig } from '../../definition/schema.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../errors.js';
import { formatRate } from '../render/format.js';
import { toJUnitXml } from '../render/junit.js';
import { renderReport, type CaseReport, type TestReport } from '../render/test-result.js';
import { buildDefinition, loadDefinitionFile, type DefinitionFile } from '../steps/definition-file.js';

export interface TestCommandOptions {
  message?: string;
  model?: string;
  userId?: string;
  threshold?: number;
  junit?: string;
}

type Expectations = NonNullable<TestsConfig['cases'][number]['expect']>;

export interface TestCaseSpec {
  name: string;
  message: string;
  model?: string;
  userId?: string;
  expect?: Expectations;
}

export const DEFAULT_THRESHOLD = 0.8;

/** What a result fell short of: the success rate, then each expectation. Empty when it passed. */
export function checkCase(result: TestResult, expect: Expectations | undefined, minRate: number): string[] {
  const failures: string[] = [];
  if (result.success_rate < minRate) {
    failures.push(`success rate ${formatRate(result.success_rate)} is below ${formatRate(minRate)}`);
  }
  if (expect === undefined) return failures;
  const used = new Set(result.tools_used);
  for (const tool of expect.tools ?? []) if (!used.has(tool)) failures.push(`expected the agent to call ${tool}; it did not`);
  for (const tool of expect.not_tools ?? []) if (used.has(tool)) failures.push(`the agent called ${tool}, which it should not`);
  const read = new Set(result.resources_accessed);
  for (const uri of expect.resources ?? []) if (!read.has(uri)) failures.push(`expected the agent to read ${uri}; it did not`);
  const reply = result.ai_response.toLowerCase();
  for (const text of expect.response_contains ?? []) {
    if (!reply.includes(text.toLowerCase())) failures.push(`expected the reply to contain "${text}"`);
  }
  return failures;
}

function plan(target: string, file: DefinitionFile | undefined, options: TestCommandOptions): TestCaseSpec[] {
  if (options.message !== undefined) {
    if (options.message.trim() === '') throw new UserError('--message is empty', { hint: 'pass the message for the agent: -m "…"' });
    return [{ name: 'message', message: options.message }];
  }
  const cases = file?.loaded.definition.tests?.cases;
  if (cases === undefined || cases.length === 0) {
    throw new UserError(file === undefined ? `nothing to test: pass --message with ${target}` : `${file.shown} has no tests: cases`, {
      hint:
        file === undefined
          ? `mcpctl test ${target} -m "What can you do?"`
          : `pass --message, or add a tests: section with cases to ${file.shown} (docs/definition.md)`,
    });
  }
  return cases.map((c) => ({
    name: c.name,
    message: c.message,
    ...(c.model === undefined ? {} : { model: c.model }),
    ...(c.user_id === undefined ? {} : { userId: c.user_id }),
    ...(c.expect === undefined ? {} : { expect: c.expect }),
  }));
}

async function writeJUnit(ctx: CommandContext, path: string, report: TestReport): Promise<void> {
  const xml = toJUnitXml({
    name: report.server ?? report.mcp_id,
    timestamp: new Date().toISOString(),
    cases: report.cases.map((c) => ({
      name: c.name,
      time: c.result.execution_time,
      failures: c.failures,
      output: [
        `message: ${c.message}`,
        `reply: ${c.result.ai_response}`,
        `tools used: ${c.result.tools_used.join(', ') || 'none'}`,
        `resources accessed: ${c.result.resources_accessed.join(', ') || 'none'}`,
        `success rate: ${c.result.success_rate} (${c.band.label})`,
      ].join('\n'),
    })),
  });
  const absolute = resolve(ctx.io.cwd, path);
  try {
    await mkdir(dirname(absolute), { recursive: true });
    await writeFile(absolute, xml);
  } catch (error) {
    throw new UserError(`cannot write the JUnit report ${path}: ${(error as Error).message}`, { hint: 'check the path given to --junit' });
  }
}

export async function testCommand(ctx: CommandContext, target: string, options: TestCommandOptions = {}): Promise<void> {
  const byId = MCP_ID_PATTERN.test(target);
  const file = byId ? undefined : await loadDefinitionFile(ctx, target);
  const tests = file?.loaded.definition.tests;
  const cases = plan(target, file, options);
  const threshold = options.threshold ?? tests?.threshold ?? DEFAULT_THRESHOLD;
  // Model ids are the service's to judge (each /v1 service names its own): an unknown one is its 422.
  const models = cases.map((c) => options.model ?? c.model ?? tests?.model);

  const report = await withApi(
    ctx,
    async (client): Promise<TestReport> => {
      const mcpId = file === undefined ? target : (await buildDefinition(ctx, client, file)).mcp_id;
      const reports: CaseReport[] = [];
      for (const [index, spec] of cases.entries()) {
        const model = models[index];
        const userId = options.userId ?? spec.userId;
        const label = cases.length === 1 ? `testing ${mcpId}` : `testing ${mcpId}: case ${index + 1}/${cases.length} ${spec.name}`;
        const progress = await ctx.out.progress(label);
        let result: TestResult;
        try {
          result = await client.test({
            mcp_id: mcpId,
            message: spec.message,
            ...(model === undefined ? {} : { ai_model: model }),
            ...(userId === undefined ? {} : { context: { user_id: userId } }),
          });
        } catch (error) {
          progress.fail();
          throw error;
        }
        progress.stop();
        const minRate = spec.expect?.min_success_rate ?? threshold;
        const failures = checkCase(result, spec.expect, minRate);
        const band = classifySuccessRate(result.success_rate);
        reports.push({
          name: spec.name,
          message: spec.message,
          ...(model === undefined ? {} : { ai_model: model }),
          ...(userId === undefined ? {} : { user_id: userId }),
          passed: failures.length === 0,
          failures,
          min_success_rate: minRate,
          band: { label: band.label, level: band.level },
          result,
        });
      }
      return {
        passed: reports.every((r) => r.passed),
        mcp_id: mcpId,
        ...(file === undefined ? {} : { server: file.loaded.definition.name }),
        threshold,
        cases: reports,
      };
    },
    file === undefined ? {} : { locate: file.locate },
  );

  if (options.junit !== undefined) await writeJUnit(ctx, options.junit, report);
  ctx.out.result(report, (p) => renderReport(p, report, ctx.out.quiet), { always: true });
  if (!report.passed) {
    const failed = report.cases.filter((c) => !c.passed).length;
    throw new UserError(`${failed} of ${report.cases.length} test ${report.cases.length === 1 ? 'case' : 'cases'} failed`, {
      exitCode: EXIT.test_failed,
      code: 'test_failed',
      hint: 'improve the tool descriptions or the definition and test again; --threshold sets the bar',
    });
  }
}
