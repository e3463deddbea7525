/**
 * Build bundles: one content-addressed folder holding everything a runtime needs to start on its
 * own: the resolved definition, the files it references, and its TypeScript modules compiled to
 * JavaScript.
 *
 *   <bundlesRoot>/<sha256>/
 *     bundle.json       format, digest, name, the file list, what was compiled (written last)
 *     definition.json   the build request without `files`, defaults applied, `${VAR}` kept as written
 *     files/…           the files, by their path relative to the definition; `x.ts` also as `x.js`
 *
 * The digest covers the definition and the files, so the same build request always lands in the
 * same folder: writing is idempotent, and atomic (a temporary folder renamed into place).
 *
 * TypeScript is compiled with the `typescript` package's `transpileModule` (type stripping only,
 * no type checking, src/definition/modules.ts), loaded only when a bundle has TypeScript files. Node 20 has no built-in type
 * stripping; `typescript` is pure JavaScript, so it installs everywhere Node runs, with no native
 * binary, and it is the reference for the syntax it accepts.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { BuildRequest, BuildRequestInput } from '../../api/contract.js';
import { compiledModulePath, isTypeScriptSource } from '../../definition/module-path.js';
import type { RuntimeDefinition } from '../server/server.js';

export const BUNDLE_FORMAT = 1;
export const MANIFEST_FILE = 'bundle.json';
export const DEFINITION_FILE = 'definition.json';
export const FILES_DIR = 'files';
/** A bundle is written in a folder with this prefix, then renamed: one left behind is a crash's. */
export const BUNDLE_TEMP_PREFIX = '.tmp-';

export interface BundleManifest {
  format: number;
  digest: string;
  name: string;
  version?: string;
  template: string;
  created_at: string;
  /** paths of the files as sent, relative to files/ */
  files: string[];
  /** TypeScript source → the JavaScript compiled from it */
  compiled: Record<string, string>;
}

export interface Bundle {
  dir: string;
  digest: string;
  /** the folder the definition's relative paths start from */
  filesDir: string;
  manifest: BundleManifest;
  definition: RuntimeDefinition;
}

/** The request cannot become a bundle: unsafe paths, TypeScript that does not parse. */
export class BundleError extends Error {
  override readonly name = 'BundleError';
  constructor(
    message: string,
    readonly problems: string[] = [],
    options?: { cause?: unknown },
  ) {
    super(problems.length === 0 ? message : `${message}: ${problems.join('; ')}`, options);
  }
}

/**
 * Build requests already validated against the contract (at the engine's HTTP edge, or by
 * writeBundle itself): they are trusted, never parsed again.
 */
const validated = new WeakSet<object>();

/** Says that `request` is the output of validating a build request; returns it. */
export function markValidated<T extends BuildRequest>(request: T): T {
  validated.add(request);
  return request;
}

export function isValidated(request: unknown): request is BuildRequest {
  return typeof request === 'object' && request !== null && validated.has(request);
}

/** Writes (or finds) the bundle of a build request. A request not validated before is validated here. */
export async function writeBundle(
  request: BuildRequest | BuildRequestInput,
  bundlesRoot: string,
): Promise<{ dir: string; digest: string }> {
  let checked: BuildRequest;
  if (isValidated(request)) checked = request;
  else {
    const { BuildRequest: schema } = await import('../../api/contract.js');
    const parsed = schema.safeParse(request);
    if (!parsed.success) {
      throw new BundleError(
        'the build request is not valid',
        parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
      );
    }
    checked = parsed.data;
  }
  const { files = {}, ...definition } = checked;
  const paths = Object.keys(files).sort();
  const pathProblems = paths.flatMap((path) => {
    const problem = checkBundlePath(path);
    return problem === undefined ? [] : [`files["${path}"]: ${problem}`];
  });
  if (pathProblems.length > 0) throw new BundleError('the build request has unsafe file paths', pathProblems);

  const digest = digestOf(definition, files);
  const dir = join(bundlesRoot, digest);
  if (await isBundle(dir)) return { dir, digest };

  await mkdir(bundlesRoot, { recursive: true });
  const temp = await mkdtemp(join(bundlesRoot, `${BUNDLE_TEMP_PREFIX}${digest.slice(0, 12)}-`));
  try {
    const filesDir = join(temp, FILES_DIR);
    await mkdir(filesDir, { recursive: true });
    const contents = new Map<string, Buffer>();
    for (const path of paths) {
      const entry = files[path]!;
      const bytes =
        entry.encoding === 'base64' ? Buffer.from(entry.content, 'base64') : Buffer.from(entry.content, 'utf8');
      contents.set(path, bytes);
      const target = join(filesDir, ...path.split('/'));
      await mkdir(dirname(target), { recursive: true });
      // file modes do not travel in a build request: a script with a #! line is made executable
      await writeFile(target, bytes, { mode: bytes.subarray(0, 2).toString('latin1') === '#!' ? 0o755 : 0o644 });
    }
    const compiled = await compileTypeScript(contents, filesDir);
    await writeFile(join(temp, DEFINITION_FILE), `${JSON.stringify(definition, null, 2)}\n`);
    const manifest: BundleManifest = {
      format: BUNDLE_FORMAT,
      digest,
      name: definition.name,
      ...(definition.version === undefined ? {} : { version: definition.version }),
      template: definition.template,
      created_at: new Date().toISOString(),
      files: paths,
      compiled,
    };
    // the manifest is written last: a folder with one is complete
    await writeFile(join(temp, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    try {
      await rename(temp, dir);
    } catch (error) {
      // another writer finished the same bundle first: theirs is identical
      if (!(await isBundle(dir))) throw error;
      await rm(temp, { recursive: true, force: true });
    }
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
  return { dir, digest };
}

/**
 * Reads a bundle written by writeBundle. What is on disk was validated when it was written; it is
 * checked for integrity only: its format, and its digest against its definition and files.
 */
export async function readBundle(dir: string): Promise<Bundle> {
  let manifest: BundleManifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as BundleManifest;
  } catch (error) {
    throw new BundleError(`${dir} is not a bundle (no readable ${MANIFEST_FILE})`, [], { cause: error });
  }
  if (manifest.format !== BUNDLE_FORMAT) {
    throw new BundleError(
      `${dir} has bundle format ${String(manifest.format)}; this version of mcpctl reads format ${BUNDLE_FORMAT}`,
    );
  }
  const definitionFile = join(dir, DEFINITION_FILE);
  let definition: RuntimeDefinition;
  const files: NonNullable<BuildRequest['files']> = {};
  try {
    definition = JSON.parse(await readFile(definitionFile, 'utf8')) as RuntimeDefinition;
    for (const path of manifest.files) {
      files[path] = {
        encoding: 'base64',
        content: (await readFile(join(dir, FILES_DIR, ...path.split('/')))).toString('base64'),
      };
    }
  } catch (error) {
    throw new BundleError(
      `${dir} is not a whole bundle: ${error instanceof Error ? error.message : String(error)}`,
      [],
      { cause: error },
    );
  }
  if (typeof definition !== 'object' || definition === null || digestOf(definition, files) !== manifest.digest) {
    throw new BundleError(
      `${dir} has changed since it was written: its definition or files do not match its digest ${String(manifest.digest)}`,
    );
  }
  return { dir, digest: manifest.digest, filesDir: join(dir, FILES_DIR), manifest, definition };
}

/** The digest of a build request: the same request always gives the same digest. */
export function digestOf(definition: Omit<BuildRequest, 'files'>, files: NonNullable<BuildRequest['files']>): string {
  const hash = createHash('sha256');
  hash.update(`mcpctl-bundle/${BUNDLE_FORMAT}\n`);
  hash.update(canonicalJson(definition));
  for (const path of Object.keys(files).sort()) {
    const entry = files[path]!;
    const bytes =
      entry.encoding === 'base64' ? Buffer.from(entry.content, 'base64') : Buffer.from(entry.content, 'utf8');
    hash.update(`\nfile ${JSON.stringify(path)} ${bytes.length}\n`);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

/** JSON with object keys sorted, so equal values always serialize the same way. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Why a path cannot be a bundle file, or undefined when it can. */
export function checkBundlePath(path: string): string | undefined {
  if (path.length > 1024) return 'the path is too long';
  if (path.includes('\0')) return 'the path holds a NUL character';
  if (path.includes('\\')) return 'use / as the separator';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'the path must be relative to the definition';
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.')) return 'the path has an empty or "." segment';
  if (segments.includes('..')) return 'the path must not climb out with ..';
  return undefined;
}

async function isBundle(dir: string): Promise<boolean> {
  return stat(join(dir, MANIFEST_FILE)).then(
    (info) => info.isFile(),
    () => false,
  );
}

/** Compiles each TypeScript file next to itself (the compile `validate` checks too); returns source → output. */
async function compileTypeScript(contents: Map<string, Buffer>, filesDir: string): Promise<Record<string, string>> {
  const sources = [...contents.keys()].filter(isTypeScriptSource);
  if (sources.length === 0) return {};
  const { compiledNameClash, transpileSource } = await import('../../definition/modules.js');
  const compiled: Record<string, string> = {};
  const problems: string[] = [];
  const shipped = new Set(contents.keys());
  for (const source of sources) {
    const output = compiledModulePath(source);
    const clash = compiledNameClash(source, shipped);
    if (clash !== undefined) {
      problems.push(`${source}: ${clash}`);
      continue;
    }
    const result = await transpileSource(source, contents.get(source)!.toString('utf8'));
    for (const problem of result.problems) {
      problems.push(
        problem.line === undefined
          ? `${source}: ${problem.message}`
          : `${source}:${problem.line}:${problem.column}: ${problem.message}`,
      );
    }
    await writeFile(join(filesDir, ...output.split('/')), result.outputText);
    compiled[source] = output;
  }
  if (problems.length > 0) throw new BundleError('TypeScript could not be compiled', problems);
  return compiled;
}
