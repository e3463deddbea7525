/**
 * Loads a definition file: YAML (or JSON) → zod schema → semantic checks, and reports every
 * problem at once, each with `file:line:column`, its field path and a message. `yaml` is imported
 * lazily; this module itself is only ever loaded lazily by the commands that need it.
 */
import { readFile, stat } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Document } from 'yaml';
import type * as Yaml from 'yaml';
import { EXIT, UserError, type Problem } from '../shared/errors.js';
import { displayPath, formatPath, type FieldPath } from '../shared/paths.js';
import { checkDefinition } from './check.js';
import type { ServerDefinition } from './schema.js';
import { serverDefinitionFor } from './schema-builders.js';
import { describeZodIssues } from './zod-issues.js';

export interface Position {
  line: number;
  column: number;
}

export interface LoadedDefinition {
  /** absolute path of the file */
  file: string;
  /** the file as messages name it (relative to the working folder when inside it) */
  shown: string;
  /** the folder of the file: relative paths in the definition start here */
  dir: string;
  source: string;
  /** parsed, with defaults applied */
  definition: ServerDefinition;
  warnings: Problem[];
  /** where a field sits in the source, such as ['tools', 0, 'name'] */
  locate(path: FieldPath): Position | undefined;
}

export interface LoadOptions {
  /** the folder `file` is relative to, and that `where` is shown relative to */
  cwd?: string;
}

/** Reads, parses and checks a definition. Throws UserError (exit 2) listing every problem. */
export async function loadDefinition(file: string, options: LoadOptions = {}): Promise<LoadedDefinition> {
  const cwd = options.cwd ?? process.cwd();
  const absolute = resolve(cwd, file);
  const shown = displayPath(absolute, cwd);
  const source = await readDefinitionFile(absolute, shown);
  const dir = dirname(absolute);
  return parseDefinition(source, {
    file: absolute,
    shown,
    stat: (path) => {
      try {
        return statSync(join(dir, path)).isDirectory() ? 'dir' : 'file';
      } catch {
        return undefined;
      }
    },
  });
}

export interface ParseOptions {
  /** absolute path of the file the source came from */
  file: string;
  /** how the file is named in messages; default: `file` */
  shown?: string;
  /** what is at a path relative to the definition folder; omit to skip existence checks */
  stat?: (relativePath: string) => 'file' | 'dir' | undefined;
}

/** Parses and checks definition text that is already in memory. */
export async function parseDefinition(source: string, options: ParseOptions): Promise<LoadedDefinition> {
  const yaml = await import('yaml');
  const shown = options.shown ?? options.file;
  const text = source.startsWith('\uFEFF') ? source.slice(1) : source;
  const lineCounter = new yaml.LineCounter();
  const doc = yaml.parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line: Math.max(line, 1), column: col };
  };
  const locate = (path: FieldPath, atKey = false): Position | undefined => {
    const offset = locateOffset(yaml, doc, path, atKey);
    return offset === undefined ? undefined : position(offset);
  };

  // A syntax error leaves a half-read document: the schema's complaints about it, and the parser's
  // own errors after the first, follow from that one error. Only the first is worth reading.
  const syntax = firstYamlError(doc.errors, text, position);
  if (syntax !== undefined) {
    throw new UserError(`${shown} is not a valid definition (1 problem)`, {
      exitCode: EXIT.usage,
      code: 'invalid_definition',
      problems: [{ where: `${shown}:${syntax.at.line}:${syntax.at.column}`, message: syntax.message }],
      hint: `fix this line, then check again with \`mcpctl validate ${shown}\`${doc.errors.length > 1 ? ' (a syntax error can hide others after it)' : ''}`,
    });
  }
  const errors: Located[] = [];
  const warnings: Located[] = [];
  for (const warning of doc.warnings) warnings.push({ at: position(warning.pos[0]), message: warning.message });

  // A list or map used as a key (an explicit `? [a, b]` key) cannot be a field name: say so where
  // it is, and leave the pair out so that it does not come back as a garbled "unknown field".
  dropCollectionKeys(yaml, doc.contents, (key) => {
    errors.push({
      at: position(key.range?.[0] ?? 0),
      message: 'a list or map cannot be a key: check the indentation of this line',
    });
  });

  let input: unknown;
  try {
    input = doc.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    errors.push({ at: position(0), message: error instanceof Error ? error.message : String(error) });
  }

  let definition: ServerDefinition | undefined;
  if (input === undefined || input === null) {
    errors.push({ at: position(0), message: 'the file is empty: a definition needs at least name and template' });
  } else {
    input = withoutExtensionKeys(input);
    const parsed = serverDefinitionFor(input).safeParse(input);
    const issues = parsed.success ? [] : describeZodIssues(parsed.error.issues, input);
    if (parsed.success) definition = parsed.data;
    const schemaPaths = new Set(issues.map((issue) => formatPath(issue.path)));
    // The schema has already said what is wrong at a path; a second message there would be noise.
    const checked = checkDefinition(input, options.stat === undefined ? {} : { stat: options.stat }).filter(
      (issue) => !schemaPaths.has(formatPath(issue.path)),
    );
    for (const issue of [...issues, ...checked]) {
      const located: Located = {
        at: locate(issue.path, issue.atKey === true),
        path: issue.path,
        message: issue.message,
      };
      (issue.severity === 'error' ? errors : warnings).push(located);
    }
  }

  const toProblems = (list: Located[]): Problem[] =>
    sortLocated(list).map((item) => ({
      ...(item.at === undefined ? {} : { where: `${shown}:${item.at.line}:${item.at.column}` }),
      ...(item.path === undefined || item.path.length === 0 ? {} : { path: formatPath(item.path) }),
      message: item.message,
    }));

  if (errors.length > 0 || definition === undefined) {
    const count = errors.length;
    throw new UserError(`${shown} is not a valid definition (${count} ${count === 1 ? 'problem' : 'problems'})`, {
      exitCode: EXIT.usage,
      code: 'invalid_definition',
      problems: toProblems(errors),
      hint: `fix the lines above, then check again with \`mcpctl validate ${shown}\` (docs/definition.md describes every field)`,
    });
  }

  return {
    file: options.file,
    shown,
    dir: dirname(options.file),
    source,
    definition,
    warnings: toProblems(warnings),
    locate: (path) => locate(path),
  };
}

/**
 * Removes every pair whose key is a list or map, depth first in source order, after `found` is
 * called with the key. A plain walk: `yaml.visit` builds a frozen ancestry array at every node,
 * which on a file of a few hundred tools costs more than the walk itself.
 */
function dropCollectionKeys(yaml: YamlModule, node: unknown, found: (key: Yaml.YAMLMap | Yaml.YAMLSeq) => void): void {
  if (!yaml.isCollection(node)) return;
  const items: unknown[] = node.items;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (!yaml.isPair(item)) {
      dropCollectionKeys(yaml, item, found);
    } else if (yaml.isCollection(item.key)) {
      found(item.key);
      items.splice(i, 1);
      i -= 1;
    } else {
      dropCollectionKeys(yaml, item.value, found);
    }
  }
}

/** Top-level `x-` keys are the author's own (a place for YAML anchors): not part of the definition. */
function withoutExtensionKeys(input: unknown): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
  return Object.fromEntries(Object.entries(input).filter(([key]) => !key.startsWith('x-')));
}

// ---------------------------------------------------------------------------------------------
// Reading the file

async function readDefinitionFile(absolute: string, shown: string): Promise<string> {
  try {
    const info = await stat(absolute);
    if (info.isDirectory()) {
      const inside = ['server.yaml', 'server.yml', 'mcpctl.yaml'].find((name) => {
        try {
          return statSync(join(absolute, name)).isFile();
        } catch {
          return false;
        }
      });
      throw new UserError(`${shown} is a folder, not a definition file`, {
        code: 'invalid_definition',
        hint:
          inside === undefined
            ? 'pass the YAML file of the definition, or create one with `mcpctl init`'
            : `pass the definition file itself: ${join(shown, inside)}`,
      });
    }
    return await readFile(absolute, 'utf8');
  } catch (error) {
    if (error instanceof UserError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new UserError(`${shown} does not exist`, {
        code: 'file_not_found',
        hint: 'check the path, or create a definition with `mcpctl init`',
      });
    }
    if (code === 'EACCES' || code === 'EPERM') {
      throw new UserError(`cannot read ${shown}: permission denied`, {
        code: 'file_unreadable',
        hint: 'check the file’s permissions',
      });
    }
    throw new UserError(`cannot read ${shown}: ${error instanceof Error ? error.message : String(error)}`, {
      code: 'file_unreadable',
      cause: error,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Positions

interface Located {
  at: Position | undefined;
  path?: FieldPath;
  message: string;
}

function sortLocated(list: Located[]): Located[] {
  return [...list].sort((a, b) => {
    if (a.at === undefined || b.at === undefined) return a.at === b.at ? 0 : a.at === undefined ? 1 : -1;
    return a.at.line - b.at.line || a.at.column - b.at.column;
  });
}

type YamlModule = typeof Yaml;

/**
 * The source offset of the node at `path`: its value, or its key with `atKey`. A path that does
 * not exist (a missing field) points at the deepest map or list that does.
 */
export function locateOffset(yaml: YamlModule, doc: Document, path: FieldPath, atKey = false): number | undefined {
  let node: unknown = doc.contents;
  let offset = rangeStart(node);
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    if (yaml.isAlias(node)) node = node.resolve(doc);
    let next: unknown;
    let keyOffset: number | undefined;
    if (yaml.isSeq(node)) {
      next = typeof segment === 'number' ? node.items[segment] : undefined;
    } else if (yaml.isMap(node)) {
      const pair = node.items.find((item) => yaml.isScalar(item.key) && String(item.key.value) === String(segment));
      if (pair === undefined) return offset;
      keyOffset = rangeStart(pair.key);
      if (i === path.length - 1 && atKey) return keyOffset ?? offset;
      next = pair.value;
    } else {
      return offset;
    }
    const start = rangeStart(next);
    if (start === undefined) return keyOffset ?? offset;
    node = next;
    offset = start;
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return Array.isArray(range) ? range[0] : undefined;
}

// ---------------------------------------------------------------------------------------------
// Messages

/**
 * The first syntax error of the document, where it is and what to do. A line indented one space
 * too far makes the value above it a multi-line key: the parser reports it at that value, but the
 * line to fix is the next one, so that is where it is shown.
 */
function firstYamlError(
  errors: readonly Yaml.YAMLError[],
  text: string,
  position: (offset: number) => Position,
): { at: Position; message: string } | undefined {
  const first = [...errors].sort((a, b) => a.pos[0] - b.pos[0])[0];
  if (first === undefined) return undefined;
  const at = position(first.pos[0]);
  if (first.code === 'BLOCK_AS_IMPLICIT_KEY' && first.message.startsWith('Nested mappings')) {
    const next = nextLineStart(text, first.pos[0]);
    if (next !== undefined) {
      const culprit = position(next);
      return {
        at: culprit,
        message: `line ${culprit.line} is indented more than the fields before it, so YAML reads it as part of the value on line ${at.line}: indent it like its neighbours`,
      };
    }
  }
  return { at, message: describeYamlError(first.code, first.message) };
}

/** The offset of the first non-blank character on the lines after `offset`'s line. */
function nextLineStart(text: string, offset: number): number | undefined {
  const newline = text.indexOf('\n', offset);
  if (newline < 0) return undefined;
  const match = /[^\s]/.exec(text.slice(newline + 1));
  return match === null ? undefined : newline + 1 + match.index;
}

function describeYamlError(code: string, message: string): string {
  if (code === 'DUPLICATE_KEY') return `${message.replace(/\.$/, '')}: this key appears twice in the same map`;
  if (code === 'MULTIPLE_DOCS') return 'a definition is a single YAML document: remove the extra --- separator';
  if (code === 'TAB_AS_INDENT') return 'tabs are not allowed for indentation in YAML: use spaces';
  if (code === 'BAD_INDENT') return `${message.split('\n')[0] ?? message}: check the indentation of this line`;
  if (code === 'MISSING_CHAR' && message.startsWith('Sequence item without'))
    return 'this line is indented like a list item but does not start with "- ": check its indentation';
  return message.split('\n')[0] ?? message;
}
