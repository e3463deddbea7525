/**
 * The files and folders a definition refers to: relative, inside the definition folder, and
 * present. Pure: whether a path exists is asked through the check options.
 */
import { posix } from 'node:path';
import { listCompletionModules } from './completion-refs.js';
import {
  asArray,
  asRecord,
  asString,
  items,
  type CheckContext,
  type CheckOptions,
  type Path,
  type Rec,
} from './walk.js';

/** Why a path cannot be used (absolute, outside the folder, backslashes), or undefined. */
export function checkRelativePath(path: string): string | undefined {
  const literal = path.replace(/\{\{[^}]*\}\}/g, 'x');
  if (literal.includes('\\')) return 'use / as the path separator';
  if (literal.startsWith('/') || /^[A-Za-z]:/.test(literal))
    return 'must be relative to the definition folder, not absolute';
  const normalized = posix.normalize(literal);
  if (normalized === '..' || normalized.startsWith('../')) return 'must stay inside the definition folder (no ..)';
  return undefined;
}

export interface PathRef {
  path: Path;
  value: string;
  kind: 'file' | 'dir' | 'any';
}

/** Every path a definition refers to, relative to the definition folder. */
export function listPathRefs(def: Rec): PathRef[] {
  const refs: PathRef[] = [];
  const media = (content: unknown, path: Path) => {
    const item = asRecord(content);
    const value = asString(item?.path);
    if (value !== undefined && (item?.type === 'image' || item?.type === 'audio'))
      refs.push({ path: [...path, 'path'], value, kind: 'file' });
  };
  for (const [i, tool] of items(def.tools)) {
    const handler = asRecord(tool.handler);
    const base: Path = ['tools', i, 'handler'];
    if (handler?.type === 'static') asArray(handler.content).forEach((c, j) => media(c, [...base, 'content', j]));
    if (handler?.type === 'module') {
      const value = asString(handler.module);
      if (value !== undefined) refs.push({ path: [...base, 'module'], value, kind: 'file' });
    }
    if (handler?.type === 'exec') {
      const cwd = asString(handler.cwd);
      if (cwd !== undefined) refs.push({ path: [...base, 'cwd'], value: cwd, kind: 'dir' });
      asArray(handler.command).forEach((arg, k) => {
        // `./script` arguments are files of the definition, shipped with the build.
        if (typeof arg === 'string' && arg.startsWith('./')) {
          refs.push({ path: [...base, 'command', k], value: posix.join(cwd ?? '.', arg), kind: 'file' });
        }
      });
    }
  }
  for (const [i, resource] of items(def.resources)) {
    const source = asRecord(resource.source);
    const value = asString(source?.path);
    if (source?.type === 'file' && value !== undefined)
      refs.push({ path: ['resources', i, 'source', 'path'], value, kind: 'file' });
  }
  for (const [i, prompt] of items(def.prompts)) {
    for (const [j, message] of items(prompt.messages)) media(message.content, ['prompts', i, 'messages', j, 'content']);
  }
  for (const ref of listCompletionModules(def))
    refs.push({ path: [...ref.path, 'module'], value: ref.module, kind: 'file' });
  asArray(def.include).forEach((value, i) => {
    if (typeof value === 'string') refs.push({ path: ['include', i], value, kind: 'any' });
  });
  return refs;
}

export function checkPaths({ def, options, error }: CheckContext): void {
  // Once an exec cwd is wrong, the ./ paths under it would only repeat the news.
  const badCwd = new Set<string>();
  const handlerOf = (path: Path) => path.slice(0, 3).join('.');
  for (const ref of listPathRefs(def)) {
    if (ref.path.at(-2) === 'command' && badCwd.has(handlerOf(ref.path))) continue;
    const problem = checkRelativePath(ref.value) ?? findMissing(ref, options);
    if (problem === undefined) continue;
    error(ref.path, problem);
    if (ref.path.at(-1) === 'cwd') badCwd.add(handlerOf(ref.path));
  }
}

function findMissing(ref: PathRef, options: CheckOptions): string | undefined {
  if (options.stat === undefined || ref.value.includes('{{')) return undefined;
  const found = options.stat(posix.normalize(ref.value));
  if (found === undefined) return `${ref.value} does not exist (paths are relative to the definition's folder)`;
  if (ref.kind === 'file' && found !== 'file') return `${ref.value} is a folder, not a file`;
  if (ref.kind === 'dir' && found !== 'dir') return `${ref.value} is a file, not a folder`;
  return undefined;
}
