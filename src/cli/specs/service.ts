/**
 * The commands that call the /v1 service: build, deploy, inspect, stop, roll back, test and `up`.
 * Each definition names the command, its arguments, options and help; its handler module loads only
 * when it runs.
 */
import {
  InvalidArgumentError,
  Option,
  type Command,
  type CommandUnknownOpts,
  type OptionValues,
} from '@commander-js/extra-typings';
import { describeModels } from '../../shared/models.js';
import {
  collect,
  parseEnvironment,
  parseInteger,
  parseRate,
  parseSeconds,
  parseSpan,
  withDeployOptions,
  type OptionsOf,
} from './options.js';

const DEFINITION = 'the definition (YAML), or a folder with a server.yaml (default: ./server.yaml)';
const DEPLOYMENT = [
  '[deployment]',
  'a deploy_… id, <server>.<env> (notes.production, notes.prod) or a name from its URLs; default: the deployment of ./server.yaml',
] as const;
// `-f` is --follow alone (logs): one meaning per short flag
const FILE = [
  '--file <file>',
  'with no deployment named: the definition that names it (default: ./server.yaml)',
] as const;

export function defineBuild(parent: CommandUnknownOpts) {
  return parent
    .command('build')
    .description('build a server from a definition (POST /v1/build)')
    .argument('[file]', DEFINITION)
    .option('--idempotency-key <key>', 'reuse a key so a repeated request does not build twice');
}
export type BuildOptions = OptionsOf<ReturnType<typeof defineBuild>>;

export function defineDeploy(parent: CommandUnknownOpts) {
  return withDeployOptions(
    parent
      .command('deploy')
      .description('deploy a built server, or build and deploy a definition (POST /v1/deploy)')
      .argument('[target]', `an mcp_… id, or a definition to build first: ${DEFINITION}`),
  )
    .option('--replace', 'replace the running deployment of this server name even when it was built from another file')
    .option('--idempotency-key <key>', 'reuse a key so a repeated request does not deploy twice');
}
export type DeployOptions = OptionsOf<ReturnType<typeof defineDeploy>>;

export function defineStatus(parent: CommandUnknownOpts) {
  return parent
    .command('status')
    .description('show the status of a deployment (GET /v1/deploy/{id}/status)')
    .argument(...DEPLOYMENT)
    .option(...FILE)
    .option('-w, --watch', 'keep watching until the deployment settles')
    .option('--timeout <seconds>', 'how long to watch', parseSeconds, 600)
    .option(
      '--verbose',
      'also show the notices the deploy showed (what the service could not honour); --json has them',
    );
}
export type StatusOptions = OptionsOf<ReturnType<typeof defineStatus>>;

export function defineLs(parent: CommandUnknownOpts) {
  return parent
    .command('ls')
    .description('list servers and deployments (GET /v1/servers, GET /v1/deployments)')
    .addOption(
      new Option('-e, --env <environment>', 'only deployments in this environment (prod, stg, dev)').argParser(
        parseEnvironment,
      ),
    )
    .addOption(
      new Option('--status <status>', 'only deployments in this state').choices([
        'deploying',
        'deployed',
        'failed',
        'stopped',
      ] as const),
    )
    .option('--server <name|mcp_id>', 'only this server and its deployments')
    .option('--servers', 'only the servers')
    .option('--deployments', 'only the deployments')
    .option('--wide', 'names and URLs in full, however wide the tables (otherwise they fit 100 columns)');
}
export type LsOptions = OptionsOf<ReturnType<typeof defineLs>>;

export function defineLogs(parent: CommandUnknownOpts) {
  return parent
    .command('logs')
    .description('print the log of a deployment (GET /v1/deploy/{id}/logs)')
    .argument(...DEPLOYMENT)
    .option('--file <file>', FILE[1])
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .option('--since <time>', 'lines since a time (2026-01-31T12:00:00Z) or a duration back (10m, 2h)')
    .option('-n, --lines <n>', 'how many of the newest lines (at most 5000)', parseInteger('--lines', 1))
    .addOption(
      new Option('--level <level>', 'only lines of this level and above').choices([
        'debug',
        'info',
        'warn',
        'error',
      ] as const),
    )
    .option('--grep <text|/regex/>', 'only lines with this text (any case), or matching /regex/ (flags i, m, s)')
    .option('--instance <id>', 'only the lines of this instance (i1, i2, …)');
}
export type LogsOptions = OptionsOf<ReturnType<typeof defineLogs>>;

export function defineStop(parent: CommandUnknownOpts) {
  return parent
    .command('stop')
    .description('stop a deployment; its record and logs stay (POST /v1/deploy/{id}/stop)')
    .argument(...DEPLOYMENT)
    .option(...FILE)
    .option('--idempotency-key <key>', 'reuse a key so a repeated request does not stop twice');
}
export type StopOptions = OptionsOf<ReturnType<typeof defineStop>>;

export function defineRm(parent: CommandUnknownOpts) {
  return parent
    .command('rm')
    .description(
      'remove stopped or failed deployments (record, logs, metrics) and builds no deployment runs (DELETE /v1/deploy/{id}, DELETE /v1/servers/{mcp_id})',
    )
    .argument(
      '<deployments...>',
      'deploy_… ids, <server>.<env> names (notes.prod), names from their URLs, or mcp_… build ids',
    )
    .option('-y, --yes', 'remove without asking; needed where no one can be asked (CI, pipes, --json)');
}
export type RmOptions = OptionsOf<ReturnType<typeof defineRm>>;

export function defineRollback(parent: CommandUnknownOpts) {
  return parent
    .command('rollback')
    .description('redeploy the previous deployment of the same server and environment (POST /v1/deploy/{id}/rollback)')
    .argument(...DEPLOYMENT)
    .option(...FILE)
    .option('--no-wait', 'return once the rollback is accepted; do not wait for it')
    .option('--timeout <seconds>', 'how long to wait for the new deployment', parseSeconds, 600)
    .option('--idempotency-key <key>', 'reuse a key so a repeated request does not roll back twice');
}
export type RollbackOptions = OptionsOf<ReturnType<typeof defineRollback>>;

export function defineMetrics(parent: CommandUnknownOpts) {
  return parent
    .command('metrics')
    .description('response times, throughput and tool errors of a deployment (GET /v1/deploy/{id}/metrics)')
    .argument(...DEPLOYMENT)
    .option(...FILE)
    .option('--window <seconds>', 'the time window, at most 86400', parseInteger('--window', 1), 300)
    .option('--since <span>', 'look back over the kept history instead: 30m, 1h, 24h, 7d (at most 30d)', parseSpan);
}
export type MetricsOptions = OptionsOf<ReturnType<typeof defineMetrics>>;

export function defineUsage(parent: CommandUnknownOpts) {
  return parent
    .command('usage')
    .description('calls per tool, client, user and day of a deployment (GET /v1/deploy/{id}/usage)')
    .argument(...DEPLOYMENT)
    .option(...FILE)
    .option('--since <span>', 'how far back, in whole UTC days: 1d, 7d, 30d (at most 30d)', parseSpan, '7d');
}
export type UsageOptions = OptionsOf<ReturnType<typeof defineUsage>>;

export function defineAlerts(parent: CommandUnknownOpts) {
  return parent
    .command('alerts')
    .description('alerts firing now and resolved lately, per deployment (GET /v1/alerts)')
    .option('-d, --deployment <deployment>', 'only the alerts of this deployment: its id or <server>.<env>');
}
export type AlertsOptions = OptionsOf<ReturnType<typeof defineAlerts>>;

/** Each run of a case is a call to the model: 20 runs are enough to see a rate, and bound the cost. */
export const MAX_RUNS = 20;

function parseRuns(value: string): number {
  const n = parseInteger('--runs', 1)(value);
  if (n > MAX_RUNS) throw new InvalidArgumentError(`--runs must be at most ${MAX_RUNS}`);
  return n;
}

/** The options of repeated runs, several models and comparing runs, shared by `test` and `up`. */
function withEvalOptions<Args extends unknown[], Options extends OptionValues, Globals extends OptionValues>(
  command: Command<Args, Options, Globals>,
) {
  return command
    .option('--runs <n>', `run each case n times, 1 to ${MAX_RUNS} (default 1)`, parseRuns)
    .option('--pass-rate <rate>', 'the share of its runs a case must pass, 0 to 1 (default 1: every run)', parseRate)
    .option(
      '--judge <model>',
      'the model that scores replies against expect.reply (default: tests.judge, else mcpctl-local)',
    )
    .option('--compare', 'show what changed since the previous run of the file’s cases (every run is kept)')
    .option(
      '--fail-on-regression',
      'fail (exit 7) when a case’s pass rate or mean success rate dropped by more than 5% since the previous run',
    );
}

export function defineTest(parent: CommandUnknownOpts) {
  return withEvalOptions(
    parent
      .command('test')
      .description('let an AI agent use a server and report how it went (POST /v1/test)')
      .argument('[target]', `an mcp_… id, or a definition to build first: ${DEFINITION}`)
      .option('-m, --message <text>', 'message for the agent (default: the file’s tests: cases)')
      .option(
        '--model <id>',
        'AI model, listed below (default: the service’s default); repeat to run every case with each; checked before anything is built',
        collect,
      )
      .option('--user-id <id>', 'user id for per-user resources')
      .option('--threshold <rate>', 'fail (exit 7) below this success rate, 0 to 1 (default 0.8)', parseRate)
      .option('--expect-tool <name>', 'with --message: a tool the agent should call (repeatable)', collect)
      .option('--junit <file>', 'also write a JUnit XML report to this file')
      .option(
        '--env-var <NAME>',
        'give the server this variable in the test, with its value from your environment (repeatable)',
        collect,
      )
      .option('--env-file <file>', 'give the server the NAME=value lines of this file in the test'),
  ).addHelpText('after', `\n${describeModels()}`);
}
export type TestOptions = OptionsOf<ReturnType<typeof defineTest>>;

export function defineModels(parent: CommandUnknownOpts) {
  return parent
    .command('models')
    .description("list the service's test models: built-in and from its settings, and whether each can run now");
}

export function defineUp(parent: CommandUnknownOpts) {
  return withEvalOptions(
    withDeployOptions(
      parent
        .command('up')
        .description('validate, build and test a definition, and deploy it only if its tests: cases pass')
        .argument('[file]', DEFINITION),
    )
      .option(
        '--replace',
        'replace the running deployment of this server name even when it was built from another file',
      )
      .option('--idempotency-key <key>', 'reuse a key so a repeated run does not build or deploy twice')
      .option('--model <id>', 'AI model for every case (see mcpctl test --help); repeat to test with each', collect)
      .option(
        '--threshold <rate>',
        'a case fails below this success rate, 0 to 1 (default: the file’s, else 0.8)',
        parseRate,
      )
      .option('--junit <file>', 'also write a JUnit XML report of the cases to this file'),
  );
}
export type UpOptions = OptionsOf<ReturnType<typeof defineUp>>;

export function defineDashboard(parent: CommandUnknownOpts) {
  return parent
    .command('dashboard')
    .description("print (and on a desktop open) the engine's dashboard URL, logged in with a one-time code")
    .option('--no-open', 'print the URL only; do not open a browser');
}
export type DashboardOptions = OptionsOf<ReturnType<typeof defineDashboard>>;
