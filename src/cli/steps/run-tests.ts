/**
 * Running test cases against a built server (`test`, `up`): which cases, whether the service can
 * run their models (asked before anything is built), one `POST /v1/test` per case, and each
 * result judged against its threshold and expectations, with the guidance of the run.
 */
import type { ApiClient, TestRequestInput } from '../../api/client.js';
import type { TestResult } from '../../api/operations.js';
import { ApiError } from '../../api/errors.js';
import { classifySuccessRate, computeGuidance, SUCCESS_BANDS } from '../../api/guidance.js';
import type { TestsConfig } from '../../definition/schema.js';
import type { Connection } from '../config.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { formatRate } from '../render/format.js';
import type { CaseReport, TestReport } from '../render/test-result.js';
import { expectationFailures, expectationFields, withEvaluation } from './case-expectations.js';
import type { DefinitionFile } from './definition-file.js';
import { DEFAULT_PASS_RATE, summarizeRuns } from './suite-stats.js';

export interface TestFlags {
  message?: string;
  /** every case with each of these models in turn (default: the case's, the file's, the service's) */
  model?: string[];
  /** how many times each case runs (default 1) */
  runs?: number;
  /** the share of its runs a case must pass (default 1: every run) */
  passRate?: number;
  userId?: string;
  threshold?: number;
  junit?: string;
  /** with --message: the tools the agent should call */
  expectTool?: string[];
  /** the model that scores replies against expect.reply (default tests.judge, then mcpctl-local) */
  judge?: string;
}

export type Expectations = NonNullable<TestsConfig['cases'][number]['expect']>;

export interface TestCaseSpec {
  name: string;
  message: string;
  model?: string;
  userId?: string;
  expect?: Expectations;
  /** its index in the file's tests.cases */
  index?: number;
}

export const DEFAULT_THRESHOLD = 0.8;

/** True when the agent called no tool and read no resource. */
export function usedNothing(result: Pick<TestResult, 'tool_calls' | 'tools_used' | 'resources_accessed'>): boolean {
  return (
    (result.tool_calls?.length ?? 0) === 0 && result.tools_used.length === 0 && result.resources_accessed.length === 0
  );
}

/**
 * What a result fell short of: the success rate, then each expectation. Empty when it passed. A
 * run that used nothing tested nothing and fails, unless the case expects exactly that
 * (`expect: { tools: [] }`).
 */
export function checkCase(result: TestResult, expect: Expectations | undefined, minRate: number): string[] {
  const failures: string[] = [];
  const expectsNoTool = expect?.tools !== undefined && expect.tools.length === 0;
  if (usedNothing(result)) {
    if (!expectsNoTool) failures.push('the agent used no tool and no resource, so the case tested nothing');
  } else if (result.success_rate < minRate) {
    failures.push(`success rate ${formatRate(result.success_rate)} is below ${formatRate(minRate)}`);
  }
  if (expect === undefined) return failures;
  const used = new Set(result.tools_used);
  if (expectsNoTool && used.size > 0) failures.push(`expected no tool call; the agent called ${[...used].join(', ')}`);
  for (const tool of expect.tools ?? [])
    if (!used.has(tool)) failures.push(`expected the agent to call ${tool}; it did not`);
  for (const tool of expect.not_tools ?? [])
    if (used.has(tool)) failures.push(`the agent called ${tool}, which it should not`);
  const read = new Set(result.resources_accessed);
  for (const uri of expect.resources ?? [])
    if (!read.has(uri)) failures.push(`expected the agent to read ${uri}; it did not`);
  const reply = result.ai_response.toLowerCase();
  for (const text of expect.response_contains ?? []) {
    if (!reply.includes(text.toLowerCase())) failures.push(`expected the reply to contain "${text}"`);
  }
  failures.push(...expectationFailures(result, expect));
  return failures;
}

/** The cases to run: the message of --message, else the file's `tests:` cases. */
export function planCases(target: string, file: DefinitionFile | undefined, flags: TestFlags): TestCaseSpec[] {
  if (flags.message !== undefined) {
    if (flags.message.trim() === '')
      throw new UserError('--message is empty', { hint: 'pass the message for the agent: -m "…"' });
    const tools = flags.expectTool ?? [];
    return [{ name: 'message', message: flags.message, ...(tools.length === 0 ? {} : { expect: { tools } }) }];
  }
  if ((flags.expectTool?.length ?? 0) > 0) {
    throw new UserError('--expect-tool goes with --message', {
      hint: "a file's cases say what they expect in their expect: section",
    });
  }
  const cases = file?.loaded.definition.tests?.cases;
  if (cases === undefined || cases.length === 0) {
    throw new UserError(
      file === undefined ? `nothing to test: pass --message with ${target}` : `${file.shown} has no tests: cases`,
      {
        hint:
          file === undefined
            ? `mcpctl test ${target} -m "What can you do?"`
            : `pass --message, or add a tests: section with cases to ${file.shown} (docs/definition.md)`,
      },
    );
  }
  return cases.map((c, index) => ({
    name: c.name,
    message: c.message,
    index,
    ...(c.model === undefined ? {} : { model: c.model }),
    ...(c.user_id === undefined ? {} : { userId: c.user_id }),
    ...(c.expect === undefined ? {} : { expect: c.expect }),
  }));
}

/**
 * Refuses, before anything is built, a model the service does not offer or cannot run (its key
 * is not set where the service runs): exit 3 (configuration), naming the variable. A service that does not list
 * its models (no GET /v1/models) is left to judge the test request itself.
 */
export async function checkModels(
  ctx: CommandContext,
  client: ApiClient,
  connection: Connection,
  wanted: ReadonlyArray<string | undefined>,
): Promise<void> {
  const ids = [...new Set(wanted.filter((id): id is string => id !== undefined))];
  if (ids.length === 0) return;
  let listed;
  try {
    listed = await client.models();
  } catch (error) {
    if (error instanceof ApiError && error.kind === 'http' && [404, 405, 501].includes(error.status)) return;
    throw error;
  }
  for (const id of ids) {
    const model = listed.find((m) => m.id === id);
    if (model === undefined) {
      throw new UserError(`unknown model ${id}: the service offers ${listed.map((m) => m.id).join(', ')}`, {
        exitCode: EXIT.config,
        code: 'unknown_model',
        hint: '`mcpctl models` lists them; pass one with --model (or tests.model in the file), or add an entry to "models" of the engine settings and run `mcpctl engine reload`',
      });
    }
    if (model.available) continue;
    const variable = model.key_variable;
    const reason =
      model.reason ??
      (variable === undefined ? 'the service cannot run it now' : `${variable} is not set where the service runs`);
    let hint: string;
    // a server of one's own that does not answer: no key would mend it
    const keyless = variable === undefined || (model.reason !== undefined && !model.reason.includes(variable));
    if (keyless)
      hint = `start the model's server, or check its base_url (\`mcpctl models\`); or test with another --model`;
    else if (!connection.local)
      hint = `ask whoever runs the service to set ${variable ?? 'its key'}, or test with another --model`;
    else if (variable !== undefined && (ctx.io.env[variable]?.trim() ?? '') !== '') {
      hint = `${variable} is set here, but the running engine was started without it: run \`mcpctl engine reload\` to hand it over (deployments keep running)`;
    } else
      hint = `export ${variable ?? 'its key'}=… and run \`mcpctl engine reload\` (deployments keep running); or test with --model mcpctl-local`;
    throw new UserError(`the model ${id} cannot run: ${reason}`, {
      exitCode: EXIT.config,
      code: 'model_not_configured',
      hint,
    });
  }
}

export interface RunCasesOptions {
  mcpId: string;
  cases: TestCaseSpec[];
  threshold: number;
  flags: TestFlags;
  file?: DefinitionFile | undefined;
  /** values of the server's `${VAR}` references for every run (`--env-var`, `--env-file`) */
  envVars?: Record<string, string> | undefined;
}

/**
 * Runs each case in turn, `--runs` times, with each `--model` (else the case's own), with
 * progress; judges each run, then sums the runs up per model and case (suite-stats.ts).
 */
export async function runCases(ctx: CommandContext, client: ApiClient, options: RunCasesOptions): Promise<TestReport> {
  const { mcpId, cases, threshold, flags, file } = options;
  const tests = file?.loaded.definition.tests;
  const runs = flags.runs ?? 1;
  const passRate = flags.passRate ?? DEFAULT_PASS_RATE;
  const models: Array<string | undefined> = (flags.model?.length ?? 0) > 0 ? [...new Set(flags.model)] : [undefined];
  const reports: CaseReport[] = [];
  for (const chosen of models) {
    for (const [index, spec] of cases.entries()) {
      for (let run = 1; run <= runs; run += 1) {
        const parts = [
          models.length > 1 && chosen !== undefined ? ` with ${chosen}` : '',
          cases.length > 1 ? `: case ${index + 1}/${cases.length} ${spec.name}` : '',
          runs > 1 ? ` (run ${run}/${runs})` : '',
        ];
        const model = chosen ?? spec.model ?? tests?.model;
        const label = `testing ${mcpId}${parts.join('')}`;
        const report = await runCase(ctx, client, { ...options, spec, model, label });
        reports.push(runs > 1 ? { ...report, run } : report);
      }
    }
  }
  const summaries = summarizeRuns(reports, passRate);
  return {
    passed: summaries.every((m) => m.cases.every((c) => c.passed)),
    mcp_id: mcpId,
    ...(file === undefined ? {} : { server: file.loaded.definition.name }),
    threshold,
    runs,
    pass_rate: passRate,
    models: summaries,
    cases: reports,
  };
}

interface RunCaseOptions extends RunCasesOptions {
  spec: TestCaseSpec;
  model: string | undefined;
  /** what the progress line says */
  label: string;
}

/** One run of one case: sent, then judged against its threshold and expectations. */
async function runCase(ctx: CommandContext, client: ApiClient, options: RunCaseOptions): Promise<CaseReport> {
  const { mcpId, spec, model, label, threshold, flags, file, envVars } = options;
  const tools = file?.loaded.definition.tools;
  const userId = flags.userId ?? spec.userId;
  const judge = flags.judge ?? file?.loaded.definition.tests?.judge;
  const progress = await ctx.out.progress(label);
  let result: TestResult;
  try {
    result = await sendTest(client, {
      mcp_id: mcpId,
      message: spec.message,
      ...(model === undefined ? {} : { ai_model: model }),
      ...(userId === undefined ? {} : { context: { user_id: userId } }),
      ...(envVars === undefined ? {} : { env_vars: envVars }),
      ...expectationFields(spec.expect, judge),
    });
  } catch (error) {
    progress.fail();
    throw error;
  }
  progress.stop();
  result = withEvaluation(result, spec.expect, judge);
  const minRate = spec.expect?.min_success_rate ?? threshold;
  const failures = checkCase(result, spec.expect, minRate);
  const guidance =
    result.guidance ??
    computeGuidance({
      run: result,
      ...(tools === undefined ? {} : { tools }),
      expectedTools: spec.expect?.tools,
    });
  // a band this CLI does not know (a service's own) is shown with the level of the rate's band
  const level =
    SUCCESS_BANDS.find((b) => b.label === guidance.band)?.level ?? classifySuccessRate(result.success_rate).level;
  return {
    name: spec.name,
    message: spec.message,
    ...(spec.index === undefined ? {} : { case_index: spec.index }),
    ...(model === undefined ? {} : { ai_model: model }),
    ...(userId === undefined ? {} : { user_id: userId }),
    passed: failures.length === 0,
    failures,
    min_success_rate: minRate,
    band: { label: guidance.band, level },
    guidance,
    result,
  };
}

/**
 * POST /v1/test. A service that does not know the `expect` extension (and says so for that
 * field) gets the request again without it; the guidance is then computed here.
 */
async function sendTest(client: ApiClient, request: TestRequestInput): Promise<TestResult> {
  try {
    return await client.test(request);
  } catch (error) {
    const { expect: _expect, judge_model: _judge, ...plain } = request;
    if (
      _expect !== undefined &&
      error instanceof ApiError &&
      error.code === 'validation_failed' &&
      error.details.some(
        (d) => d.path.startsWith('expect') || (d.path === 'judge_model' && /unknown|unrecognized/i.test(d.message)),
      )
    ) {
      return client.test(plain);
    }
    throw error;
  }
}

/**
 * How many cases failed, said as the gate counts them: with several models each model's run of
 * a case counts, and with --runs a case fails when too few of its runs passed.
 */
export function failedCases(report: TestReport): string {
  const summaries = report.models.flatMap((m) => m.cases);
  const failed = summaries.filter((c) => !c.passed).length;
  const noun = summaries.length === 1 ? 'case' : 'cases';
  const models = report.models.length > 1 ? ` over ${report.models.length} models` : '';
  const runs = report.runs > 1 ? ` (a case passes when at least ${formatRate(report.pass_rate)} of its runs pass)` : '';
  return `${failed} of ${summaries.length} test ${noun}${models} failed${runs}`;
}

/** The error that ends `test` when a case failed: exit 7. */
export function testsFailed(report: TestReport): UserError {
  return new UserError(failedCases(report), {
    exitCode: EXIT.test_failed,
    code: 'test_failed',
    hint: 'follow the causes under each case, then test again; --threshold sets the bar, --pass-rate the share of runs',
  });
}
