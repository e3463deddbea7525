/**
 * `mcpctl up <file>`: the one step a pipeline needs. Validate the definition (offline, with the
 * lint), build it, run its `tests:` cases, and deploy it only if they pass. Everything that can be
 * checked before the first request is (the deployment's variables, the test models before the
 * build). The exit code is the first failing step's; `--json` prints one document with each step.
 */
import type { ApiClient } from '../../api/client.js';
import type { Deployment, McpServer } from '../../api/operations.js';
import { explainApiError } from '../api-errors.js';
import { connect, type Connection } from '../config.js';
import type { CommandContext } from '../context.js';
import { EXIT, ExitError, UserError } from '../../shared/errors.js';
import { publishToGithub } from '../github.js';
import { upSummary, type StepStatus } from '../render/ci-summary.js';
import { mcpEndpoint, renderDeployment } from '../render/deployment.js';
import { formatSeconds } from '../render/format.js';
import { renderReport, type TestReport } from '../render/test-result.js';
import {
  annotateProblem,
  buildDefinition,
  loadDefinitionFile,
  locateTool,
  type DefinitionFile,
} from '../steps/definition-file.js';
import { locateDeployField, type DeployFlags } from '../steps/deploy-config.js';
import { deploymentHeading, deployServer, planDeployment, type DeployPlan } from '../steps/deploy-server.js';
import { outcomeError } from '../steps/deployment-wait.js';
import {
  annotateReport,
  checkModels,
  DEFAULT_THRESHOLD,
  planCases,
  runCases,
  writeJUnit,
  type TestCaseSpec,
} from '../steps/run-tests.js';
import { lintLoaded, renderValidation, type ValidateResult } from '../steps/validate-definition.js';

export interface UpCommandOptions extends DeployFlags {
  model?: string;
  threshold?: number;
  junit?: string;
}

const STEPS = ['validate', 'build', 'test', 'deploy'] as const;
type StepName = (typeof STEPS)[number];

interface StepRecord {
  step: StepName;
  status: StepStatus;
  /** why it was skipped */
  reason?: string;
  /** what it produced: the validation, the server, the test report, the deployment */
  result?: unknown;
  error?: {
    code: string;
    message: string;
    exit_code: number;
    problems?: unknown[];
    hint?: string;
    request_id?: string;
  };
}

/** A step that failed: already recorded, the run ends with its error. */
class StepFailed extends Error {
  constructor(readonly error: UserError) {
    super(error.message);
  }
}

export async function upCommand(ctx: CommandContext, target: string, options: UpCommandOptions = {}): Promise<void> {
  const steps: StepRecord[] = STEPS.map((step) => ({ step, status: 'skipped' }));
  const record = (name: StepName, update: Partial<StepRecord>) =>
    Object.assign(
      steps.find((s) => s.step === name)!,
      update,
    );
  // step results for people, as they come; with --quiet only the deployment's URL
  const text = (human: Parameters<typeof ctx.out.result>[1], evenQuiet = false) => {
    if (ctx.out.json || (ctx.out.quiet && !evenQuiet)) return;
    ctx.out.result(undefined, human, { always: true });
  };
  let connection: Connection | undefined;
  let file: DefinitionFile | undefined;
  let plan: DeployPlan | undefined;

  /** Records a step's failure; the error to end the run with. */
  const fail = (name: StepName, error: UserError): StepFailed => {
    record(name, {
      status: 'failed',
      error: {
        code: error.code,
        message: error.message,
        exit_code: error.exitCode,
        ...(error.problems.length === 0 ? {} : { problems: error.problems }),
        ...(error.hint === undefined ? {} : { hint: error.hint }),
        ...(error.requestId === undefined ? {} : { request_id: error.requestId }),
      },
    });
    return new StepFailed(error);
  };

  /** Runs one step: its result recorded, or its error (explained) recorded and the run ended. */
  const step = async <T>(
    name: StepName,
    run: () => Promise<T>,
    options: { locate?: (path: string) => string | undefined; done?: boolean } = {},
  ): Promise<T> => {
    const { locate } = options;
    try {
      const result = await run();
      // a check made ahead for a later step leaves it to run
      if (options.done !== false) record(name, { status: 'ok' });
      return result;
    } catch (error) {
      const explained = explainApiError(error, connection, {
        env: ctx.io.env,
        ...(locate === undefined ? {} : { locate }),
      });
      if (!(explained instanceof UserError)) throw explained;
      throw fail(name, explained);
    }
  };

  let server: McpServer | undefined;
  let tests: TestReport | undefined;
  let deployment: Deployment | undefined;
  let failure: UserError | undefined;
  let client: ApiClient | undefined;
  try {
    // 1. validate: offline, with the lint, and the deployment's local inputs
    const validation: ValidateResult = await step('validate', async () => {
      file = await loadDefinitionFile(ctx, target, { showWarnings: false });
      const result = await lintLoaded(file.loaded, file.shown);
      plan = await planDeployment(ctx, file, options);
      return result;
    });
    record('validate', { result: validation });
    text((p) => renderValidation(p, validation));
    for (const warning of validation.warnings) annotateProblem(ctx, 'warning', warning);
    const loaded = file!;
    const definition = loaded.loaded.definition;
    const cases: TestCaseSpec[] = definition.tests === undefined ? [] : planCases(target, loaded, {});
    const threshold = options.threshold ?? definition.tests?.threshold ?? DEFAULT_THRESHOLD;
    const key = options.idempotencyKey;

    ({ client, connection } = await step('build', () => connect(ctx), { done: false }));
    const api = client;

    // the test models can run (asked before anything is built)
    await step(
      'test',
      () =>
        checkModels(
          ctx,
          api,
          connection!,
          cases.map((c) => options.model ?? c.model ?? definition.tests?.model),
        ),
      { done: false },
    );

    // 2. build
    server = await step(
      'build',
      () => buildDefinition(ctx, api, loaded, { idempotencyKey: key === undefined ? undefined : `${key}.build` }),
      {
        locate: loaded.locate,
      },
    );
    record('build', { result: server });
    const built = server;
    text((p) =>
      p.success(
        `${built.reused === true ? 'Reused' : 'Built'} ${built.name} (${built.mcp_id}) in ${formatSeconds(built.build_time) ?? '?'}`,
      ),
    );

    // 3. test: the file's cases; a failed case deploys nothing
    if (cases.length === 0) {
      record('test', { status: 'skipped', reason: `${loaded.shown} has no tests: cases` });
      ctx.out.warn(
        `${loaded.shown} has no tests: cases, so nothing tests ${definition.name} before it is deployed (docs/definition.md, tests)`,
      );
    } else {
      const report = await step('test', () =>
        runCases(ctx, api, {
          mcpId: built.mcp_id,
          cases,
          threshold,
          flags: { ...(options.model === undefined ? {} : { model: options.model }) },
          file: loaded,
        }),
      );
      tests = report;
      record('test', { result: report });
      if (options.junit !== undefined) await writeJUnit(ctx, options.junit, report);
      text((p) => renderReport(p, report, ctx.out.quiet, (tool) => locateTool(loaded, tool)));
      annotateReport(ctx, report, loaded);
      if (!report.passed) {
        const failed = report.cases.filter((c) => !c.passed).length;
        const error = new UserError(
          `${failed} of ${report.cases.length} test ${report.cases.length === 1 ? 'case' : 'cases'} failed, so ${definition.name} was not deployed`,
          {
            exitCode: EXIT.test_failed,
            code: 'test_failed',
            hint: 'follow the causes under each case, then run mcpctl up again; --threshold sets the bar',
          },
        );
        throw fail('test', error);
      }
    }

    // 4. deploy
    const deployPlan = plan!;
    const timeoutSeconds = options.timeout ?? 600;
    const outcome = await step(
      'deploy',
      () =>
        deployServer(ctx, api, built.mcp_id, deployPlan, { wait: options.wait, timeoutSeconds, idempotencyKey: key }),
      {
        locate: locateDeployField(loaded, deployPlan.environment, options),
      },
    );
    deployment = outcome.deployment;
    record('deploy', { result: deployment });
    const settled = deployment;
    text((p) => {
      if (ctx.out.quiet) p.line(settled.url);
      else renderDeployment(p, settled, deploymentHeading(settled, definition.name, deployPlan.environment));
    }, true);
    const ended = outcomeError(outcome, timeoutSeconds);
    if (ended !== undefined) throw fail('deploy', ended);
  } catch (error) {
    if (!(error instanceof StepFailed)) throw error;
    failure = error.error;
  } finally {
    await client?.close();
  }

  // what was not run, and why
  const failed = steps.find((s) => s.status === 'failed');
  for (const s of steps)
    if (s.status === 'skipped' && s.reason === undefined && failed !== undefined)
      s.reason = `not run: the ${failed.step} step failed`;

  const ok = failure === undefined;
  const name = file?.loaded.definition.name ?? target;
  await publishToGithub(ctx.io, (t) => ctx.out.warn(t), {
    summary: upSummary({
      name,
      ok,
      steps: steps.map((s) => ({ step: s.step, status: s.status, detail: stepDetail(s) })),
      server,
      tests,
      deployment,
    }),
    outputs: {
      mcp_id: server?.mcp_id,
      deployment_id: deployment?.deployment_id,
      url: deployment?.url,
      status: deployment?.status ?? (failed === undefined ? undefined : `${failed.step}_failed`),
    },
  });

  const exitCode = failure?.exitCode ?? EXIT.ok;
  if (ctx.out.json) {
    ctx.out.writeJson({
      ok,
      exit_code: exitCode,
      ...(failed === undefined ? {} : { failed_step: failed.step }),
      steps,
    });
    if (failure !== undefined) throw new ExitError(failure.exitCode);
    return;
  }
  if (failure !== undefined) throw failure;
  const d = deployment!;
  text((p) => {
    const tested =
      tests === undefined
        ? 'not tested (no cases)'
        : `${tests.cases.length} of ${tests.cases.length} ${tests.cases.length === 1 ? 'case' : 'cases'} passed`;
    p.success(
      `up: ${name} validated, built (${server!.mcp_id}), ${tested}, ${d.status} at ${d.status === 'deployed' ? mcpEndpoint(d) : d.url}`,
    );
  });
}

/** One line for the summary: what the step did, or why it failed or was skipped. */
function stepDetail(s: StepRecord): string {
  if (s.status === 'failed') return s.error?.message ?? 'failed';
  if (s.status === 'skipped') return s.reason ?? 'skipped';
  const result = s.result as Record<string, unknown> | undefined;
  switch (s.step) {
    case 'validate':
      return `${String(result?.file)}: ${(result?.warnings as unknown[] | undefined)?.length ?? 0} warnings`;
    case 'build':
      return `${String(result?.mcp_id)}${result?.reused === true ? ' (reused)' : ''}`;
    case 'test': {
      const cases = (result?.cases as Array<{ passed: boolean }> | undefined) ?? [];
      return `${cases.filter((c) => c.passed).length} of ${cases.length} ${cases.length === 1 ? 'case' : 'cases'} passed`;
    }
    case 'deploy':
      return `${String(result?.deployment_id)} ${String(result?.status)} at ${String(result?.url)}`;
  }
}
