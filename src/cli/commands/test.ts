/**
 * `mcpctl test <mcp_id|file>`: let the service's AI agent use a server, one message (`--message`)
 * or every case of the file's `tests:`, and judge each against its threshold and expectations;
 * `--runs` times and with each `--model`, the runs kept and compared with the suite's previous
 * run (steps/suite-history.ts). Models are checked before anything is built (steps/run-tests.ts).
 */
import { MCP_ID_PATTERN } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { publishToGithub } from '../github.js';
import { testSummary } from '../render/ci-summary.js';
import { renderReport } from '../render/test-result.js';
import { chooseDefinition } from '../steps/definition-path.js';
import { buildDefinition, loadDefinitionFile, locateTool } from '../steps/definition-file.js';
import { annotateReport, writeJUnit } from '../steps/report-tests.js';
import { checkModels, DEFAULT_THRESHOLD, planCases, runCases, testsFailed } from '../steps/run-tests.js';
import { checkCompareFlags, compareAndKeep, regressionFailed } from '../steps/suite-history.js';
import type { TestOptions } from '../specs/service.js';

export async function testCommand(ctx: CommandContext, given: string | undefined, options: TestOptions): Promise<void> {
  const byId = given !== undefined && MCP_ID_PATTERN.test(given);
  const target = byId ? given : await chooseDefinition(ctx, given);
  const file = byId ? undefined : await loadDefinitionFile(ctx, target);
  const tests = file?.loaded.definition.tests;
  const cases = planCases(target, file, options);
  const threshold = options.threshold ?? tests?.threshold ?? DEFAULT_THRESHOLD;
  const envVars = await testEnvVars(ctx, options);
  // a --message run is not the file's suite: it is neither kept nor compared
  const suiteFile = options.message === undefined ? file : undefined;
  checkCompareFlags(options, suiteFile, 'mcpctl test');
  const models = options.model ?? [];

  const report = await withApi(
    ctx,
    async (client, connection) => {
      await checkModels(ctx, client, connection, [
        ...cases.flatMap((c) => (models.length > 0 ? models : [c.model ?? tests?.model])),
        options.judge ?? tests?.judge,
      ]);
      const mcpId = file === undefined ? target : (await buildDefinition(ctx, client, file)).mcp_id;
      return runCases(ctx, client, { mcpId, cases, threshold, flags: options, file, envVars });
    },
    file === undefined ? {} : { locate: file.locate },
  );

  await compareAndKeep(ctx, report, suiteFile, options);
  if (options.junit !== undefined) await writeJUnit(ctx, options.junit, report);
  const locate = file === undefined ? undefined : (tool: string) => locateTool(file, tool);
  ctx.out.result(report, (p) => renderReport(p, report, ctx.out.quiet, locate), { always: true });
  annotateReport(ctx, report, file);
  await publishToGithub(ctx.io, (text) => ctx.out.warn(text), { summary: testSummary(report) });
  // a failed case is told first; a regression alone fails with --fail-on-regression
  const casesPassed = report.models.every((m) => m.cases.every((c) => c.passed));
  if (!casesPassed) throw testsFailed(report);
  if (report.regressed === true) throw regressionFailed(report, '');
}

/**
 * The values given to the server for its `${VAR}` references (such as a stand-in API's address),
 * read as `deploy` reads them: `--env-file`, then `--env-var` from this environment.
 */
async function testEnvVars(ctx: CommandContext, options: TestOptions): Promise<Record<string, string> | undefined> {
  if (options.envFile === undefined && (options.envVar?.length ?? 0) === 0) return undefined;
  const { applyDeployFlags } = await import('../steps/deploy-config.js');
  const config = await applyDeployFlags(
    {},
    {
      ...(options.envFile === undefined ? {} : { envFile: options.envFile }),
      ...(options.envVar === undefined ? {} : { envVar: options.envVar }),
    },
    ctx.io,
  );
  return config.env_vars ?? {};
}
