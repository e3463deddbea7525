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
import { upSummary } from '../render/ci-summary.js';
import { connectUrl, renderDeployment } from '../render/deployment.js';
import { formatSeconds } from '../render/format.js';
import { renderReport, type TestReport } from '../render/test-result.js';
import {
  annotateProblem,
  buildDefinition,
  loadDefinitionFile,
  locateTool,
  type DefinitionFile,
} from '../steps/definition-file.js';
import { locateDeployField } from '../steps/deploy-config.js';
import { chooseDefinition } from '../steps/definition-path.js';
import { deploymentHeading, deployServer, planDeployment, type DeployPlan } from '../steps/deploy-server.js';
import { outcomeError } from '../steps/deployment-wait.js';
import { checkReplacement, describeReplaced, type Replaced } from '../steps/replacement.js';
import { annotateReport, writeJUnit } from '../steps/report-tests.js';
import {
  checkModels,
  DEFAULT_THRESHOLD,
  failedCases,
  planCases,
  runCases,
  type TestCaseSpec,
} from '../steps/run-tests.js';
import { compareAndKeep, regressionFailed } from '../steps/suite-history.js';
import { createStepRunner, StepFailed, type StepRecord, type StepRunner } from '../steps/step-runner.js';
import { lintLoaded, renderValidation } from '../steps/validate-definition.js';
import type { UpOptions } from '../specs/service.js';

const STEPS = ['validate', 'build', 'test', 'deploy'] as const;
type StepName = (typeof STEPS)[number];

/** What one run knows so far: filled in step by step, read by the summary at the end. */
interface UpRun {
  ctx: CommandContext;
  target: string;
  options: UpOptions;
  steps: StepRunner<StepName>;
  connection?: Connection;
  client?: ApiClient;
  file?: DefinitionFile;
  server?: McpServer;
  tests?: TestReport;
  deployment?: Deployment;
}

/** The validated file and what is planned from it before anything is sent. */
interface Planned {
  file: DefinitionFile;
  plan: DeployPlan;
  cases: TestCaseSpec[];
  threshold: number;
}

/** The service the build, the tests and the deployment go to. */
interface Service {
  client: ApiClient;
  connection: Connection;
}

export async function upCommand(ctx: CommandContext, given: string | undefined, options: UpOptions): Promise<void> {
  const target = await chooseDefinition(ctx, given);
  const run: UpRun = { ctx, target, options, steps: createStepRunner(STEPS, (error) => explain(run, error)) };
  const failure = await runSteps(run);
  await reportUp(run, failure);
}

/** Runs the steps in order; the first failure's error, or undefined when every step passed. */
async function runSteps(run: UpRun): Promise<UserError | undefined> {
  try {
    const planned = await validate(run);
    const service = await connectToService(run);
    await checkTestModels(run, service, planned);
    const built = await build(run, service.client, planned);
    await test(run, service.client, planned, built);
    await deploy(run, service.client, planned, built);
    return undefined;
  } catch (error) {
    if (!(error instanceof StepFailed)) throw error;
    return error.error;
  } finally {
    await run.client?.close();
  }
}

/** A step's error as the user is told it; `locate` maps a request field back to the file. */
function explain(run: UpRun, error: unknown, locate?: (path: string) => string | undefined): unknown {
  return explainApiError(error, run.connection, {
    env: run.ctx.io.env,
    ...(locate === undefined ? {} : { locate }),
  });
}

/** Step results for people, as they come; with --quiet only what is shown `evenQuiet` (the deployment's URL). */
function say(ctx: CommandContext, human: Parameters<CommandContext['out']['result']>[1], evenQuiet = false): void {
  if (ctx.out.json || (ctx.out.quiet && !evenQuiet)) return;
  ctx.out.result(undefined, human, { always: true });
}

/** 1. validate: offline, with the lint, and the deployment's local inputs. */
async function validate(run: UpRun): Promise<Planned> {
  const { ctx, target, options } = run;
  const { file, validation, plan } = await run.steps.run('validate', async () => {
    const loaded = await loadDefinitionFile(ctx, target, { showWarnings: false });
    run.file = loaded;
    const result = await lintLoaded(loaded.loaded, loaded.shown);
    return { file: loaded, validation: result, plan: await planDeployment(ctx, loaded, options) };
  });
  run.steps.record('validate', { result: validation });
  say(ctx, (p) => renderValidation(p, validation));
  for (const warning of validation.warnings) annotateProblem(ctx, 'warning', warning);
  const tests = file.loaded.definition.tests;
  return {
    file,
    plan,
    cases: tests === undefined ? [] : planCases(target, file, {}),
    threshold: options.threshold ?? tests?.threshold ?? DEFAULT_THRESHOLD,
  };
}

/** The service, connected to as the build's first part. */
async function connectToService(run: UpRun): Promise<Service> {
  const service = await run.steps.run('build', () => connect(run.ctx), { done: false });
  run.client = service.client;
  run.connection = service.connection;
  return service;
}

/** The test models can run: asked before anything is built. */
async function checkTestModels(run: UpRun, service: Service, planned: Planned): Promise<void> {
  const models = run.options.model ?? [];
  const fileModel = planned.file.loaded.definition.tests?.model;
  const wanted = planned.cases.flatMap((c) => (models.length > 0 ? models : [c.model ?? fileModel]));
  await run.steps.run('test', () => checkModels(run.ctx, service.client, service.connection, wanted), {
    done: false,
  });
}

/** 2. build */
async function build(run: UpRun, api: ApiClient, planned: Planned): Promise<McpServer> {
  const key = run.options.idempotencyKey;
  const idempotencyKey = key === undefined ? undefined : `${key}.build`;
  const built = await run.steps.run('build', () => buildDefinition(run.ctx, api, planned.file, { idempotencyKey }), {
    explain: (error) => explain(run, error, planned.file.locate),
  });
  run.server = built;
  run.steps.record('build', { result: built });
  const verb = built.reused === true ? 'Reused' : 'Built';
  say(run.ctx, (p) =>
    p.success(`${verb} ${built.name} (${built.mcp_id}) in ${formatSeconds(built.build_time) ?? '?'}`),
  );
  return built;
}

/** 3. test: the file's cases; a failed case deploys nothing. */
async function test(run: UpRun, api: ApiClient, planned: Planned, built: McpServer): Promise<void> {
  const { ctx, options } = run;
  const { file, cases } = planned;
  const name = file.loaded.definition.name;
  if (cases.length === 0) {
    run.steps.record('test', { status: 'skipped', reason: `${file.shown} has no tests: cases` });
    ctx.out.warn(
      `${file.shown} has no tests: cases, so nothing tests ${name} before it is deployed (docs/definition.md, tests)`,
    );
    return;
  }
  const flags = {
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.judge === undefined ? {} : { judge: options.judge }),
    ...(options.runs === undefined ? {} : { runs: options.runs }),
    ...(options.passRate === undefined ? {} : { passRate: options.passRate }),
  };
  const report = await run.steps.run('test', () =>
    runCases(ctx, api, { mcpId: built.mcp_id, cases, threshold: planned.threshold, flags, file }),
  );
  await compareAndKeep(ctx, report, file, options);
  run.tests = report;
  run.steps.record('test', { result: report });
  if (options.junit !== undefined) await writeJUnit(ctx, options.junit, report);
  say(ctx, (p) => renderReport(p, report, ctx.out.quiet, (tool) => locateTool(file, tool)));
  annotateReport(ctx, report, file);
  if (report.passed) return;
  const casesPassed = report.models.every((m) => m.cases.every((c) => c.passed));
  const failure = casesPassed ? regressionFailed(report, `, so ${name} was not deployed`) : casesFailed(report, name);
  throw run.steps.fail('test', failure);
}

function casesFailed(report: TestReport, name: string): UserError {
  return new UserError(`${failedCases(report)}, so ${name} was not deployed`, {
    exitCode: EXIT.test_failed,
    code: 'test_failed',
    hint: 'follow the causes under each case, then run mcpctl up again; --threshold sets the bar, --pass-rate the share of runs',
  });
}

/** 4. deploy */
async function deploy(run: UpRun, api: ApiClient, planned: Planned, built: McpServer): Promise<void> {
  const { ctx, options } = run;
  const { file, plan } = planned;
  const timeoutSeconds = options.timeout ?? 600;
  const flags = { wait: options.wait, timeoutSeconds, idempotencyKey: options.idempotencyKey };
  const locate = locateDeployField(file, plan.environment, options);
  let replaced: Replaced | undefined;
  const outcome = await run.steps.run(
    'deploy',
    async () => {
      replaced = await checkReplacement(ctx, api, {
        server: file.loaded.definition.name,
        environment: plan.environment,
        mcpId: built.mcp_id,
        file: file.loaded.file,
        replace: options.replace === true,
      });
      return deployServer(ctx, api, built.mcp_id, plan, flags);
    },
    { explain: (error) => explain(run, error, locate) },
  );
  const deployment = outcome.deployment;
  run.deployment = deployment;
  if (replaced?.deployment_id === deployment.deployment_id) replaced = undefined;
  run.steps.record('deploy', { result: replaced === undefined ? deployment : { ...deployment, replaced } });
  const heading = deploymentHeading(deployment, file.loaded.definition.name, plan.environment);
  say(
    ctx,
    (p) => {
      if (ctx.out.quiet) p.line(deployment.status === 'deployed' ? connectUrl(deployment) : deployment.url);
      else renderDeployment(p, deployment, heading, replaced === undefined ? undefined : describeReplaced(replaced));
    },
    true,
  );
  const ended = outcomeError(outcome, timeoutSeconds);
  if (ended !== undefined) throw run.steps.fail('deploy', ended);
}

/** The CI summary and outputs, then the result: one JSON document, or the failure, or the last line. */
async function reportUp(run: UpRun, failure: UserError | undefined): Promise<void> {
  const { ctx } = run;
  const failed = run.steps.finish();
  const name = run.file?.loaded.definition.name ?? run.target;
  await publishUp(run, name, failed);
  if (ctx.out.json) {
    ctx.out.writeJson({
      ok: failure === undefined,
      exit_code: failure?.exitCode ?? EXIT.ok,
      ...(failed === undefined ? {} : { failed_step: failed.step }),
      steps: run.steps.records,
    });
    if (failure !== undefined) throw new ExitError(failure.exitCode);
    return;
  }
  if (failure !== undefined) throw failure;
  const line = doneLine(name, run.server!, run.tests, run.deployment!);
  say(ctx, (p) => p.success(line));
}

function doneLine(name: string, server: McpServer, tests: TestReport | undefined, d: Deployment): string {
  const count = tests?.models.reduce((n, m) => n + m.cases.length, 0) ?? 0;
  const tested =
    tests === undefined ? 'not tested (no cases)' : `${count} of ${count} ${count === 1 ? 'case' : 'cases'} passed`;
  const at = d.status === 'deployed' ? connectUrl(d) : d.url;
  return `up: ${name} validated, built (${server.mcp_id}), ${tested}, ${d.status} at ${at}`;
}

/** In GitHub Actions: the job summary and the step outputs. */
async function publishUp(run: UpRun, name: string, failed: StepRecord<StepName> | undefined): Promise<void> {
  const { ctx, server, tests, deployment } = run;
  await publishToGithub(ctx.io, (t) => ctx.out.warn(t), {
    summary: upSummary({
      name,
      ok: failed === undefined,
      steps: run.steps.records.map((s) => ({ step: s.step, status: s.status, detail: stepDetail(s) })),
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
}

/** One line for the summary: what the step did, or why it failed or was skipped. */
function stepDetail(s: StepRecord<StepName>): string {
  if (s.status === 'failed') return s.error?.message ?? 'failed';
  if (s.status === 'skipped') return s.reason ?? 'skipped';
  const result = s.result as Record<string, unknown> | undefined;
  switch (s.step) {
    case 'validate':
      return `${String(result?.file)}: ${(result?.warnings as unknown[] | undefined)?.length ?? 0} warnings`;
    case 'build':
      return `${String(result?.mcp_id)}${result?.reused === true ? ' (reused)' : ''}`;
    case 'test': {
      // a case of each model, summed over its runs
      const cases = ((result?.models as TestReport['models'] | undefined) ?? []).flatMap((m) => m.cases);
      return `${cases.filter((c) => c.passed).length} of ${cases.length} ${cases.length === 1 ? 'case' : 'cases'} passed`;
    }
    case 'deploy':
      return `${String(result?.deployment_id)} ${String(result?.status)} at ${String(result?.url)}`;
  }
}
