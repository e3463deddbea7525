/**
 * The local engine: `engine start|stop|status|logs` and `serve`, the engine in the foreground. Each
 * definition names the command, its arguments, options and help; its handler module loads only when
 * it runs.
 */
import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { parseInteger, type OptionsOf } from './options.js';

export function defineEngine(parent: CommandUnknownOpts) {
  return parent.command('engine').description('the local engine: a /v1 service in the background, one per MCPCTL_HOME');
}

export function defineEngineStart(parent: CommandUnknownOpts) {
  return parent.command('start').description('start the local engine in the background (nothing happens if it runs)');
}

export function defineEngineStop(parent: CommandUnknownOpts) {
  return parent
    .command('stop')
    .description('stop the local engine; its deployments stop and come back at the next start');
}

export function defineEngineStatus(parent: CommandUnknownOpts) {
  return parent
    .command('status')
    .description('show whether the local engine runs: URL, pid, version, uptime, state folder');
}

export function defineEngineReload(parent: CommandUnknownOpts) {
  return parent
    .command('reload')
    .description(
      "read the engine's model settings again and hand it the model keys set here; deployments keep running",
    );
}

export function defineEngineLogs(parent: CommandUnknownOpts) {
  return parent
    .command('logs')
    .description("print the local engine's log")
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .option('-n, --lines <n>', 'how many of the last lines to print', parseInteger('--lines', 1), 200);
}
export type EngineLogsOptions = OptionsOf<ReturnType<typeof defineEngineLogs>>;

export function defineServe(parent: CommandUnknownOpts) {
  return parent
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
      ).choices(['process', 'docker', 'kubernetes'] as const),
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
    );
}
export type ServeOptions = OptionsOf<ReturnType<typeof defineServe>>;
