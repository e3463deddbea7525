/**
 * Turns a loaded definition into the body of `POST /v1/build`: the spec's fields and the runtime
 * extensions (not `deploy`, `tests`, `$schema` or `include`), plus `files`: every file the
 * definition refers to, keyed by POSIX path relative to the definition. Folders named in `include`
 * ship without their dot-files and without what `.mcpctlignore` names; shipped files that look like
 * credentials become warnings of the definition.
 */
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import { listPathRefs } from '../definition/file-paths.js';
import {
  IGNORE_FILE,
  isDotName,
  looksLikeCredential,
  parseIgnoreRules,
  type IgnoreRules,
} from '../definition/shipped-files.js';
import type { LoadedDefinition } from '../definition/load.js';
import { listCompletionModules } from '../definition/completion-refs.js';
import { compiledNameClash, exportedNames, sourcesToCheck, transpileSource } from '../definition/modules.js';
import { UserError, type Problem } from '../shared/errors.js';
import { formatPath, type FieldPath } from '../shared/paths.js';
import type { BuildRequestInput } from './build-schema.js';

/** The most a build may carry in files, in bytes. */
export const MAX_BUILD_FILES_BYTES = 10 * 1024 * 1024;
/** The largest request body a /v1 service takes (docs/api.md, limits): files travel in it, binary ones as base64. */
export const MAX_BUILD_REQUEST_BYTES = 10 * 1024 * 1024;

/** Folders never shipped when a folder is included. */
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules']);

type FileEntry = NonNullable<BuildRequestInput['files']>[string];

export async function toBuildRequest(loaded: LoadedDefinition): Promise<BuildRequestInput> {
  const d = loaded.definition;
  const request: BuildRequestInput = { name: d.name, template: d.template };
  if (d.version !== undefined) request.version = d.version;
  if (d.description !== undefined) request.description = d.description;
  if (d.instructions !== undefined) request.instructions = d.instructions;
  if (d.icons !== undefined) request.icons = d.icons;
  if (d.cache !== undefined) request.cache = d.cache;
  if (d.auth !== undefined) request.auth = d.auth;
  if (d.sessions !== undefined) request.sessions = d.sessions;
  if (d.egress !== undefined) request.egress = d.egress;
  if (d.tools !== undefined) request.tools = d.tools;
  if (d.resources !== undefined) request.resources = d.resources;
  if (d.prompts !== undefined) request.prompts = d.prompts;
  const files = await collectFiles(loaded);
  if (Object.keys(files).length > 0) request.files = files;
  const bytes = Buffer.byteLength(JSON.stringify(request));
  if (bytes > MAX_BUILD_REQUEST_BYTES) {
    const largest = Object.entries(files)
      .map(([path, entry]): [string, number] => [path, entry.content.length])
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3);
    throw new UserError(
      `the build request would be ${formatMiB(bytes)}, over the ${formatMiB(MAX_BUILD_REQUEST_BYTES)} a service takes (binary files travel as base64, a third larger)`,
      {
        code: 'definition_too_large',
        problems: largest.map(([file, size]) => ({ where: file, message: `${formatMiB(size)} encoded` })),
        hint: 'ship less: narrow include to the files the server needs, or serve large data from a url source',
      },
    );
  }
  return request;
}

/** A problem with a file a definition ships, and the field of the definition that brings it. */
interface FileProblem {
  field: FieldPath;
  message: string;
  /** `file:line:column` inside the shipped file itself (a syntax error), when it has one */
  at?: string;
}

/**
 * Every file the definition refers to, read and encoded, after the checks a build would make of
 * them: each stays inside the definition folder (also through symbolic links), is a file, and
 * all of them fit the size limit; TypeScript compiles and the JavaScript a module loads parses;
 * a module exports the function its tool names. `validate` runs this too, so it refuses what a
 * build refuses. Every problem is reported at once, where the definition names the file and,
 * for a syntax error, at file:line:column of the module.
 */
export async function collectFiles(loaded: LoadedDefinition): Promise<Record<string, FileEntry>> {
  const root = await realpath(loaded.dir);
  const problems: FileProblem[] = [];
  const rules = await parseIgnoreRules(await readFile(join(root, IGNORE_FILE), 'utf8').catch(() => undefined));
  /** each shipped path, with the field that brought it (the first one) */
  const paths = new Map<string, FieldPath>();
  const moduleFiles = new Set<string>();
  const refs = listPathRefs(loaded.definition);
  for (const ref of refs) {
    const kind = ref.path[0] === 'include' ? 'include' : ref.path.at(-1) === 'cwd' ? 'cwd' : 'file';
    if (kind === 'cwd') continue;
    const inside = (path: string) => statInside(root, path, ref.path, problems);
    if (ref.value.includes('{{')) {
      // A templated file source: ship the folder before the first template, if it has one.
      const folder = posix.dirname(ref.value.slice(0, ref.value.indexOf('{{')) + 'x');
      if (folder !== '.') await addFolder({ root, rules, paths, problems }, posix.normalize(folder), ref.path);
      continue;
    }
    const path = posix.normalize(ref.value);
    if (kind === 'include') {
      const info = await inside(path);
      if (info?.isDirectory() === true) await addFolder({ root, rules, paths, problems }, path, ref.path);
      else if (info !== undefined) add(paths, path, ref.path);
    } else {
      add(paths, path, ref.path);
      if (MODULE_FILE.test(path) && ref.path.at(-1) === 'module') {
        moduleFiles.add(path);
        await addImports(root, path, ref.path, paths, moduleFiles);
      }
    }
  }

  const files: Record<string, FileEntry> = {};
  let total = 0;
  const sizes: Array<[string, number]> = [];
  const texts = new Map<string, string>();
  for (const [path, field] of [...paths].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const info = await statInside(root, path, field, problems);
    if (info === undefined) continue;
    if (!info.isFile()) {
      problems.push({ field, message: `${path} is not a file` });
      continue;
    }
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
    const bytes = await readFile(join(root, path));
    files[path] = encode(bytes);
    if (MODULE_FILE.test(path)) texts.set(path, bytes.toString('utf8'));
  }
  if (problems.length === 0) await checkCode(loaded, paths, moduleFiles, texts, problems);
  if (problems.length > 0) throw filesError(loaded, problems);
  warnCredentials(loaded, paths);
  return files;
}

/** A warning of the definition for each shipped file that looks like a key, token or password. */
function warnCredentials(loaded: LoadedDefinition, paths: ReadonlyMap<string, FieldPath>): void {
  for (const [path, field] of paths) {
    if (!looksLikeCredential(path)) continue;
    const at = loaded.locate(field);
    const message = `ships ${path}, which looks like a credential; leave it out of include, or list it in ${IGNORE_FILE} beside the definition`;
    if (loaded.warnings.some((warning) => warning.message === message)) continue;
    loaded.warnings.push({
      ...(at === undefined ? {} : { where: `${loaded.shown}:${at.line}:${at.column}` }),
      path: formatPath(field),
      message,
    });
  }
}

const MODULE_FILE = /\.(m?[jt]s|c[jt]s)$/;

function add(paths: Map<string, FieldPath>, path: string, field: FieldPath): void {
  if (!paths.has(path)) paths.set(path, field);
}

/** Syntax of the shipped code, compiled names that clash, and the exports module handlers name. */
async function checkCode(
  loaded: LoadedDefinition,
  paths: ReadonlyMap<string, FieldPath>,
  moduleFiles: ReadonlySet<string>,
  texts: ReadonlyMap<string, string>,
  problems: FileProblem[],
): Promise<void> {
  const sources = sourcesToCheck(paths.keys(), moduleFiles);
  if (sources.length === 0) return;
  const shipped = new Set(paths.keys());
  for (const path of sources) {
    const field = paths.get(path)!;
    const clash = compiledNameClash(path, shipped);
    if (clash !== undefined) problems.push({ field, message: clash });
    const { problems: syntax } = await transpileSource(path, texts.get(path) ?? '');
    for (const problem of syntax) {
      problems.push({
        field,
        message: problem.message,
        ...(problem.line === undefined ? {} : { at: `${path}:${problem.line}:${problem.column}` }),
      });
    }
  }
  if (problems.length > 0) return;
  const wanted: Array<{ field: FieldPath; module: string; name: string; note: string }> = [];
  for (const [i, tool] of (loaded.definition.tools ?? []).entries()) {
    const handler = tool.handler;
    if (handler?.type !== 'module') continue;
    const byName = handler.export === undefined;
    wanted.push({
      field: ['tools', i, 'handler', byName ? 'module' : 'export'],
      module: handler.module,
      name: handler.export ?? tool.name,
      note: byName ? ' (the tool name; set handler.export to use another)' : '',
    });
  }
  for (const ref of listCompletionModules(loaded.definition)) {
    if (ref.export !== undefined)
      wanted.push({ field: [...ref.path, 'export'], module: ref.module, name: ref.export, note: '' });
  }
  for (const { field, module, name, note } of wanted) {
    const path = posix.normalize(module);
    const text = texts.get(path);
    if (text === undefined) continue;
    const names = await exportedNames(path, text);
    if (names !== undefined && !names.has(name)) {
      problems.push({
        field,
        message: `${module} has no exported function "${name}"${note}${names.size === 0 ? '' : `; it exports ${[...names].join(', ')}`}`,
      });
    }
  }
}

/** The problems as one error: each where the definition names the file, or inside the file. */
function filesError(loaded: LoadedDefinition, problems: FileProblem[]): UserError {
  const base = posix.dirname(loaded.shown.split(sep).join('/'));
  const located: Problem[] = problems.map((problem) => {
    const at = problem.at === undefined ? undefined : base === '.' ? problem.at : `${base}/${problem.at}`;
    const position = at === undefined ? loaded.locate(problem.field) : undefined;
    const where = at ?? (position === undefined ? undefined : `${loaded.shown}:${position.line}:${position.column}`);
    return { ...(where === undefined ? {} : { where }), path: formatPath(problem.field), message: problem.message };
  });
  const count = located.length;
  return new UserError(`${loaded.shown} cannot be built (${count} ${count === 1 ? 'problem' : 'problems'})`, {
    code: 'invalid_definition',
    problems: located,
    hint: 'fix the lines above; `mcpctl validate` checks them offline, as a build does',
  });
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

/**
 * Stats a path and makes sure it (after symbolic links) stays inside the definition folder;
 * undefined, with the problem noted, when it does not exist or leads out.
 */
async function statInside(root: string, path: string, field: FieldPath, problems: FileProblem[]) {
  const absolute = join(root, path);
  let real: string;
  try {
    real = await realpath(absolute);
  } catch {
    problems.push({ field, message: `${path} does not exist (paths are relative to the definition's folder)` });
    return undefined;
  }
  if (real !== root && !real.startsWith(root + sep)) {
    problems.push({
      field,
      message: `${path} leads outside the definition folder through a symbolic link; copy the file into the folder instead`,
    });
    return undefined;
  }
  return stat(real);
}

interface FolderWalk {
  root: string;
  rules: IgnoreRules;
  paths: Map<string, FieldPath>;
  problems: FileProblem[];
}

/**
 * The files of a folder named in the definition, recursively. Dot-files and dot-folders (`.env`,
 * `.npmrc`, `.git`) stay behind unless named themselves, and so does what `.mcpctlignore` names:
 * they are where secrets live, and `include: ["."]` must not ship them by accident.
 */
async function addFolder(walk: FolderWalk, folder: string, field: FieldPath): Promise<void> {
  const { root, rules, paths, problems } = walk;
  const info = await statInside(root, folder, field, problems);
  if (info === undefined) return;
  if (!info.isDirectory()) {
    add(paths, folder, field);
    return;
  }
  const entries = await readdir(join(root, folder), { withFileTypes: true });
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (isDotName(entry.name)) continue;
    const path = folder === '.' ? entry.name : `${folder}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name) && !rules.ignores(`${path}/`)) await addFolder(walk, path, field);
    } else if (rules.ignores(path)) {
      continue;
    } else if (entry.isFile()) {
      add(paths, path, field);
    } else if (entry.isSymbolicLink()) {
      const target = await statInside(root, path, field, problems);
      if (target?.isFile() === true) add(paths, path, field);
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
async function addImports(
  root: string,
  module: string,
  field: FieldPath,
  paths: Map<string, FieldPath>,
  moduleFiles: Set<string>,
): Promise<void> {
  const source = await readFile(join(root, module), 'utf8').catch(() => '');
  for (const specifier of findRelativeImports(source)) {
    const target = posix.normalize(posix.join(posix.dirname(module), specifier));
    if (target === '..' || target.startsWith('../')) continue;
    const found = await resolveImport(root, target);
    if (found === undefined || paths.has(found)) continue;
    add(paths, found, field);
    if (MODULE_FILE.test(found)) {
      moduleFiles.add(found);
      await addImports(root, found, field, paths, moduleFiles);
    }
  }
}

async function resolveImport(root: string, target: string): Promise<string | undefined> {
  const swapped = target
    .replace(/\.js$/, '.ts')
    .replace(/\.mjs$/, '.mts')
    .replace(/\.cjs$/, '.cts');
  const candidates = [
    target,
    swapped,
    ...['.ts', '.js', '.mts', '.mjs', '/index.ts', '/index.js'].map((ext) => target + ext),
  ];
  for (const candidate of candidates) {
    const info = await lstat(join(root, candidate)).catch(() => undefined);
    if (info?.isFile() === true && !relative(root, join(root, candidate)).startsWith('..')) return candidate;
  }
  return undefined;
}
