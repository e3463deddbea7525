/**
 * The commands that act as an MCP client: `tools` lists what a server offers and `call` calls one
 * of its tools. A target is a definition file (or a folder with a server.yaml), an MCP URL, or a
 * deployment (its id or `<server>.<env>`).
 */
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { collect, parseSeconds, type OptionsOf } from './options.js';

const TARGET = 'a definition file or folder, an MCP URL, or a deployment (id or <server>.<env>)';
const HEADER = 'send this header, such as "Authorization: Bearer <token>" (repeatable)';
const USER_ID = 'the caller, for per-user resources of a definition file served for the command';
const TIMEOUT = 'how long to wait for each answer of the server';

export function defineTools(parent: CommandUnknownOpts) {
  return parent
    .command('tools')
    .description('list the tools an MCP server offers, with their arguments')
    .argument('<target>', TARGET)
    .option('-H, --header <"Name: value">', HEADER, collect)
    .option('--user-id <id>', USER_ID)
    .option('--timeout <seconds>', TIMEOUT, parseSeconds, 60);
}
export type ToolsOptions = OptionsOf<ReturnType<typeof defineTools>>;

export function defineCall(parent: CommandUnknownOpts) {
  return parent
    .command('call')
    .description('call a tool of an MCP server and print its result (exit 1 when the tool reports an error)')
    .argument('<target>', TARGET)
    .argument('<tool>', 'the tool to call')
    .option('-a, --arg <key=value>', 'an argument, typed by the tool’s input schema (repeat a key for a list)', collect)
    .option('--json <object>', 'the arguments as a JSON object, under the --arg pairs; --json alone: the raw result')
    .option('-H, --header <"Name: value">', HEADER, collect)
    .option('--user-id <id>', USER_ID)
    .option('--timeout <seconds>', TIMEOUT, parseSeconds, 60);
}
export type CallOptions = OptionsOf<ReturnType<typeof defineCall>>;

/**
 * `--json` is also the global flag for JSON output, which commander reads wherever it appears: a
 * `--json` of `call` followed by an object becomes `--json={…}`, which only `call` knows.
 */
export function joinCallJson(argv: readonly string[]): string[] {
  const at = argv.indexOf('call');
  if (at < 0) return [...argv];
  const out = argv.slice(0, at + 1);
  for (let i = at + 1; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (arg === '--json' && next !== undefined && next.trimStart().startsWith('{')) {
      out.push(`--json=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}
