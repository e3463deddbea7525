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
import { isAbsolute } from 'node:path';

/** A loaded definition, with how to name its file and its fields in messages. */
export interface DefinitionFile {
  loaded: LoadedDefinition;
  /** the file as the user named it, relative to the working folder */
  shown: string;
  /** the path exactly as the user typed it */
  given: string;
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
    given: file,
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
  const [{ toBuildRequest }, { itemPositions }] = await Promise.all([
    import('../../api/build-request.js'),
    import('../../definition/source-positions.js'),
  ]);
  const shown = file.loaded.warnings.length;
  const request = await toBuildRequest(file.loaded);
  const source = sourceFile(file);
  // where each item is written, for the pages that show the server; not part of the bundle
  if (source !== undefined) request.source = { file: source, ...itemPositions(file.loaded) };
  // collecting the files may add warnings (files that look like credentials)
  for (const warning of file.loaded.warnings.slice(shown)) {
    ctx.out.warn(formatProblem(warning));
    annotateProblem(ctx, 'warning', warning);
  }
  const progress = await ctx.out.progress(`building ${request.name} from ${file.shown}`);
  const send = (body: typeof request, key: string | undefined) =>
    client.build(body, key === undefined ? {} : { idempotencyKey: key });
  try {
    let server: McpServer;
    try {
      server = await send(request, options.idempotencyKey);
    } catch (error) {
      if (request.source === undefined || !refusesSource(error)) throw error;
      // A service from before `source` refuses the unknown field; the build does not need it. Another
      // key, as the refusal is the answer kept for the first one, and derived, so a re-run is idempotent too.
      const { source: _source, ...plain } = request;
      server = await send(plain, options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}.plain`);
    }
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

/**
 * The definition's path as a build names it: relative to the working folder when it is inside it,
 * else as typed. Never made absolute, which would put the user's home folder on a shared engine;
 * none when it is too long for the request.
 */
function sourceFile(file: DefinitionFile): string | undefined {
  const path = isAbsolute(file.shown) ? file.given : file.shown;
  return path.length > MAX_SOURCE_FILE ? undefined : path;
}

/** A `422 validation_failed` about `source` alone: what a service that does not know the field answers. */
function refusesSource(error: unknown): boolean {
  const { code, details } = (error ?? {}) as { code?: unknown; details?: unknown };
  if (code !== 'validation_failed' || !Array.isArray(details) || details.length === 0) return false;
  return details.every(
    (detail: { path?: unknown }) => typeof detail.path === 'string' && /^source\b/.test(detail.path),
  );
}

/** The longest `source.file` a build takes (src/api/build-schema.ts). */
const MAX_SOURCE_FILE = 1024;

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
    ['page', serverPage(server)],
    [
      'build time',
      server.reused === true
        ? `${formatSeconds(server.build_time) ?? '?'} (reused: built before from the same definition)`
        : formatSeconds(server.build_time),
    ],
    ['contents', counts],
  ]);
}

/**
 * Where a person sees a built server: its page on the engine's dashboard (which asks to log in
 * with `mcpctl dashboard` first), as `url`, its API resource, answers 401 to a browser.
 */
export function serverPage(server: McpServer): string {
  const match = /^(.*)\/v1\/servers\/([^/]+)$/.exec(server.url);
  return match === null ? server.url : `${match[1]!}/ui/#/servers/${match[2]!}`;
}
