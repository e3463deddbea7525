/**
 * Where runs of a suite are kept, so the next run can be compared with the last: one JSON file per
 * suite in `<MCPCTL_HOME>/suite-runs/`, the newest runs first. A suite is a definition file's
 * `tests:` cases, known by the server's name and the file's path: a changed definition at the same
 * path is the same suite, which is what a comparison is for. Kept by the CLI, so it works against
 * any service, and a run that cannot be kept is a warning, never a failed test.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { resolveHome } from '../../engine/home.js';
import { EXIT, UserError } from '../../shared/errors.js';
import type { CommandContext } from '../context.js';
import { formatRate } from '../render/format.js';
import type { TestReport } from '../render/test-result.js';
import type { DefinitionFile } from './definition-file.js';
import { compareSuiteRuns, REGRESSION_TOLERANCE, type SuiteRunRecord } from './suite-compare.js';

/** How many runs of one suite are kept: enough to look back, few enough to read at once. */
export const SUITE_RUNS_KEPT = 50;

interface SuiteFile {
  suite: string;
  runs: SuiteRunRecord[];
}

export interface Suite {
  key: string;
  server: string;
  /** the definition file's absolute path */
  file: string;
  /** where its runs are kept */
  path: string;
}

export function suiteOf(ctx: CommandContext, server: string, file: string): Suite {
  const key = `${server} ${file}`;
  const name = createHash('sha256').update(key).digest('hex').slice(0, 24);
  const dir = join(resolveHome(ctx.io.env, ctx.io.cwd), 'suite-runs');
  return { key, server, file, path: join(dir, `${name}.json`) };
}

async function readSuite(ctx: CommandContext, suite: Suite): Promise<SuiteRunRecord[]> {
  let text: string;
  try {
    text = await readFile(suite.path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    ctx.out.warn(`cannot read the earlier runs of this suite (${suite.path}): ${(error as Error).message}`);
    return [];
  }
  try {
    const parsed = JSON.parse(text) as Partial<SuiteFile>;
    if (parsed.suite !== suite.key || !Array.isArray(parsed.runs)) throw new Error('not a record of this suite');
    return parsed.runs;
  } catch (error) {
    ctx.out.warn(
      `the earlier runs of this suite in ${suite.path} are unreadable (${(error as Error).message}); this run starts them again`,
    );
    return [];
  }
}

/** The newest stored run of the suite, if any. */
export async function previousSuiteRun(ctx: CommandContext, suite: Suite): Promise<SuiteRunRecord | undefined> {
  return (await readSuite(ctx, suite))[0];
}

/** Keeps a run, newest first, dropping the oldest beyond SUITE_RUNS_KEPT. */
export async function storeSuiteRun(ctx: CommandContext, suite: Suite, run: SuiteRunRecord): Promise<void> {
  const runs = [run, ...(await readSuite(ctx, suite))].slice(0, SUITE_RUNS_KEPT);
  const file: SuiteFile = { suite: suite.key, runs };
  // written aside then renamed: a run that stops half-way leaves the last whole file
  const temp = `${suite.path}.${randomUUID()}.tmp`;
  try {
    await mkdir(dirname(suite.path), { recursive: true });
    await writeFile(temp, `${JSON.stringify(file)}\n`);
    await rename(temp, suite.path);
  } catch (error) {
    ctx.out.warn(`this run of the suite was not kept for --compare (${suite.path}): ${(error as Error).message}`);
  }
}

export interface CompareFlags {
  compare?: boolean;
  failOnRegression?: boolean;
}

/** --compare needs a suite to compare: refused before anything is built when there is none. */
export function checkCompareFlags(flags: CompareFlags, suiteFile: DefinitionFile | undefined, command: string): void {
  if (suiteFile !== undefined || (flags.compare !== true && flags.failOnRegression !== true)) return;
  const flag = flags.compare === true ? '--compare' : '--fail-on-regression';
  throw new UserError(`${flag} compares runs of a definition file's tests: cases, and this run has none`, {
    hint: `run ${command} with a definition file that has a tests: section, without --message`,
  });
}

/**
 * Compares the report with the suite's previous run (when asked), then keeps it as the newest:
 * every run of a file's cases is kept, so the first --compare already has a run to compare with.
 * With --fail-on-regression, a regression fails the report.
 */
export async function compareAndKeep(
  ctx: CommandContext,
  report: TestReport,
  suiteFile: DefinitionFile | undefined,
  flags: CompareFlags,
): Promise<void> {
  if (suiteFile === undefined) return;
  const server = suiteFile.loaded.definition.name;
  const suite = suiteOf(ctx, server, suiteFile.loaded.file);
  const wanted = flags.compare === true || flags.failOnRegression === true;
  if (wanted) {
    const comparison = compareSuiteRuns(await previousSuiteRun(ctx, suite), report.models);
    report.comparison = comparison;
    if (flags.failOnRegression === true) {
      report.regressed = comparison.regressions > 0;
      if (report.regressed) report.passed = false;
    }
  }
  await storeSuiteRun(ctx, suite, {
    suite: suite.key,
    server,
    file: suite.file,
    created_at: new Date().toISOString(),
    mcp_id: report.mcp_id,
    runs: report.runs,
    models: report.models,
  });
}

/** The error that ends `test` or `up` when --fail-on-regression found one: exit 7, naming the cases. */
export function regressionFailed(report: TestReport, then: string): UserError {
  const regressed = (report.comparison?.changes ?? []).filter((c) => c.change === 'regressed');
  const named = regressed
    .slice(0, 3)
    .map(
      (c) =>
        `${c.name} (${c.ai_model}: pass rate ${formatRate(c.before?.pass_rate ?? 0)} → ${formatRate(c.now?.pass_rate ?? 0)}, success rate ${formatRate(c.before?.mean_success_rate ?? 0)} → ${formatRate(c.now?.mean_success_rate ?? 0)})`,
    );
  const more = regressed.length > 3 ? ` and ${regressed.length - 3} more` : '';
  const noun = regressed.length === 1 ? 'case' : 'cases';
  return new UserError(
    `${regressed.length} ${noun} regressed since the previous run${then}: ${named.join('; ')}${more}`,
    {
      exitCode: EXIT.test_failed,
      code: 'test_regressed',
      hint: `see what changed in the comparison; a drop of up to ${formatRate(report.comparison?.tolerance ?? REGRESSION_TOLERANCE)} in either rate is not counted`,
    },
  );
}
