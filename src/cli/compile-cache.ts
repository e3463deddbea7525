/**
 * V8's compiled code of the CLI's bundle, kept on disk between runs, for Node versions without
 * `module.enableCompileCache` (Node 20): the bundle is CommonJS (rolldown.config.js), and its files
 * are compiled through `vm.Script` with the code cache of the last run, as v8-compile-cache does.
 * A file with no usable cache (none, stale, rejected by V8) gets one written at exit, made after the
 * command ran so that the functions it called are in it. Only the bundle's own files are touched; a
 * cache that cannot be read or written is ignored, and nothing is written when nothing changed.
 *
 * Where: `MCPCTL_COMPILE_CACHE` (a folder; `0` turns it off), else the user's cache folder
 * (`$XDG_CACHE_HOME/mcpctl`, `~/.cache/mcpctl`, `~/Library/Caches/mcpctl`, `%LOCALAPPDATA%\mcpctl\Cache`).
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off too. Where Node has its own compile cache (22.1 and
 * later), that one is used, in the same folder. `MCPCTL_DEBUG_COMPILE_CACHE=1` prints what happens
 * to stderr.
 */
import * as nodeModule from 'node:module';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script, constants as vmConstants } from 'node:vm';
import { SETTINGS, settingValue } from '../shared/settings.js';

type Env = Record<string, string | undefined>;

/** The cache's folder for this user, or undefined when it is turned off. */
export function compileCacheDir(
  env: Env = process.env,
  platform: NodeJS.Platform = process.platform,
  home: () => string = homedir,
): string | undefined {
  const setting = settingValue(SETTINGS.compileCache, { env });
  if (setting === '0' || setting === 'false' || setting === 'off' || env.NODE_DISABLE_COMPILE_CACHE === '1')
    return undefined;
  if (setting !== undefined) return setting;
  if (platform === 'win32') return env.LOCALAPPDATA ? join(env.LOCALAPPDATA, 'mcpctl', 'Cache') : undefined;
  if (env.XDG_CACHE_HOME && platform !== 'darwin') return join(env.XDG_CACHE_HOME, 'mcpctl');
  let dir: string;
  try {
    dir = home();
  } catch {
    // no HOME and no user entry to take one from: no cache, the command runs as it would without
    return undefined;
  }
  return platform === 'darwin' ? join(dir, 'Library', 'Caches', 'mcpctl') : join(dir, '.cache', 'mcpctl');
}

/** FNV-1a, 32 bits, as 8 hex digits: a short stable name for a path, no crypto to load. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}

interface Pending {
  script: Script;
  file: string;
  header: string;
}

interface ModuleWithCompile {
  prototype: { _compile: (this: CjsModule, content: string, filename: string) => unknown };
  wrap(content: string): string;
  _resolveFilename(request: string, parent: CjsModule, isMain: boolean, options?: unknown): string;
  _cache: unknown;
  _extensions: unknown;
}
interface CjsModule {
  exports: unknown;
  require(id: string): unknown;
}

/**
 * Starts the cache for the `.cjs` files of the folder this module was bundled into (dist/bundle).
 * Does nothing when run unbundled (tsc's ES modules), or when the cache is turned off.
 */
export function startCompileCache(env: Env = process.env): void {
  const setting = compileCacheDir(env);
  const debug = settingValue(SETTINGS.debugCompileCache, { env })
    ? (line: string) => process.stderr.write(`compile cache: ${line}\n`)
    : undefined;
  const enableCompileCache = (nodeModule as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache;
  if (enableCompileCache !== undefined) {
    // Node's own: NODE_COMPILE_CACHE, when set, is the user's choice of folder
    try {
      if (setting !== undefined) enableCompileCache(env.NODE_COMPILE_CACHE ? undefined : join(setting, 'node'));
    } catch {
      // a folder it cannot use: compiled as without a cache
    }
    return;
  }
  const bundleDir = dirname(fileURLToPath(import.meta.url));
  if (setting === undefined || !import.meta.url.endsWith('.cjs')) return;
  // V8 refuses a cache made by another V8 or with other flags; the folder's name keeps them apart
  const dir = join(
    setting,
    `v8-${process.version}-${process.arch}-${shortHash(process.execArgv.join(' ') + (env.NODE_OPTIONS ?? ''))}`,
  );
  const prefix = `${shortHash(bundleDir)}-`;
  const pending: Pending[] = [];

  const Module = nodeModule.Module as unknown as ModuleWithCompile;
  const original = Module.prototype._compile;
  Module.prototype._compile = function compile(this: CjsModule, content: string, filename: string): unknown {
    if (dirname(filename) !== bundleDir || !filename.endsWith('.cjs') || content.startsWith('#!'))
      return original.call(this, content, filename);
    const file = join(dir, `${prefix}${basename(filename, '.cjs')}.cache`);
    const header = cacheHeader(filename);
    const cachedData = header === undefined ? undefined : readCache(file, header);
    const script = new Script(Module.wrap(content), {
      filename,
      cachedData,
      importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    if (cachedData === undefined || script.cachedDataRejected === true) {
      debug?.(`${cachedData === undefined ? 'miss' : 'rejected'} ${basename(filename)}`);
      if (header !== undefined) pending.push({ script, file, header });
    } else debug?.(`hit ${basename(filename)}`);
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireFor(this, Module), this, filename, dirname(filename));
  };

  process.once('exit', () => {
    if (pending.length === 0) return;
    const start = performance.now();
    try {
      mkdirSync(dir, { recursive: true });
      for (const { script, file, header } of pending)
        writeAtomically(file, Buffer.concat([Buffer.from(`${header}\n`), script.createCachedData()]));
      pruneStale(dir, prefix, bundleDir);
      debug?.(
        `wrote ${pending.map(({ file }) => basename(file)).join(', ')} in ${Math.round(performance.now() - start)} ms`,
      );
    } catch (error) {
      // a read-only home, a full disk: the command has done its work, the next run compiles again
      debug?.(`not written: ${(error as Error).message}`);
    }
  });
}

/** What a cache must have been made from: the file's path, size and modification time. */
function cacheHeader(filename: string): string | undefined {
  try {
    const { size, mtimeMs } = statSync(filename);
    return JSON.stringify({ filename, size, mtimeMs });
  } catch {
    return undefined;
  }
}

/** The cached data after the header line, when the header matches; anything else is no cache. */
function readCache(file: string, header: string): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const end = bytes.indexOf(10);
  if (end <= 0 || end === bytes.length - 1 || bytes.toString('utf8', 0, end) !== header) return undefined;
  return bytes.subarray(end + 1);
}

function writeAtomically(file: string, bytes: Buffer): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, bytes);
    renameSync(temp, file);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // never written
    }
    throw error;
  }
}

/** Caches of this bundle's files that are gone (an upgrade renames the chunks) are removed. */
function pruneStale(dir: string, prefix: string, bundleDir: string): void {
  const present = new Set(readdirSync(bundleDir));
  for (const name of readdirSync(dir)) {
    if (
      name.startsWith(prefix) &&
      name.endsWith('.cache') &&
      !present.has(`${name.slice(prefix.length, -'.cache'.length)}.cjs`)
    )
      unlinkSync(join(dir, name));
  }
}

/** The `require` a CommonJS module is given, as Node makes it. */
function requireFor(module: CjsModule, Module: ModuleWithCompile): NodeJS.Require {
  const require = ((id: string) => module.require(id)) as NodeJS.Require;
  require.resolve = ((request: string, options?: unknown) =>
    Module._resolveFilename(request, module, false, options)) as NodeJS.RequireResolve;
  require.main = process.mainModule;
  require.cache = Module._cache as NodeJS.Require['cache'];
  require.extensions = Module._extensions as NodeJS.Require['extensions'];
  return require;
}
