/** `mcpctl build <file>`: load a definition, send it to POST /v1/build, show the built server. */
import { relative, isAbsolute } from 'node:path';
import type { ApiClient } from '../../api/client.js';
import type { McpServer } from '../../api/contract.js';
import type { LoadedDefinition } from '../../definition/load.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import type { Printer } from '../output.js';
import { formatProblem, formatSeconds, plural, shellQuote } from '../render/format.js';

export interface BuildCommandOptions {
  idempotencyKey?: string;
}

/** A loaded definition, with how to name its file and its fields in messages. */
export interface DefinitionFile {
  loaded: LoadedDefinition;
  /** the file as the user named it, relative to the working folder */
  shown: string;
  /** maps a request field path (`tools[0].name`) to `file:line:column` */
  locate: (path: string) => string | undefined;
}

/** `tools[0].handler["x-y"]` → ['tools', 0, 'handler', 'x-y'] */
export function parseFieldPath(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  const pattern = /([^.[\]]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g;
  for (const match of path.matchAll(pattern)) {
    if (match[1] !== undefined) out.push(match[1]);
    else if (match[2] !== undefined) out.push(Number(match[2]));
    else if (match[3] !== undefined) out.push(JSON.parse(`"${match[3]}"`) as string);
  }
  return out;
}

/** Loads and checks a definition file; warnings go to stderr. Throws UserError (exit 2) with every problem. */
export async function loadDefinitionFile(ctx: CommandContext, file: string): Promise<DefinitionFile> {
  const { loadDefinition } = await import('../../definition/load.js');
  const loaded = await loadDefinition(file, { cwd: ctx.io.cwd });
  const rel = relative(ctx.io.cwd, loaded.file);
  const shown = rel === '' || isAbsolute(rel) ? loaded.file : rel;
  for (const warning of loaded.warnings) ctx.out.warn(formatProblem(warning));
  return {
    loaded,
    shown,
    locate: (path) => {
      const at = loaded.locate(parseFieldPath(path));
      return at === undefined ? undefined : `${shown}:${at.line}:${at.column}`;
    },
  };
}

/** Builds a loaded definition, with progress on stderr. */
export async function buildDefinition(
  ctx: CommandContext,
  client: ApiClient,
  file: DefinitionFile,
  options: { idempotencyKey?: string | undefined } = {},
): Promise<McpServer> {
  const { toBuildRequest } = await import('../../definition/build-request.js');
  const request = await toBuildRequest(file.loaded);
  const progress = await ctx.out.progress(`building ${request.name} from ${file.shown}`);
  try {
    const server = await client.build(request, options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey });
    progress.succeed(`built ${server.name} (${server.mcp_id}) in ${formatSeconds(server.build_time) ?? '?'}`);
    return server;
  } catch (error) {
    progress.fail();
    throw error;
  }
}

/** The fields of a built server. */
export function renderServerFields(p: Printer, server: McpServer): void {
  const counts =
    server.tools === undefined && server.resources === undefined && server.prompts === undefined
      ? undefined
      : [plural(server.tools ?? 0, 'tool'), plural(server.resources ?? 0, 'resource'), plural(server.prompts ?? 0, 'prompt')].join(', ');
  p.fields([
    ['mcp_id', server.mcp_id],
    ['name', server.name],
    ['status', server.status === 'ready' ? p.style.green(server.status) : p.style.red(server.status)],
    ['template', server.template],
    ['version', server.version],
    ['url', server.url],
    ['build time', formatSeconds(server.build_time)],
    ['contents', counts],
  ]);
}

export async function buildCommand(ctx: CommandContext, file: string, options: BuildCommandOptions = {}): Promise<void> {
  const definition = await loadDefinitionFile(ctx, file);
  const server = await withApi(
    ctx,
    (client) => buildDefinition(ctx, client, definition, { idempotencyKey: options.idempotencyKey }),
    { locate: definition.locate },
  );
  const firstCase = definition.loaded.definition.tests?.cases[0]?.message;
  // a deploy by id knows nothing of the file: the variables the server needs go as flags
  const { requiredEnvVars } = await import('../../definition/check.js');
  const envFlags = requiredEnvVars(definition.loaded.definition).map((v) => ` --env-var ${v.name}`).join('');
  ctx.out.result(
    server,
    (p) => {
      p.success(`Built ${server.name} (${server.mcp_id})`);
      renderServerFields(p, server);
      p.next(`mcpctl deploy ${server.mcp_id} --env development${envFlags}`);
      p.next(`mcpctl test ${server.mcp_id} -m ${shellQuote(firstCase ?? 'What can you do?')}`);
    },
    { quiet: () => server.mcp_id },
  );
}
