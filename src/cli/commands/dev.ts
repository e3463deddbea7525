/**
 * `mcpctl dev <file>`: the definition as a live MCP server on this machine, before any build or
 * deploy. It serves exactly what a build would ship (the definition is bundled into a temporary
 * folder first), logs each request, and reloads when the file or a file it references changes; a
 * broken edit keeps the last good server running. `--stdio` serves over stdin/stdout for clients
 * that start servers themselves; then nothing else is written to stdout. It listens on loopback
 * only, unless --allow-remote (steps/dev-host.ts).
 */
import { watch, type FSWatcher } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { formatProblem } from '../render/format.js';
import { authFields, describeAuth, type DevAuth } from '../steps/dev-auth.js';
import { checkDevHost } from '../steps/dev-host.js';
import { createDevLogger } from '../steps/dev-log.js';
import { metadataUrlOf } from '../../runtime/server/auth.js';
import { RUNTIME_SERVER_OPTIONS } from '../../runtime/server/http-front.js';
import { UserError } from '../../shared/errors.js';
import type { CommandContext } from '../context.js';
import type { LocalAccess, LocalCredentials } from '../../engine/local-credentials.js';
import type { Runtime } from '../../runtime/server/server.js';
import { displayPath } from '../../shared/paths.js';

export interface DevCommandOptions {
  port?: number;
  host?: string;
  stdio?: boolean;
  userId?: string;
  /** listen on an address other machines reach */
  allowRemote?: boolean;
}

/** One good build of the definition: the runtime serving it and the files it came from. */
interface Build {
  runtime: Runtime;
  digest: string;
  bundleDir: string;
  /** absolute paths of the definition file and every file it references */
  files: string[];
  /** variables the served definition needs (no default): whoever starts it must set them */
  needsEnv: string[];
  /** what clients must send; absent when anyone may call (no auth, or `type: none`) */
  auth?: DevAuth;
  /** OAuth on loopback: the development token this server accepts besides the issuer's */
  devAccess?: LocalAccess;
}

const DEBOUNCE_MS = 150;
/** the user of a development token when --user-id names none, and how long the token lives */
const DEV_USER = 'dev';
const DEV_TOKEN_SECONDS = 12 * 3600;
const MAX_WATCHED_FOLDERS = 256;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export async function devCommand(ctx: CommandContext, file: string, options: DevCommandOptions = {}): Promise<void> {
  const stdio = options.stdio === true;
  const host = options.host ?? '127.0.0.1';
  const definitionFile = resolve(ctx.io.cwd, file);
  const shown = displayPath(definitionFile, ctx.io.cwd);
  // before anything is built or bound: the whole environment must not reach the network by accident
  const remote = stdio ? undefined : checkDevHost(host, options.allowRemote === true, shown);
  if (remote !== undefined) ctx.out.warn(remote);
  const bundlesRoot = await mkdtemp(join(tmpdir(), 'mcpctl-dev-'));
  const logger = createDevLogger(ctx, stdio);
  /** the key of this dev server's own development tokens (OAuth on loopback), made once */
  let devKey: LocalCredentials | undefined;

  const [
    { loadDefinition },
    { toBuildRequest },
    { readBundle, writeBundle, BundleError },
    { createRuntime, RuntimeStartError },
    interpolate,
  ] = await Promise.all([
    import('../../definition/load.js'),
    import('../../api/build-request.js'),
    import('../../runtime/host/bundle.js'),
    import('../../runtime/server/server.js'),
    import('../../definition/interpolate.js'),
  ]);

  /** Loads, bundles and starts the definition; throws UserError with every problem. */
  const build = async (previous: Build | undefined): Promise<Build | 'unchanged'> => {
    const loaded = await loadDefinition(definitionFile, { cwd: ctx.io.cwd });
    let request: Awaited<ReturnType<typeof toBuildRequest>>;
    try {
      request = await toBuildRequest(loaded);
    } finally {
      // after the files are collected: shipped files that look like credentials are warnings too
      for (const warning of loaded.warnings) ctx.out.warn(formatProblem(warning));
    }
    let written: { dir: string; digest: string };
    try {
      written = await writeBundle(request, bundlesRoot);
    } catch (error) {
      if (error instanceof BundleError)
        throw new UserError(`${shown} cannot be bundled`, {
          problems: error.problems.map((message) => ({ message })),
          code: 'build_failed',
        });
      throw error;
    }
    if (previous !== undefined && written.digest === previous.digest) return 'unchanged';
    const bundle = await readBundle(written.dir);
    // OAuth on loopback: this server also trusts a key of its own, whose token it prints, so it can
    // be tried without an authorization server. No other server accepts that token.
    let devAccess: LocalAccess | undefined;
    if (loaded.definition.auth?.type === 'oauth' && !stdio && LOOPBACK.has(host)) {
      devKey ??= (await import('../../engine/local-credentials.js')).createLocalCredentials(Date.now, {
        keyLifetimeMs: Number.POSITIVE_INFINITY,
        tokenLifetimeSeconds: DEV_TOKEN_SECONDS,
      });
      devAccess = await devKey.prepare(loaded.definition, {}, options.userId ?? DEV_USER);
    }
    try {
      const runtime = await createRuntime(bundle.definition, {
        dir: bundle.filesDir,
        env: devAccess === undefined ? ctx.io.env : { ...ctx.io.env, ...devAccess.env },
        logger,
        // a reload replaces the runtime: open sessions (and the stdio connection) move to the new one and hear list_changed
        listChanged: true,
        // the developer's own machine: the APIs being developed against are often on loopback or the LAN
        allowPrivateEgress: true,
        ...(previous === undefined ? {} : { adopt: previous.runtime }),
        ...(options.userId === undefined ? {} : { defaultUserId: options.userId }),
        // loopback: only local Host names; on another address the check would refuse the LAN's names
        ...(LOOPBACK.has(host) ? {} : { allowedHosts: false as const }),
      });
      const files = [
        definitionFile,
        ...Object.keys(request.files ?? {}).map((path) => join(loaded.dir, ...path.split('/'))),
      ];
      const { deploy: _deploy, tests: _tests, ...served } = loaded.definition;
      const auth = describeAuth(loaded.definition.auth, loaded.definition.tools ?? [], interpolate, ctx.io.env);
      return {
        runtime,
        digest: written.digest,
        bundleDir: written.dir,
        files,
        needsEnv: interpolate.listEnvRefs(served, { withoutDefault: true }),
        ...(auth === undefined ? {} : { auth }),
        ...(devAccess === undefined ? {} : { devAccess }),
      };
    } catch (error) {
      await rm(written.dir, { recursive: true, force: true });
      if (error instanceof RuntimeStartError) {
        throw new UserError(`${shown} cannot be served`, {
          problems: error.problems.map((message) => ({ message })),
          hint: 'variables come from your environment: export them, or give defaults with ${NAME:-value}',
        });
      }
      throw error;
    }
  };

  let current: Build;
  try {
    const first = await build(undefined);
    if (first === 'unchanged') throw new Error('unreachable: a first build cannot be unchanged');
    current = first;
  } catch (error) {
    await rm(bundlesRoot, { recursive: true, force: true });
    throw error;
  }

  const stops: Array<() => Promise<void> | void> = [];
  try {
    if (stdio) {
      const [{ serveStdio, StdioServerTransport }] = await Promise.all([import('@modelcontextprotocol/server/stdio')]);
      const handle = serveStdio(() => current.runtime.createServer({ follow: () => current.runtime }), {
        transport: new StdioServerTransport(ctx.io.stdin, ctx.io.stdout),
        onerror: (error) => ctx.out.warn(`stdio: ${error.message}`),
      });
      stops.push(() => handle.close());
      // the client started this process: no token to check; the caller is --user-id or the request's own
      const unchecked =
        current.auth === undefined ? '' : `; ${current.auth.type} auth applies over HTTP only, not to stdio`;
      ctx.out.notice(
        `${current.runtime.name} ${current.runtime.version} is serving over stdio (${describeCounts(current.runtime)})${unchecked}; watching ${shown}`,
      );
    } else {
      const server = createServer(RUNTIME_SERVER_OPTIONS, (req, res) => current.runtime.handler(req, res));
      await listen(server, options.port ?? 0, host);
      stops.push(
        () =>
          new Promise<void>((resolveClose) => {
            server.closeAllConnections();
            server.close(() => resolveClose());
          }),
      );
      const { port } = server.address() as AddressInfo;
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
      const devToken = await current.devAccess?.token(`${url}/mcp`);
      renderReady(ctx, current, { url, definitionFile, shown, userId: options.userId, devToken });
    }

    // after a failed reload, the last word on screen is an error: say when it no longer holds
    let failed = false;
    await serveUntilStopped(ctx, {
      stdio,
      watchFiles: () => current.files,
      reload: async () => {
        let next: Build | 'unchanged';
        try {
          next = await build(current);
        } catch (error) {
          const problems = error instanceof UserError ? error.problems : [];
          ctx.out.error(`reload failed; still serving the last good version of ${shown}`, {
            problems:
              problems.length === 0 ? [{ message: error instanceof Error ? error.message : String(error) }] : problems,
          });
          failed = true;
          return;
        }
        const wasFailed = failed;
        failed = false;
        if (next === 'unchanged') {
          if (wasFailed)
            ctx.out.notice(
              `✔ ${shown} is valid again; it is the version being served (${describeCounts(current.runtime)})`,
            );
          return;
        }
        const previous = current;
        current = next;
        ctx.out.notice(`↻ reloaded ${shown}: ${describeCounts(next.runtime)}`);
        void retire(previous);
      },
    });
  } finally {
    for (const stop of stops.reverse()) await stop();
    await current.runtime.close();
    await rm(bundlesRoot, { recursive: true, force: true });
  }
}

/** Lets a replaced runtime finish its requests, then removes its bundle. */
async function retire(build: Build): Promise<void> {
  await build.runtime.drain(10_000);
  await build.runtime.close();
  await rm(build.bundleDir, { recursive: true, force: true });
}

/** Watches the files until Ctrl-C (or, with --stdio, until the client closes stdin). */
async function serveUntilStopped(
  ctx: CommandContext,
  options: { stdio: boolean; watchFiles: () => string[]; reload: () => Promise<void> },
): Promise<void> {
  let watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  const rewatch = (): void => {
    for (const watcher of watchers) watcher.close();
    const folders = [...new Set(options.watchFiles().map((path) => dirname(path)))].slice(0, MAX_WATCHED_FOLDERS);
    watchers = folders.flatMap((folder) => {
      try {
        const watcher = watch(folder, { persistent: false }, () => schedule());
        watcher.on('error', () => watcher.close());
        return [watcher];
      } catch {
        return [];
      }
    });
  };
  const run = (): void => {
    if (running !== undefined) {
      again = true;
      return;
    }
    running = options
      .reload()
      .catch((error: unknown) => ctx.out.warn(`reload: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        running = undefined;
        rewatch();
        if (again) {
          again = false;
          run();
        }
      });
  };
  // editors write a file in several steps: reload once they are done
  const schedule = (): void => {
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  };

  rewatch();
  try {
    await new Promise<void>((resolveStop) => {
      if (ctx.signal.aborted) return resolveStop();
      ctx.signal.addEventListener('abort', () => resolveStop(), { once: true });
      if (options.stdio) {
        ctx.io.stdin.once('end', () => resolveStop());
        ctx.io.stdin.once('close', () => resolveStop());
      }
    });
  } finally {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
    await running;
  }
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

function renderReady(
  ctx: CommandContext,
  build: Build,
  where: {
    url: string;
    definitionFile: string;
    shown: string;
    userId: string | undefined;
    devToken: string | undefined;
  },
): void {
  const { runtime, auth } = build;
  const mcpUrl = `${where.url}/mcp`;
  const metadataUrl = auth?.type === 'oauth' ? metadataUrlOf(mcpUrl) : undefined;
  const launched = {
    mcpServers: { [runtime.name]: { command: 'npx', args: ['mcpctl', 'dev', '--stdio', where.definitionFile] } },
  };
  const byUrl = { mcpServers: { [runtime.name]: { type: 'http', url: mcpUrl } } };
  ctx.out.result(
    {
      name: runtime.name,
      version: runtime.version,
      url: where.url,
      mcp_url: mcpUrl,
      health_url: `${where.url}/health`,
      ...runtime.counts,
      client_config: { stdio: launched, http: byUrl },
      needs_env: build.needsEnv,
      auth: auth?.type ?? null,
      ...(metadataUrl === undefined ? {} : { resource_metadata: metadataUrl }),
      ...(where.devToken === undefined ? {} : { dev_token: where.devToken, dev_user: where.userId ?? DEV_USER }),
    },
    (p) => {
      p.success(`${runtime.name} ${runtime.version} is serving ${describeCounts(runtime)}`);
      p.fields([
        ['MCP URL', p.style.bold(mcpUrl)],
        ['health', `${where.url}/health`],
        ...authFields(auth, metadataUrl),
      ]);
      if (auth?.type === 'oauth' && auth.audience !== undefined && auth.audience.replace(/\/+$/, '') !== mcpUrl) {
        p.warn(`auth.audience is ${auth.audience}: tokens must carry it as their aud, not ${mcpUrl}`);
      }
      p.line();
      p.line('A client that starts servers itself (a desktop app) can run it with this configuration:');
      p.line(JSON.stringify(launched, null, 2));
      p.line('A client that connects by URL, to this running server:');
      p.line(JSON.stringify(byUrl, null, 2));
      p.line();
      // the configurations above carry no secrets: say what a client has to add
      if (build.needsEnv.length > 0)
        p.next(`a client that starts it must set ${build.needsEnv.join(', ')} in its "env"`);
      if (auth?.type === 'bearer') {
        const which =
          auth.from.length === 1
            ? `the bearer token (${auth.from[0]})`
            : `one of the bearer tokens (${auth.from.join(', ')})`;
        p.next(
          `clients must send ${which}: add "headers": { "Authorization": "Bearer <token>" } to the URL configuration`,
        );
      }
      if (auth?.type === 'oauth') {
        p.next(
          'clients must send an access token from the issuer: those that support MCP authorization (Claude, the MCP Inspector) ' +
            'discover the authorization server from the 401 the MCP URL answers without one, and sign in there',
        );
      }
      if (where.devToken !== undefined) {
        p.next(
          `to try it without an authorization server, send this development token of user ${where.userId ?? DEV_USER} (this server accepts it for ${DEV_TOKEN_SECONDS / 3600} h; no other does; --user-id names another user):`,
        );
        p.line(`  Authorization: Bearer ${where.devToken}`);
      }
      if (auth !== undefined && where.userId !== undefined && where.devToken === undefined) {
        const whose = auth.type === 'oauth' ? `the token's ${auth.userClaim}` : 'unset (a bearer token names no user)';
        p.next(`over HTTP, user.id is ${whose}; --user-id ${where.userId} applies to --stdio only`);
      }
      p.next(
        `watching ${where.shown} and ${build.files.length - 1} referenced ${build.files.length === 2 ? 'file' : 'files'}; requests are logged below; Ctrl-C stops`,
      );
    },
    { always: true },
  );
}

function describeCounts(runtime: Runtime): string {
  const { tools, resources, prompts } = runtime.counts;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(tools, 'tool')}, ${plural(resources, 'resource')}, ${plural(prompts, 'prompt')}`;
}
