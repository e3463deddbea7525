/**
 * The commands that work on a definition file offline: `init`, `validate` and `dev`. Each definition
 * names the command, its arguments, options and help; its handler module loads only when it runs.
 */
import { Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { parseInteger, type OptionsOf } from './options.js';

const DEFINITION = 'the definition (YAML), or a folder with a server.yaml (default: ./server.yaml)';

export function defineInit(parent: CommandUnknownOpts) {
  return parent
    .command('init')
    .description('scaffold a server definition from a template')
    .argument('[dir]', 'folder to write it in', '.')
    .option('--name <name>', 'server name (default: the folder name)')
    .addOption(
      new Option('--template <template>', 'template to start from').choices(['basic', 'advanced', 'custom'] as const),
    )
    .option('--tool <name>', 'name of the first tool')
    .option('-y, --yes', 'accept defaults, ask nothing')
    .option('--force', 'overwrite files that already exist (no short form: it destroys)');
}
export type InitOptions = OptionsOf<ReturnType<typeof defineInit>>;

export function defineValidate(parent: CommandUnknownOpts) {
  return parent
    .command('validate')
    .description('check a definition offline: YAML, schema and semantic checks')
    .argument('[file]', DEFINITION);
}

export function defineDev(parent: CommandUnknownOpts) {
  return parent
    .command('dev')
    .description('serve a definition as a live MCP server on this machine; reloads when it changes')
    .argument('[file]', DEFINITION)
    .option(
      '--port <n>',
      'port to listen on (default: the one this file had last time, unless taken; 0: any free port)',
      parseInteger('--port', 0),
    )
    .option('--host <address>', 'address to listen on (loopback unless --allow-remote)', '127.0.0.1')
    .option(
      '--allow-remote',
      'allow a --host other machines reach: they could call every tool, which runs with your environment',
    )
    .option('--stdio', 'serve over stdin/stdout, for clients that start the server themselves')
    .option(
      '--user-id <id>',
      'the caller of requests that name none (for per-user resources); with auth, of --stdio only: over HTTP user.id comes from an OAuth token alone',
    );
}
export type DevOptions = OptionsOf<ReturnType<typeof defineDev>>;
