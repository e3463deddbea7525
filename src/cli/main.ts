/**
 * Wires commander and nothing else: every action lazy-imports its command module, so
 * `mcpctl --version` and `--help` load commander alone (no HTTP client, ora, inquirer, yaml, zod).
 */
import { Command, CommanderError, type CommandUnknownOpts, type OptionValues } from '@commander-js/extra-typings';
import type { CommandContext, GlobalOptions, IO } from './context.js';
import { isCI } from './context.js';
import { EXIT } from '../shared/errors.js';
import type { Output } from './output.js';
import { report } from './report.js';
import { VERSION as version } from '../shared/version.js';
import { defineConfig, defineConfigShow, defineConfigUse, defineLogin, defineLogout } from './specs/credentials.js';
import { defineDev, defineInit, defineValidate } from './specs/definitions.js';
import {
  defineEngine,
  defineEngineLogs,
  defineEngineReload,
  defineEngineStart,
  defineEngineStatus,
  defineEngineStop,
  defineServe,
} from './specs/engine.js';
import { defineCompletion } from './specs/completion.js';
import { addExamples } from './specs/examples.js';
import { defineExport, defineExportImage, defineExportKubernetes } from './specs/export.js';
import { defineCall, defineTools, joinCallJson } from './specs/mcp.js';
import { parseSeconds } from './specs/options.js';
import {
  defineBuild,
  defineDeploy,
  defineLogs,
  defineLs,
  defineMetrics,
  defineRm,
  defineRollback,
  defineStatus,
  defineStop,
  defineTest,
  defineUp,
  defineUsage,
  defineAlerts,
  defineModels,
  defineDashboard,
} from './specs/service.js';

interface RunState {
  io: IO;
  signal: AbortSignal;
  out?: Output;
}

/** The output module (and chalk with it) loads only when a command runs or an error is shown. */
async function makeOutput(io: IO, globals: Pick<GlobalOptions, 'json' | 'quiet' | 'color'>): Promise<Output> {
  const { Output } = await import('./output.js');
  const noColor = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '';
  return new Output({
    stdout: io.stdout,
    stderr: io.stderr,
    json: globals.json,
    quiet: globals.quiet,
    color: globals.color && !noColor,
    ci: isCI(io.env),
    // GitHub Actions (GITHUB_ACTIONS=true): workflow commands, docs/ci.md
    github: io.env.GITHUB_ACTIONS === 'true' ? { cwd: io.cwd, workspace: io.env.GITHUB_WORKSPACE } : undefined,
  });
}

function globalOptions(command: CommandUnknownOpts): GlobalOptions {
  const raw = command.optsWithGlobals();
  return {
    json: raw.json === true,
    quiet: raw.quiet === true,
    color: raw.color !== false,
    debug: raw.debug === true,
    ...(typeof raw.apiUrl === 'string' ? { apiUrl: raw.apiUrl } : {}),
    ...(typeof raw.profile === 'string' ? { profile: raw.profile } : {}),
    ...(typeof raw.requestTimeout === 'number' ? { requestTimeout: raw.requestTimeout } : {}),
  };
}

/**
 * Makes a command run its handler, imported only then: the handler's arguments and options are typed
 * by the command's definition.
 */
function attach(state: RunState) {
  return <Args extends unknown[], Options extends OptionValues>(
    command: Command<Args, Options, OptionValues>,
    load: () => Promise<NoInfer<(ctx: CommandContext, ...args: [...Args, Options]) => Promise<void>>>,
  ): void => {
    command.action(async (...args) => {
      const globals = globalOptions(command);
      const out = await makeOutput(state.io, globals);
      state.out = out;
      const handler = await load();
      const ctx = { io: state.io, globals, out, signal: state.signal };
      await handler(ctx, ...(args.slice(0, -1) as [...Args, Options]));
    });
  };
}

/** mcpctl itself: its global options and how commander writes and exits. */
function defineProgram(state: RunState) {
  return new Command('mcpctl')
    .description('Build, test and deploy MCP servers from a YAML definition.')
    .version(version, '-v, --version', 'print the version')
    .option('--json', 'print exactly one JSON document on stdout')
    .option('-q, --quiet', 'print only what was asked for, no progress')
    .option('--no-color', 'no colour (NO_COLOR is honoured too)')
    .option('--api-url <url>', 'the /v1 service to use (default: MCPCTL_API_URL, the profile, or the local engine)')
    .option('--profile <name>', 'the named profile of the config file to use ("default": the local engine)')
    .option(
      '--request-timeout <seconds>',
      'how long to wait for the service to answer a request (default: MCPCTL_REQUEST_TIMEOUT, else 30)',
      parseSeconds,
    )
    .option('--debug', 'show HTTP exchanges and stack traces')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (text) => state.io.stdout.write(text),
      writeErr: (text) => state.io.stderr.write(text),
    })
    .exitOverride();
}

/** Builds the commander program. Exported for tests and for the help text generator. */
export function createProgram(state: RunState): Command {
  const program = defineProgram(state) as unknown as CommandUnknownOpts;
  const on = attach(state);
  // definitions
  on(defineInit(program), async () => (await import('./commands/init.js')).initCommand);
  on(defineValidate(program), async () => (await import('./commands/validate.js')).validateCommand);
  on(defineDev(program), async () => (await import('./commands/dev.js')).devCommand);
  // the /v1 service
  on(defineBuild(program), async () => (await import('./commands/build.js')).buildCommand);
  on(defineDeploy(program), async () => (await import('./commands/deploy.js')).deployCommand);
  on(defineStatus(program), async () => (await import('./commands/status.js')).statusCommand);
  on(defineLs(program), async () => (await import('./commands/ls.js')).lsCommand);
  on(defineLogs(program), async () => (await import('./commands/logs.js')).logsCommand);
  on(defineStop(program), async () => (await import('./commands/stop.js')).stopCommand);
  on(defineRm(program), async () => (await import('./commands/rm.js')).rmCommand);
  on(defineRollback(program), async () => (await import('./commands/rollback.js')).rollbackCommand);
  on(defineMetrics(program), async () => (await import('./commands/metrics.js')).metricsCommand);
  on(defineUsage(program), async () => (await import('./commands/usage.js')).usageCommand);
  on(defineAlerts(program), async () => (await import('./commands/alerts.js')).alertsCommand);
  on(defineDashboard(program), async () => (await import('./commands/dashboard.js')).dashboardCommand);
  on(defineTest(program), async () => (await import('./commands/test.js')).testCommand);
  on(defineUp(program), async () => (await import('./commands/up.js')).upCommand);
  on(defineModels(program), async () => (await import('./commands/models.js')).modelsCommand);
  // an MCP client
  on(defineTools(program), async () => (await import('./commands/tools.js')).toolsCommand);
  on(defineCall(program), async () => (await import('./commands/call.js')).callCommand);
  const exporter = defineExport(program);
  on(defineExportKubernetes(exporter), async () => (await import('./commands/export.js')).exportKubernetesCommand);
  on(defineExportImage(exporter), async () => (await import('./commands/export-image.js')).exportImageCommand);
  // credentials
  on(defineLogin(program), async () => (await import('./commands/login.js')).loginCommand);
  on(defineLogout(program), async () => (await import('./commands/login.js')).logoutCommand);
  const config = defineConfig(program);
  on(defineConfigShow(config), async () => (await import('./commands/profiles.js')).configShowCommand);
  on(defineConfigUse(config), async () => (await import('./commands/profiles.js')).configUseCommand);
  // the local engine
  const engine = defineEngine(program);
  on(defineEngineStart(engine), async () => (await import('./commands/engine.js')).engineStartCommand);
  on(defineEngineStop(engine), async () => (await import('./commands/engine.js')).engineStopCommand);
  on(defineEngineStatus(engine), async () => (await import('./commands/engine.js')).engineStatusCommand);
  on(defineEngineLogs(engine), async () => (await import('./commands/engine.js')).engineLogsCommand);
  on(defineEngineReload(engine), async () => (await import('./commands/models.js')).engineReloadCommand);
  on(defineServe(program), async () => (await import('./commands/serve.js')).serveCommand);
  on(defineCompletion(program), async () => (await import('./commands/completion.js')).completionCommand);
  addExamples(program);
  return program as unknown as Command;
}

export interface RunOptions extends Partial<IO> {
  signal?: AbortSignal;
}

/**
 * Runs the CLI with `argv` (without `node` and the script) and returns the exit code.
 * Never calls process.exit; safe to call from tests and other programs.
 */
export async function run(given: string[], options: RunOptions = {}): Promise<number> {
  const argv = joinCallJson(given);
  const io: IO = {
    stdout: options.stdout ?? process.stdout,
    stderr: options.stderr ?? process.stderr,
    // made when a command first reads it: Node builds process.stdin (a stream, with tty or net) only
    // when asked, about 5 ms of CPU that most commands never need
    get stdin() {
      return options.stdin ?? process.stdin;
    },
    env: options.env ?? process.env,
    cwd: options.cwd ?? process.cwd(),
  };
  const state: RunState = { io, signal: options.signal ?? new AbortController().signal };
  const program = createProgram(state);
  const wantsJson = argv.includes('--json');
  // commander prints the version as plain text; with --json it is a document like any result
  if (wantsJson && asksVersion(argv, program)) {
    io.stdout.write(`${JSON.stringify({ version, node: process.version }, null, 2)}\n`);
    return EXIT.ok;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return EXIT.ok; // --help, --version
    const out =
      state.out ?? (await makeOutput(io, { json: wantsJson, quiet: false, color: !argv.includes('--no-color') }));
    return report(error, out, argv.includes('--debug'));
  }
}

/** `--version` (or `-v`) given to mcpctl itself, before any command name. */
function asksVersion(argv: string[], program: Command): boolean {
  const commands = new Set(program.commands.map((c) => c.name()));
  for (const arg of argv) {
    if (arg === '--version' || arg === '-v') return true;
    if (commands.has(arg)) return false;
  }
  return false;
}
