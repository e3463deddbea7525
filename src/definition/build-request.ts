/**
 * Turns a loaded definition into the body of `POST /v1/build`: the spec's fields and the runtime
 * extensions (not `deploy`, `tests`, `$schema` or `include`), plus `files`: every file the
 * definition refers to, keyed by POSIX path relative to the definition.
 */
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import type { BuildRequestInput } from '../api/contract.js';
import { UserError } from '../cli/errors.js';
import { listPathRefs } from './check.js';
import type { LoadedDefinition } from './load.js';

/** The most a build may carry in files, in bytes. */
export const MAX_BUILD_FILES_BYTES = 10 * 1024 * 1024;

/** Folders never shipped when a folder is included. */
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules']);

type FileEntry = NonNullable<BuildRequestInput['files']>[string];

export async function toBuildRequest(loaded: LoadedDefinition): Promise<BuildRequestInput> {
  const d = loaded.definition;
  const request: BuildRequestInput = { name: d.name, template: d.template };
  if (d.version !== undefined) request.version = d.version;
  if (d.description !== undefined) request.description = d.description;
  if (d.instructions !== undefined) request.instructions = d.instructions;
  if (d.auth !== undefined) request.auth = d.auth;
  if (d.tools !== undefined) request.tools = d.tools;
  if (d.resources !== undefined) request.resources = d.resources;
  if (d.prompts !== undefined) request.prompts = d.prompts;
  const files = await collectFiles(loaded);
  if (Object.keys(files).length > 0) request.files = files;
  return request;
}

/** Every file the definition refers to, read and encoded. */
export async function collectFiles(loaded: LoadedDefinition): Promise<Record<string, FileEntry>> {
  const root = await realpath(loaded.dir);
  const paths = new Set<string>();
  const refs = listPathRefs(loaded.definition);
  for (const ref of refs) {
    const kind = ref.path[0] === 'include' ? 'include' : ref.path.at(-1) === 'cwd' ? 'cwd' : 'file';
    if (kind === 'cwd') continue;
    if (ref.value.includes('{{')) {
      // A templated file source: ship the folder before the first template, if it has one.
      const folder = posix.dirname(ref.value.slice(0, ref.value.indexOf('{{')) + 'x');
      if (folder !== '.') await addFolder(root, posix.normalize(folder), paths);
      continue;
    }
    const path = posix.normalize(ref.value);
    if (kind === 'include') {
      const info = await statInside(root, path);
      if (info.isDirectory()) await addFolder(root, path, paths);
      else paths.add(path);
    } else {
      paths.add(path);
      if (/\.(m?[jt]s|c[jt]s)$/.test(path) && ref.path.at(-1) === 'module') await addImports(root, path, paths);
    }
  }

  const files: Record<string, FileEntry> = {};
  let total = 0;
  const sizes: Array<[string, number]> = [];
  for (const path of [...paths].sort()) {
    const info = await statInside(root, path);
    if (!info.isFile()) throw new UserError(`${path} is not a file`, { code: 'invalid_definition' });
    total += info.size;
    sizes.push([path, info.size]);
    if (total > MAX_BUILD_FILES_BYTES) {
      const largest = sizes.sort((a, b) => b[1] - a[1]).slice(0, 3);
      throw new UserError(`the files of this definition exceed ${formatMiB(MAX_BUILD_FILES_BYTES)} (the build limit)`, {
        code: 'definition_too_large',
        problems: largest.map(([file, size]) => ({ where: file, message: formatMiB(size) })),
        hint: 'ship less: narrow include to the files the server needs, or serve large data from a url source',
      });
    }
    files[path] = encode(await readFile(join(root, path)));
  }
  return files;
}

function formatMiB(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text as utf8, anything else (or text with NUL bytes) as base64. */
export function encode(buffer: Buffer): FileEntry {
  if (!buffer.includes(0)) {
    try {
      return { encoding: 'utf8', content: utf8.decode(buffer) };
    } catch {
      // not UTF-8: binary
    }
  }
  return { encoding: 'base64', content: buffer.toString('base64') };
}

/** Stats a path and makes sure it (after symlinks) stays inside the definition folder. */
async function statInside(root: string, path: string) {
  const absolute = join(root, path);
  let real: string;
  try {
    real = await realpath(absolute);
  } catch {
    throw new UserError(`${path} does not exist`, {
      code: 'invalid_definition',
      hint: 'paths in a definition are relative to its folder; run `mcpctl validate` to check them all',
    });
  }
  if (real !== root && !real.startsWith(root + sep)) {
    throw new UserError(`${path} leads outside the definition folder (through a symbolic link)`, {
      code: 'invalid_definition',
      hint: 'copy the file into the definition folder instead of linking to it',
    });
  }
  return stat(real);
}

async function addFolder(root: string, folder: string, paths: Set<string>): Promise<void> {
  const info = await statInside(root, folder);
  if (!info.isDirectory()) {
    paths.add(folder);
    return;
  }
  const entries = await readdir(join(root, folder), { withFileTypes: true });
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = folder === '.' ? entry.name : `${folder}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name)) await addFolder(root, path, paths);
    } else if (entry.isFile()) {
      paths.add(path);
    } else if (entry.isSymbolicLink()) {
      const target = await statInside(root, path);
      if (target.isFile()) paths.add(path);
    }
  }
}

const IMPORT_PATTERN =
  /(?:\bimport\s+(?:type\s+)?(?:[\w*${},\s]+\s+from\s+)?|\bexport\s+(?:type\s+)?[\w*${},\s]+\s+from\s+|\bimport\s*\(\s*|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** The relative import specifiers of a JavaScript or TypeScript source. */
export function findRelativeImports(source: string): string[] {
  return [...new Set([...source.matchAll(IMPORT_PATTERN)].map((match) => match[1]!))];
}

/** Follows a module's relative imports, TypeScript-style (`./x.js` may be `./x.ts`). */
async function addImports(root: string, module: string, paths: Set<string>): Promise<void> {
  const source = await readFile(join(root, module), 'utf8').catch(() => '');
  for (const specifier of findRelativeImports(source)) {
    const target = posix.normalize(posix.join(posix.dirname(module), specifier));
    if (target === '..' || target.startsWith('../')) continue;
    const found = await resolveImport(root, target);
    if (found === undefined || paths.has(found)) continue;
    paths.add(found);
    if (/\.(m?[jt]s|c[jt]s)$/.test(found)) await addImports(root, found, paths);
  }
}

async function resolveImport(root: string, target: string): Promise<string | undefined> {
  const swapped = target.replace(/\.js$/, '.ts').replace(/\.mjs$/, '.mts').replace(/\.cjs$/, '.cts');
  const candidates = [target, swapped, ...['.ts', '.js', '.mts', '.mjs', '/index.ts', '/index.js'].map((ext) => target + ext)];
  for (const candidate of candidates) {
    const info = await lstat(join(root, candidate)).catch(() => undefined);
    if (info?.isFile() === true && !relative(root, join(root, candidate)).startsWith('..')) return candidate;
  }
  return undefined;
}
