/**
 * One build of `mcpctl dev`: the definition loaded, bundled into a temporary folder exactly as a build
 * would ship it, and started as a runtime. A rebuild whose bundle has the same digest is `unchanged`;
 * a new runtime adopts the old one's sessions. Every problem is a UserError that lists them all.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildRequestInput } from '../../api/contract.js';
import type { LoadedDefinition } from '../../definition/load.js';
import type { LocalAccess, LocalCredentials } from '../../engine/local-credentials.js';
import type { Bundle } from '../../runtime/host/bundle.js';
import type { RuntimeLogger } from '../../runtime/server/logger.js';
import type { Runtime } from '../../runtime/server/server.js';
import { UserError } from '../../shared/errors.js';
import type { CommandContext } from '../context.js';
import { formatProblem } from '../render/format.js';
import { describeAuth, type DevAuth } from './dev-auth.js';

/** One good build of the definition: the runtime serving it and the files it came from. */
export interface DevBuild {
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

/** The user of a development token when --user-id names none, and how long the token lives. */
export const DEV_USER = 'dev';
export const DEV_TOKEN_SECONDS = 12 * 3600;
/** Addresses a dev server counts as this machine only. */
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** Where and how the definition is built and served. */
export interface DevBuildOptions {
  definitionFile: string;
  /** the definition file as messages show it */
  shown: string;
  /** the temporary folder every bundle is written under */
  bundlesRoot: string;
  stdio: boolean;
  host: string;
  userId: string | undefined;
  logger: RuntimeLogger;
}

/** What builds the definition, again at each reload. */
export interface DevBuilder extends DevBuildOptions {
  ctx: CommandContext;
  modules: DevModules;
  /** the key of this dev server's own development tokens (OAuth on loopback), made once */
  devKey?: LocalCredentials;
}

type DevModules = Awaited<ReturnType<typeof loadDevModules>>;

/** What a build needs, loaded once (the first build waits for them all at once). */
async function loadDevModules() {
  const [load, buildRequest, bundle, server, interpolate] = await Promise.all([
    import('../../definition/load.js'),
    import('../../api/build-request.js'),
    import('../../runtime/host/bundle.js'),
    import('../../runtime/server/server.js'),
    import('../../definition/interpolate.js'),
  ]);
  return {
    loadDefinition: load.loadDefinition,
    toBuildRequest: buildRequest.toBuildRequest,
    readBundle: bundle.readBundle,
    writeBundle: bundle.writeBundle,
    BundleError: bundle.BundleError,
    createRuntime: server.createRuntime,
    RuntimeStartError: server.RuntimeStartError,
    interpolate,
  };
}

export async function createDevBuilder(ctx: CommandContext, options: DevBuildOptions): Promise<DevBuilder> {
  return { ...options, ctx, modules: await loadDevModules() };
}

/** Loads, bundles and starts the definition; `unchanged` when the bundle is the one served. */
export async function buildDev(builder: DevBuilder, previous: DevBuild | undefined): Promise<DevBuild | 'unchanged'> {
  const loaded = await builder.modules.loadDefinition(builder.definitionFile, { cwd: builder.ctx.io.cwd });
  const request = await toRequest(builder, loaded);
  const written = await writeBundleOf(builder, request);
  if (previous !== undefined && written.digest === previous.digest) return 'unchanged';
  const bundle = await builder.modules.readBundle(written.dir);
  const devAccess = await prepareDevAccess(builder, loaded);
  try {
    const runtime = await startRuntime(builder, bundle, devAccess, previous);
    return describeBuild(builder, { loaded, request, written, runtime, devAccess });
  } catch (error) {
    await rm(written.dir, { recursive: true, force: true });
    if (error instanceof builder.modules.RuntimeStartError) {
      throw new UserError(`${builder.shown} cannot be served`, {
        problems: error.problems.map((message) => ({ message })),
        hint: 'variables come from your environment: export them, or give defaults with ${NAME:-value}',
      });
    }
    throw error;
  }
}

async function toRequest(builder: DevBuilder, loaded: LoadedDefinition): Promise<BuildRequestInput> {
  try {
    return await builder.modules.toBuildRequest(loaded);
  } finally {
    // after the files are collected: shipped files that look like credentials are warnings too
    for (const warning of loaded.warnings) builder.ctx.out.warn(formatProblem(warning));
  }
}

async function writeBundleOf(
  builder: DevBuilder,
  request: BuildRequestInput,
): Promise<{ dir: string; digest: string }> {
  try {
    return await builder.modules.writeBundle(request, builder.bundlesRoot);
  } catch (error) {
    if (error instanceof builder.modules.BundleError)
      throw new UserError(`${builder.shown} cannot be bundled`, {
        problems: error.problems.map((message) => ({ message })),
        code: 'build_failed',
      });
    throw error;
  }
}

/**
 * OAuth on loopback: this server also trusts a key of its own, whose token it prints, so it can be
 * tried without an authorization server. No other server accepts that token.
 */
async function prepareDevAccess(builder: DevBuilder, loaded: LoadedDefinition): Promise<LocalAccess | undefined> {
  if (loaded.definition.auth?.type !== 'oauth' || builder.stdio || !LOOPBACK.has(builder.host)) return undefined;
  builder.devKey ??= (await import('../../engine/local-credentials.js')).createLocalCredentials(Date.now, {
    keyLifetimeMs: Number.POSITIVE_INFINITY,
    tokenLifetimeSeconds: DEV_TOKEN_SECONDS,
  });
  return builder.devKey.prepare(loaded.definition, {}, builder.userId ?? DEV_USER);
}

function startRuntime(
  builder: DevBuilder,
  bundle: Bundle,
  devAccess: LocalAccess | undefined,
  previous: DevBuild | undefined,
): Promise<Runtime> {
  const { ctx, host, userId } = builder;
  return builder.modules.createRuntime(bundle.definition, {
    dir: bundle.filesDir,
    env: devAccess === undefined ? ctx.io.env : { ...ctx.io.env, ...devAccess.env },
    logger: builder.logger,
    // a reload replaces the runtime: open sessions (and the stdio connection) move to the new one and hear list_changed
    listChanged: true,
    // the developer's own machine: the APIs being developed against are often on loopback or the LAN
    allowPrivateEgress: true,
    ...(previous === undefined ? {} : { adopt: previous.runtime }),
    ...(userId === undefined ? {} : { defaultUserId: userId }),
    // loopback: only local Host names; on another address the check would refuse the LAN's names
    ...(LOOPBACK.has(host) ? {} : { allowedHosts: false as const }),
  });
}

function describeBuild(
  builder: DevBuilder,
  parts: {
    loaded: LoadedDefinition;
    request: BuildRequestInput;
    written: { dir: string; digest: string };
    runtime: Runtime;
    devAccess: LocalAccess | undefined;
  },
): DevBuild {
  const { loaded, request, written, runtime, devAccess } = parts;
  const { interpolate } = builder.modules;
  const files = [
    builder.definitionFile,
    ...Object.keys(request.files ?? {}).map((path) => join(loaded.dir, ...path.split('/'))),
  ];
  const { deploy: _deploy, tests: _tests, ...served } = loaded.definition;
  const auth = describeAuth(loaded.definition.auth, loaded.definition.tools ?? [], interpolate, builder.ctx.io.env);
  return {
    runtime,
    digest: written.digest,
    bundleDir: written.dir,
    files,
    needsEnv: interpolate.listEnvRefs(served, { withoutDefault: true }),
    ...(auth === undefined ? {} : { auth }),
    ...(devAccess === undefined ? {} : { devAccess }),
  };
}

/** Lets a replaced runtime finish its requests, then removes its bundle. */
export async function retireBuild(build: DevBuild): Promise<void> {
  await build.runtime.drain(10_000);
  await build.runtime.close();
  await rm(build.bundleDir, { recursive: true, force: true });
}
