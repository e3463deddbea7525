/**
 * Wires commander and nothing else: every action lazy-imports its command module, so
 * `mcpctl --version` and `--help` load commander alone (no HTTP client, ora, inquirer, yaml, zod).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { CommandContext, GlobalOptions, IO } from './context.js';
import { isCI } from './context.js';
import { EXIT } from '../shared/errors.js';
import { describeModels } from '../shared/models.js';
import type { Output } from './output.js';
import { report } from './report.js';
import { VERSION as version } from '../shared/version.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Handler = (ctx: CommandContext, ...args: any[]) => Promise<void>;

function parseInteger(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number ≥ ${min}`);
    return n;
  };
}
function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number of seconds > 0');
  return n;
}
function parseRate(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('must be a number from 0 to 1');
  return n;
}
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

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

/** The options that shape a deployment, shared by `deploy` and `up`. */
function withDeployOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '-e, --env <environment>',
        'target environment (default: the file’s deploy.environment, else development)',
      ).choices(['production', 'staging', 'development']),
    )
    .option('--domain <host>', 'custom host name')
    .option('--min-instances <n>', 'minimum instances', parseInteger('--min-instances', 0))
    .option('--max-instances <n>', 'maximum instances', parseInteger('--max-instances', 1))
    .option('--env-var <NAME>', 'pass this variable, with its value from your environment (repeatable)', collect)
    .option('--env-file <file>', 'read NAME=value lines from this file into env_vars')
    .option('--no-wait', 'return once the deployment is accepted; do not wait for it')
    .option('--timeout <seconds>', 'how long to wait for the deployment', parseSeconds, 600);
}

/** Builds the commander program. Exported for tests and for the help text generator. */
export function createProgram(state: RunState): Command {
  const program = new Command('mcpctl');

  const action =
    (load: () => Promise<Handler>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args.at(-1) as Command;
      const raw = command.optsWithGlobals<Record<string, unknown>>();
      const globals: GlobalOptions = {
        json: raw.json === true,
        quiet: raw.quiet === true,
        color: raw.color !== false,
        debug: raw.debug === true,
        ...(typeof raw.apiUrl === 'string' ? { apiUrl: raw.apiUrl } : {}),
        ...(typeof raw.profile === 'string' ? { profile: raw.profile } : {}),
        ...(typeof raw.requestTimeout === 'number' ? { requestTimeout: raw.requestTimeout } : {}),
      };
      const out = await makeOutput(state.io, globals);
      state.out = out;
      const handler = await load();
      await handler({ io: state.io, globals, out, signal: state.signal }, ...args.slice(0, -1));
    };

  program
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

  // --- definitions --------------------------------------------------------------------------
  program
    .command('init')
    .description('scaffold a server definition from a template')
    .argument('[dir]', 'folder to write it in', '.')
    .option('--name <name>', 'server name (default: the folder name)')
    .addOption(new Option('--template <template>', 'template to start from').choices(['basic', 'advanced', 'custom']))
    .option('--tool <name>', 'name of the first tool')
    .option('-y, --yes', 'accept defaults, ask nothing')
    .option('-f, --force', 'overwrite files that already exist')
    .action(action(async () => (await import('./commands/init.js')).initCommand));

  program
    .command('validate')
    .description('check a definition offline: YAML, schema and semantic checks')
    .argument('<file>', 'the definition (YAML)')
    .action(action(async () => (await import('./commands/validate.js')).validateCommand));

  program
    .command('dev')
    .description('serve a definition as a live MCP server on this machine; reloads when it changes')
    .argument('<file>', 'the definition (YAML)')
    .option('--port <n>', 'port to listen on (0: any free port)', parseInteger('--port', 0), 0)
    .option('--host <address>', 'address to listen on (loopback unless --allow-remote)', '127.0.0.1')
    .option(
      '--allow-remote',
      'allow a --host other machines reach: they could call every tool, which runs with your environment',
    )
    .option('--stdio', 'serve over stdin/stdout, for clients that start the server themselves')
    .option(
      '--user-id <id>',
      'the caller of requests that name none (for per-user resources); with auth, of --stdio only: over HTTP user.id comes from an OAuth token alone',
    )
    .action(action(async () => (await import('./commands/dev.js')).devCommand));

  // --- the /v1 service -----------------------------------------------------------------------
  program
    .command('build')
    .description('build a server from a definition (POST /v1/build)')
    .argument('<file>', 'the definition (YAML)')
    .option('--idempotency-key <key>', 'reuse a key so a repeated request does not build twice')
    .action(action(async () => (await import('./commands/build.js')).buildCommand));

  withDeployOptions(
    program
      .command('deploy')
      .description('deploy a built server, or build and deploy a definition (POST /v1/deploy)')
      .argument('<target>', 'an mcp_… id, or a definition file to build first'),
  )
    .option('--idempotency-key <key>', 'reuse a key so a repeated request does not deploy twice')
    .action(action(async () => (await import('./commands/deploy.js')).deployCommand));

  program
    .command('status')
    .description('show the status of a deployment (GET /v1/deploy/{id}/status)')
    .argument('<deployment_id>', 'a deploy_… id')
    .option('-w, --watch', 'keep watching until the deployment settles')
    .option('--timeout <seconds>', 'how long to watch', parseSeconds, 600)
    .action(action(async () => (await import('./commands/status.js')).statusCommand));

  program
    .command('ls')
    .description('list servers and deployments (GET /v1/servers, GET /v1/deployments)')
    .addOption(
      new Option('-e, --env <environment>', 'only deployments in this environment').choices([
        'production',
        'staging',
        'development',
      ]),
    )
    .addOption(
      new Option('--status <status>', 'only deployments in this state').choices([
        'deploying',
        'deployed',
        'failed',
        'stopped',
      ]),
    )
    .option('--server <name|mcp_id>', 'only this server and its deployments')
    .option('--servers', 'only the servers')
    .option('--deployments', 'only the deployments')
    .action(action(async () => (await import('./commands/ls.js')).lsCommand));

  program
    .command('logs')
    .description('print the log of a deployment (GET /v1/deploy/{id}/logs)')
    .argument('<deployment_id>', 'a deploy_… id')
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .option('--since <time>', 'lines since a time (2026-01-31T12:00:00Z) or a duration back (10m, 2h)')
    .option('-n, --lines <n>', 'how many of the newest lines (at most 5000)', parseInteger('--lines', 1))
    .action(action(async () => (await import('./commands/logs.js')).logsCommand));

  program
    .command('stop')
    .description('stop a deployment; its record and logs stay (POST /v1/deploy/{id}/stop)')
    .argument('<deployment_id>', 'a deploy_… id')
    .option('--idempotency-key <key>', 'reuse a key so a repeated request does not stop twice')
    .action(action(async () => (await import('./commands/stop.js')).stopCommand));

  program
    .command('rollback')
    .description('redeploy the previous deployment of the same server and environment (POST /v1/deploy/{id}/rollback)')
    .argument('<deployment_id>', 'a deploy_… id')
    .option('--no-wait', 'return once the rollback is accepted; do not wait for it')
    .option('--timeout <seconds>', 'how long to wait for the new deployment', parseSeconds, 600)
    .option('--idempotency-key <key>', 'reuse a key so a repeated request does not roll back twice')
    .action(action(async () => (await import('./commands/rollback.js')).rollbackCommand));

  program
    .command('metrics')
    .description('response times, throughput and tool errors of a deployment (GET /v1/deploy/{id}/metrics)')
    .argument('<deployment_id>', 'a deploy_… id')
    .option('-w, --window <seconds>', 'the time window, at most 86400', parseInteger('--window', 1), 300)
    .action(action(async () => (await import('./commands/metrics.js')).metricsCommand));

  program
    .command('test')
    .description('let an AI agent use a server and report how it went (POST /v1/test)')
    .argument('<target>', 'an mcp_… id, or a definition file to build first')
    .option('-m, --message <text>', 'message for the agent (default: the file’s tests: cases)')
    .option('--model <id>', 'AI model, listed below (default: the service’s default); checked before anything is built')
    .option('--user-id <id>', 'user id for per-user resources')
    .option('--threshold <rate>', 'fail (exit 7) below this success rate, 0 to 1 (default 0.8)', parseRate)
    .option('--expect-tool <name>', 'with --message: a tool the agent should call (repeatable)', collect)
    .option('--junit <file>', 'also write a JUnit XML report to this file')
    .addHelpText('after', `\n${describeModels()}`)
    .action(action(async () => (await import('./commands/test.js')).testCommand));

  withDeployOptions(
    program
      .command('up')
      .description('validate, build and test a definition, and deploy it only if its tests: cases pass')
      .argument('<file>', 'the definition (YAML)'),
  )
    .option('--idempotency-key <key>', 'reuse a key so a repeated run does not build or deploy twice')
    .option('--model <id>', 'AI model for every case (see mcpctl test --help)')
    .option(
      '--threshold <rate>',
      'a case fails below this success rate, 0 to 1 (default: the file’s, else 0.8)',
      parseRate,
    )
    .option('--junit <file>', 'also write a JUnit XML report of the cases to this file')
    .action(action(async () => (await import('./commands/up.js')).upCommand));

  const exporter = program.command('export').description('write what runs a server on another platform');
  exporter
    .command('kubernetes')
    .description(
      'write Kubernetes manifests for a definition or a built server: Deployment, Service, Secret, autoscaler, disruption budget, Ingress with TLS',
    )
    .argument('<target>', 'a definition file, or an mcp_… id of a built server')
    .addOption(
      new Option('-e, --env <environment>', 'the environment the manifests are for')
        .choices(['production', 'staging', 'development'])
        .makeOptionMandatory(),
    )
    .option('--registry <registry>', 'where the cluster pulls the image from, such as registry.example.com/team')
    .option(
      '-o, --out <dir>',
      'folder to write one file per object in, or - for one YAML stream on stdout (default: k8s/<server>-<env>)',
    )
    .option('-n, --namespace <namespace>', 'namespace of the objects (default: the one kubectl uses)')
    .option('--issuer <name>', 'cert-manager ClusterIssuer of the Ingress certificate (default: letsencrypt-prod)')
    .option('--ingress-class <name>', 'IngressClass of the Ingress (default: the cluster’s default class)')
    .option('--domain <host>', 'host name of the Ingress (default: the file’s deploy.domain)')
    .option('--min-instances <n>', 'minimum instances', parseInteger('--min-instances', 0))
    .option('--max-instances <n>', 'maximum instances', parseInteger('--max-instances', 1))
    .option(
      '--env-var <NAME>',
      'put this variable in the Secret, with its value from your environment (repeatable)',
      collect,
    )
    .option('--env-file <file>', 'put the NAME=value lines of this file in the Secret')
    .action(action(async () => (await import('./commands/export.js')).exportKubernetesCommand));
  exporter
    .command('image')
    .description(
      'build the container image of a definition (mcpctl-server:<bundle digest>) on the Docker host of DOCKER_HOST; push it with --registry',
    )
    .argument('<file>', 'the definition (YAML)')
    .option('--base-image <image>', 'the image with node the server image starts from (default: node:20-slim)')
    .option('--registry <registry>', 'tag the image for this registry and push it, such as registry.example.com/team')
    .action(action(async () => (await import('./commands/export-image.js')).exportImageCommand));

  // --- credentials ---------------------------------------------------------------------------
  program
    .command('login')
    .description(
      'save an API key for a /v1 service in a profile (the key is never an argument); says when the current profile changes',
    )
    .option('--with-key', 'read the key from stdin instead of a hidden prompt')
    .action(action(async () => (await import('./commands/login.js')).loginCommand));

  program
    .command('logout')
    .description('remove the saved key of a profile; commands that named none go to the local engine again')
    .action(action(async () => (await import('./commands/login.js')).logoutCommand));

  const config = program
    .command('config')
    .description('where commands go: profiles of the config file ("default" is the local engine)');
  config
    .command('show')
    .description('show the profile, service and key source commands use, and every profile (never a key)')
    .action(action(async () => (await import('./commands/profiles.js')).configShowCommand));
  config
    .command('use')
    .description('make a profile the current one; "default" is the local engine')
    .argument('<profile>', 'a profile saved by `mcpctl login`, or default')
    .action(action(async () => (await import('./commands/profiles.js')).configUseCommand));

  // --- the local engine ----------------------------------------------------------------------
  const engine = program
    .command('engine')
    .description('the local engine: a /v1 service in the background, one per MCPCTL_HOME');
  engine
    .command('start')
    .description('start the local engine in the background (nothing happens if it runs)')
    .action(action(async () => (await import('./commands/engine.js')).engineStartCommand));
  engine
    .command('stop')
    .description('stop the local engine; its deployments stop and come back at the next start')
    .action(action(async () => (await import('./commands/engine.js')).engineStopCommand));
  engine
    .command('status')
    .description('show whether the local engine runs: URL, pid, version, uptime, state folder')
    .action(action(async () => (await import('./commands/engine.js')).engineStatusCommand));
  engine
    .command('logs')
    .description("print the local engine's log")
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .option('-n, --lines <n>', 'how many of the last lines to print', parseInteger('--lines', 1), 200)
    .action(action(async () => (await import('./commands/engine.js')).engineLogsCommand));

  program
    .command('serve')
    .description('run the engine in the foreground (containers, shared hosts); logs JSON lines to stdout')
    .option('--host <address>', 'address to listen on (default: 127.0.0.1); other than loopback needs MCPCTL_API_KEY')
    .option(
      '--port <n>',
      'port to listen on (default: MCPCTL_PORT, else 7070; 0 for any free port)',
      parseInteger('--port', 0),
    )
    .addOption(
      new Option(
        '--runner <kind>',
        'what runs deployments: process, docker or kubernetes (default: MCPCTL_RUNNER, the settings file, else process)',
      ).choices(['process', 'docker', 'kubernetes']),
    )
    .option(
      '--tls-cert <file>',
      'serve HTTPS too, with this PEM certificate (full chain) as the default one (default: MCPCTL_TLS_CERT, "tls" of engine-settings.json)',
    )
    .option('--tls-key <file>', 'the PEM private key of --tls-cert (default: MCPCTL_TLS_KEY)')
    .option(
      '--tls-port <n>',
      'the HTTPS port (default: MCPCTL_TLS_PORT, else any free port); HTTP stays on --port',
      parseInteger('--tls-port', 0),
    )
    .option(
      '--tls-certs-dir <dir>',
      'a folder of certificate and key pairs, chosen by SNI (default: MCPCTL_TLS_CERTS_DIR, else <home>/certs)',
    )
    .option(
      '--tls-host <address>',
      'address HTTPS listens on, such as 0.0.0.0 while HTTP stays on --host (default: MCPCTL_TLS_HOST, "tls": { "host" }, else --host); other than loopback needs MCPCTL_API_KEY',
    )
    .action(action(async () => (await import('./commands/serve.js')).serveCommand));

  return program;
}

export interface RunOptions extends Partial<IO> {
  signal?: AbortSignal;
}

/**
 * Runs the CLI with `argv` (without `node` and the script) and returns the exit code.
 * Never calls process.exit; safe to call from tests and other programs.
 */
export async function run(argv: string[], options: RunOptions = {}): Promise<number> {
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
