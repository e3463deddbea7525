/**
 * A definition file as an MCP server for one command (`mcpctl tools`, `mcpctl call`): built and
 * started in this process exactly as `mcpctl dev` serves it (steps/dev-build.ts), on a free loopback
 * port, and stopped when the command ends. In-process, because it starts faster than a child and
 * the command waits for it anyway; over HTTP, so the call goes through the same checks a client of
 * `mcpctl dev` meets. The credentials the server asks for are the caller's own: the development
 * token of an OAuth server, the bearer token from the variable the definition reads it from.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RUNTIME_SERVER_OPTIONS } from '../../runtime/server/http-front.js';
import type { LogEntry, RuntimeLogger } from '../../runtime/server/logger.js';
import { displayPath } from '../../shared/paths.js';
import type { CommandContext } from '../context.js';
import { buildDev, createDevBuilder, type DevBuild } from './dev-build.js';

/** A served definition: where to reach it, what to send, and what stops it. */
export interface ServedFile {
  mcpUrl: string;
  /** the file as messages show it */
  shown: string;
  headers: Record<string, string>;
  /** names of the variables a bearer token was expected in, when none of them is set */
  unsetTokenVars: string[];
  close(): Promise<void>;
}

/** The definition file a target names: the file itself, or a folder's server.yaml. */
export async function definitionFileOf(cwd: string, target: string): Promise<string | undefined> {
  const path = resolve(cwd, target);
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return undefined;
  return info.isDirectory() ? join(path, 'server.yaml') : path;
}

/** Builds and serves `definitionFile` on 127.0.0.1 until `close()`. */
export async function serveFile(
  ctx: CommandContext,
  definitionFile: string,
  options: { userId?: string | undefined } = {},
): Promise<ServedFile> {
  const shown = displayPath(definitionFile, ctx.io.cwd);
  const bundlesRoot = await mkdtemp(join(tmpdir(), 'mcpctl-call-'));
  let build: DevBuild | undefined;
  const stops: Array<() => Promise<void>> = [() => rm(bundlesRoot, { recursive: true, force: true })];
  const close = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  };
  try {
    const builder = await createDevBuilder(ctx, {
      definitionFile,
      shown,
      bundlesRoot,
      stdio: false,
      host: '127.0.0.1',
      userId: options.userId,
      logger: quietLogger(ctx),
    });
    const first = await buildDev(builder, undefined);
    if (first === 'unchanged') throw new Error('unreachable: a first build cannot be unchanged');
    build = first;
    const served = build;
    stops.push(() => served.runtime.close());
    const server = createServer(RUNTIME_SERVER_OPTIONS, (req, res) => served.runtime.handler(req, res));
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolveListen());
    });
    stops.push(
      () =>
        new Promise<void>((resolveClose) => {
          server.closeAllConnections();
          server.close(() => resolveClose());
        }),
    );
    const mcpUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const { headers, unsetTokenVars } = await credentialsFor(ctx, build, mcpUrl, options.userId);
    return { mcpUrl, shown, headers, unsetTokenVars, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** What the caller sends: who it is (per-user resources), and the token the server checks. */
async function credentialsFor(
  ctx: CommandContext,
  build: DevBuild,
  mcpUrl: string,
  userId: string | undefined,
): Promise<{ headers: Record<string, string>; unsetTokenVars: string[] }> {
  const headers: Record<string, string> = {};
  if (build.auth === undefined && userId !== undefined) headers['X-MCP-User-Id'] = userId;
  const devToken = await build.devAccess?.token(mcpUrl);
  if (devToken !== undefined) headers.Authorization = `Bearer ${devToken}`;
  if (build.auth?.type !== 'bearer') return { headers, unsetTokenVars: [] };
  const value = build.auth.from.map((name) => ctx.io.env[name]).find((v) => v !== undefined && v !== '');
  if (value !== undefined) headers.Authorization = `Bearer ${value}`;
  return { headers, unsetTokenVars: value === undefined ? build.auth.from : [] };
}

/** The server's own request log stays out of the command's output, but for --debug (on stderr). */
function quietLogger(ctx: CommandContext): RuntimeLogger {
  return {
    debug: ctx.globals.debug,
    log(entry: LogEntry) {
      if (!ctx.globals.debug) return;
      ctx.out.stderr(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
    },
  };
}
