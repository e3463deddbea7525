/**
 * `mcpctl dev <file>`: the definition as a live MCP server on this machine, before any build or
 * deploy. It serves exactly what a build would ship (the definition is bundled into a temporary
 * folder first), logs each request, and reloads when the file or a file it references changes; a
 * broken edit keeps the last good server running. `--stdio` serves over stdin/stdout for clients
 * that start servers themselves; then nothing else is written to stdout. It listens on loopback
 * only, unless --allow-remote (steps/dev-host.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { authFields } from '../steps/dev-auth.js';
import {
  buildDev,
  createDevBuilder,
  DEV_TOKEN_SECONDS,
  DEV_USER,
  retireBuild,
  type DevBuild,
  type DevBuilder,
} from '../steps/dev-build.js';
import { chooseDefinition } from '../steps/definition-path.js';
import { clientConfigs, launcherOf, type ClientConfigs } from '../steps/dev-client-config.js';
import { checkDevHost } from '../steps/dev-host.js';
import { createDevLogger } from '../steps/dev-log.js';
import { portBookPath, rememberedPort, rememberPort } from '../steps/dev-port.js';
import { serveUntilStopped } from '../steps/dev-watch.js';
import { metadataUrlOf } from '../../runtime/server/auth.js';
import { RUNTIME_SERVER_OPTIONS } from '../../runtime/server/http-front.js';
import { UserError } from '../../shared/errors.js';
import type { CommandContext } from '../context.js';
import type { Printer } from '../output.js';
import { formatSeconds } from '../render/format.js';
import type { Runtime } from '../../runtime/server/server.js';
import { packageRoot } from '../../shared/package-root.js';
import { displayPath } from '../../shared/paths.js';
import { VERSION } from '../../shared/version.js';
import type { DevOptions } from '../specs/definitions.js';

/** A running dev server: the build it serves (replaced at each good reload) and what stops it. */
interface DevSession {
  ctx: CommandContext;
  builder: DevBuilder;
  current: DevBuild;
  /** after a failed reload, the last word on screen is an error: said when it no longer holds */
  failed: boolean;
  stops: Array<() => Promise<void> | void>;
}

export async function devCommand(ctx: CommandContext, given: string | undefined, options: DevOptions): Promise<void> {
  const file = await chooseDefinition(ctx, given);
  const stdio = options.stdio === true;
  const host = options.host ?? '127.0.0.1';
  const definitionFile = resolve(ctx.io.cwd, file);
  const shown = displayPath(definitionFile, ctx.io.cwd);
  // before anything is built or bound: the whole environment must not reach the network by accident
  const remote = stdio ? undefined : checkDevHost(host, options.allowRemote === true, shown);
  if (remote !== undefined) ctx.out.warn(remote);
  const bundlesRoot = await mkdtemp(join(tmpdir(), 'mcpctl-dev-'));
  const logger = createDevLogger(ctx, stdio);
  const session = await startSession(ctx, bundlesRoot, () =>
    createDevBuilder(ctx, { definitionFile, shown, bundlesRoot, stdio, host, userId: options.userId, logger }),
  );
  try {
    if (stdio) await serveOverStdio(session);
    else await serveOverHttp(session, options.port);
    await serveUntilStopped(ctx, { stdio, watchFiles: () => session.current.files, reload: () => reload(session) });
  } finally {
    for (const stop of session.stops.reverse()) await stop();
    await session.current.runtime.close();
    await rm(bundlesRoot, { recursive: true, force: true });
  }
}

/** The first build; when it fails, nothing is left behind. */
async function startSession(
  ctx: CommandContext,
  bundlesRoot: string,
  makeBuilder: () => Promise<DevBuilder>,
): Promise<DevSession> {
  try {
    const builder = await makeBuilder();
    const first = await buildDev(builder, undefined);
    if (first === 'unchanged') throw new Error('unreachable: a first build cannot be unchanged');
    return { ctx, builder, current: first, failed: false, stops: [] };
  } catch (error) {
    await rm(bundlesRoot, { recursive: true, force: true });
    throw error;
  }
}

/** --stdio: one client, the process that started this one; nothing else goes to stdout. */
async function serveOverStdio(session: DevSession): Promise<void> {
  const { ctx, builder } = session;
  const { serveStdio, StdioServerTransport } = await import('@modelcontextprotocol/server/stdio');
  const handle = serveStdio(() => session.current.runtime.createServer({ follow: () => session.current.runtime }), {
    transport: new StdioServerTransport(ctx.io.stdin, ctx.io.stdout),
    onerror: (error) => ctx.out.warn(`stdio: ${error.message}`),
  });
  session.stops.push(() => handle.close());
  const { runtime, auth } = session.current;
  // the client started this process: no token to check; the caller is --user-id or the request's own
  const unchecked = auth === undefined ? '' : `; ${auth.type} auth applies over HTTP only, not to stdio`;
  ctx.out.notice(
    `${runtime.name} ${runtime.version} is serving over stdio (${describeCounts(runtime)})${unchecked}; watching ${builder.shown}`,
  );
}

/**
 * Over HTTP on --host and --port, with what a client needs to connect. Without --port, the port this
 * file had last time (steps/dev-port.ts), unless something else holds it now.
 */
async function serveOverHttp(session: DevSession, port: number | undefined): Promise<void> {
  const { ctx, builder } = session;
  const { host } = builder;
  const server = createServer(RUNTIME_SERVER_OPTIONS, (req, res) => session.current.runtime.handler(req, res));
  const book = portBookPath(ctx.io.env, ctx.io.cwd);
  const remembered = port === undefined ? await rememberedPort(book, builder.definitionFile) : undefined;
  try {
    await listen(server, port ?? remembered ?? 0, host);
  } catch (error) {
    if (remembered === undefined || !(error instanceof UserError)) throw error;
    ctx.out.notice(`port ${remembered}, which ${builder.shown} had last time, is taken: listening on another one`);
    await listen(server, 0, host);
  }
  session.stops.push(
    () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  );
  const address = server.address() as AddressInfo;
  await rememberPort(book, builder.definitionFile, address.port);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  const devToken = await session.current.devAccess?.token(`${url}/mcp`);
  renderReady(ctx, session.current, {
    url,
    definitionFile: builder.definitionFile,
    shown: builder.shown,
    userId: builder.userId,
    devToken,
  });
}

/** Builds again after a change: a good build replaces the served one, a broken one leaves it serving. */
async function reload(session: DevSession): Promise<void> {
  const { ctx, builder } = session;
  let next: DevBuild | 'unchanged';
  try {
    next = await buildDev(builder, session.current);
  } catch (error) {
    const problems = error instanceof UserError ? error.problems : [];
    ctx.out.error(`reload failed; still serving the last good version of ${builder.shown}`, {
      problems:
        problems.length === 0 ? [{ message: error instanceof Error ? error.message : String(error) }] : problems,
    });
    session.failed = true;
    return;
  }
  const wasFailed = session.failed;
  session.failed = false;
  if (next === 'unchanged') {
    if (wasFailed) {
      const counts = describeCounts(session.current.runtime);
      ctx.out.notice(`✔ ${builder.shown} is valid again; it is the version being served (${counts})`);
    }
    return;
  }
  const previous = session.current;
  session.current = next;
  ctx.out.notice(`↻ reloaded ${builder.shown}: ${describeCounts(next.runtime)}`);
  void retireBuild(previous);
}

function listen(server: HttpServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        reject(
          new UserError(`port ${port} on ${host} is in use`, {
            hint: 'pass another --port, or --port 0 for any free one',
          }),
        );
      else if (error.code === 'EADDRNOTAVAIL')
        reject(new UserError(`${host} is not an address of this machine`, { hint: 'pass --host 127.0.0.1' }));
      else reject(error);
    });
    server.listen(port, host, () => resolveListen());
  });
}

/** Where a dev server listens and what it prints about it. */
interface ReadyWhere {
  url: string;
  definitionFile: string;
  shown: string;
  userId: string | undefined;
  devToken: string | undefined;
}

/** What the server offers, and the two ways a client can be configured to reach it. */
interface Ready {
  build: DevBuild;
  where: ReadyWhere;
  mcpUrl: string;
  metadataUrl: string | undefined;
  configs: ClientConfigs;
}

function renderReady(ctx: CommandContext, build: DevBuild, where: ReadyWhere): void {
  const name = build.runtime.name;
  const mcpUrl = `${where.url}/mcp`;
  const ready: Ready = {
    build,
    where,
    mcpUrl,
    metadataUrl: build.auth?.type === 'oauth' ? metadataUrlOf(mcpUrl) : undefined,
    configs: clientConfigs({
      name,
      definitionFile: where.definitionFile,
      mcpUrl,
      launcher: launcherOf(packageRoot(), process.execPath, VERSION),
      needsEnv: build.needsEnv,
      bearerFrom: build.auth?.type === 'bearer' ? build.auth.from : [],
      env: ctx.io.env,
    }),
  };
  ctx.out.result(readyData(ready), (p) => printReady(p, ready), { always: true });
}

function readyData({ build, where, mcpUrl, metadataUrl, configs }: Ready): Record<string, unknown> {
  const { runtime, auth } = build;
  return {
    name: runtime.name,
    version: runtime.version,
    url: where.url,
    mcp_url: mcpUrl,
    health_url: `${where.url}/health`,
    ...runtime.counts,
    client_config: { stdio: configs.launched, http: configs.byUrl },
    needs_env: build.needsEnv,
    auth: auth?.type ?? null,
    ...(metadataUrl === undefined ? {} : { resource_metadata: metadataUrl }),
    ...(where.devToken === undefined ? {} : { dev_token: where.devToken, dev_user: where.userId ?? DEV_USER }),
  };
}

function printReady(p: Printer, ready: Ready): void {
  const { build, where, mcpUrl } = ready;
  const { runtime, auth } = build;
  p.success(`${runtime.name} ${runtime.version} is serving ${describeCounts(runtime)}`);
  p.fields([
    ['MCP URL', p.style.bold(mcpUrl)],
    ['health', `${where.url}/health`],
    ...authFields(auth, ready.metadataUrl),
  ]);
  if (auth?.type === 'oauth' && auth.audience !== undefined && auth.audience.replace(/\/+$/, '') !== mcpUrl) {
    p.warn(`auth.audience is ${auth.audience}: tokens must carry it as their aud, not ${mcpUrl}`);
  }
  p.line();
  p.line('A client that starts servers itself (a desktop app) can run it with this configuration:');
  p.line(JSON.stringify(ready.configs.launched, null, 2));
  p.line('A client that connects by URL, to this running server:');
  p.line(JSON.stringify(ready.configs.byUrl, null, 2));
  p.line();
  printClientNeeds(p, build, where, ready.configs.placeholders);
  p.next(
    `watching ${where.shown} and ${build.files.length - 1} referenced ${build.files.length === 2 ? 'file' : 'files'}; requests are logged below; Ctrl-C stops`,
  );
}

/** The configurations carry no secrets: what a client has to fill in (variables, a token) and who it calls as. */
function printClientNeeds(p: Printer, build: DevBuild, where: ReadyWhere, placeholders: readonly string[]): void {
  const { auth } = build;
  const unfilled = build.needsEnv.filter((name) => placeholders.includes(name));
  if (unfilled.length > 0) {
    const list = unfilled.map((name) => `<${name}>`).join(', ');
    p.next(`a client that starts it must set ${unfilled.join(', ')} in its "env": replace ${list} with the values`);
  }
  if (auth?.type === 'bearer') {
    const which =
      auth.from.length === 1
        ? `the bearer token (${auth.from[0]})`
        : `one of the bearer tokens (${auth.from.join(', ')})`;
    p.next(`clients must send ${which}: replace <${auth.from[0]}> in the URL configuration's "headers" with it`);
  }
  if (auth?.type === 'oauth') {
    p.next(
      'clients must send an access token from the issuer: those that support MCP authorization (Claude, the MCP Inspector) ' +
        'discover the authorization server from the 401 the MCP URL answers without one, and sign in there',
    );
  }
  if (where.devToken !== undefined) {
    p.next(
      `to try it without an authorization server, send this development token of user ${where.userId ?? DEV_USER} (this server accepts it for ${formatSeconds(DEV_TOKEN_SECONDS) ?? ''}; no other does; --user-id names another user):`,
    );
    p.line(`  Authorization: Bearer ${where.devToken}`);
  }
  if (auth !== undefined && where.userId !== undefined && where.devToken === undefined) {
    const whose = auth.type === 'oauth' ? `the token's ${auth.userClaim}` : 'unset (a bearer token names no user)';
    p.next(`over HTTP, user.id is ${whose}; --user-id ${where.userId} applies to --stdio only`);
  }
}

function describeCounts(runtime: Runtime): string {
  const { tools, resources, prompts } = runtime.counts;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(tools, 'tool')}, ${plural(resources, 'resource')}, ${plural(prompts, 'prompt')}`;
}
