/**
 * A definition file as the commands use it: loaded and checked, named as the user wrote it, with
 * request field paths mapped back to `file:line:column`; and its build with progress.
 */
import type { ApiClient } from '../../api/client.js';
import type { McpServer } from '../../api/operations.js';
import type { LoadedDefinition } from '../../definition/load.js';
import type { CommandContext } from '../context.js';
import type { Problem } from '../../shared/errors.js';
import type { Printer } from '../output.js';
import { annotationText, formatProblem, formatSeconds, plural } from '../render/format.js';
import { displayPath } from '../../shared/paths.js';

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

/**
 * Loads and checks a definition file; warnings go to stderr (and, in GitHub Actions, to their
 * lines), unless `showWarnings` is false. Throws UserError (exit 2) with every problem.
 */
export async function loadDefinitionFile(
  ctx: CommandContext,
  file: string,
  options: { showWarnings?: boolean } = {},
): Promise<DefinitionFile> {
  const { loadDefinition } = await import('../../definition/load.js');
  const loaded = await loadDefinition(file, { cwd: ctx.io.cwd });
  const shown = displayPath(loaded.file, ctx.io.cwd);
  if (options.showWarnings !== false) {
    for (const warning of loaded.warnings) {
      ctx.out.warn(formatProblem(warning));
      annotateProblem(ctx, 'warning', warning);
    }
  }
  return {
    loaded,
    shown,
    locate: (path) => {
      const at = loaded.locate(parseFieldPath(path));
      return at === undefined ? undefined : `${shown}:${at.line}:${at.column}`;
    },
  };
}

/** A problem or warning of a definition as a GitHub Actions annotation on its line. */
export function annotateProblem(ctx: CommandContext, level: 'error' | 'warning', problem: Problem): void {
  ctx.out.annotate(level, annotationText(problem), problem.where);
}

/** Where a tool of the definition is written (`server.yaml:12:5`); undefined for a name it does not declare. */
export function locateTool(file: DefinitionFile, name: string): string | undefined {
  const index = (file.loaded.definition.tools ?? []).findIndex((tool) => tool.name === name);
  return index === -1 ? undefined : file.locate(`tools[${index}]`);
}

/** Builds a loaded definition, with progress on stderr. */
export async function buildDefinition(
  ctx: CommandContext,
  client: ApiClient,
  file: DefinitionFile,
  options: { idempotencyKey?: string | undefined } = {},
): Promise<McpServer> {
  const { toBuildRequest } = await import('../../api/build-request.js');
  const shown = file.loaded.warnings.length;
  const request = await toBuildRequest(file.loaded);
  // collecting the files may add warnings (files that look like credentials)
  for (const warning of file.loaded.warnings.slice(shown)) {
    ctx.out.warn(formatProblem(warning));
    annotateProblem(ctx, 'warning', warning);
  }
  const progress = await ctx.out.progress(`building ${request.name} from ${file.shown}`);
  try {
    const server = await client.build(
      request,
      options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey },
    );
    const took = formatSeconds(server.build_time) ?? '?';
    progress.succeed(
      server.reused === true
        ? `reused ${server.name} (${server.mcp_id}), built before from the same definition, in ${took}`
        : `built ${server.name} (${server.mcp_id}) in ${took}`,
    );
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
      : [
          plural(server.tools ?? 0, 'tool'),
          plural(server.resources ?? 0, 'resource'),
          plural(server.prompts ?? 0, 'prompt'),
        ].join(', ');
  p.fields([
    ['mcp_id', server.mcp_id],
    ['name', server.name],
    ['status', server.status === 'ready' ? p.style.green(server.status) : p.style.red(server.status)],
    ['template', server.template],
    ['version', server.version],
    ['url', server.url],
    [
      'build time',
      server.reused === true
        ? `${formatSeconds(server.build_time) ?? '?'} (reused: built before from the same definition)`
        : formatSeconds(server.build_time),
    ],
    ['contents', counts],
  ]);
}
