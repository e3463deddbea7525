/**
 * Content of tool results and prompt messages, compiled from a definition's content items:
 * text and JSON (templated), image and audio (inline base64 or a file, read once at start-up),
 * and embedded resources (inline text, or the defined resource of that URI read per request).
 */
import { readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { ContentBlock, ReadResourceResult } from '@modelcontextprotocol/server';
import type { ContentItem } from '../../definition/schema.js';
import type { Problem } from '../../shared/errors.js';
import { LIMITS } from '../../definition/schema.js';
import type { Egress } from './egress.js';
import type { Peer } from './peer.js';
import { resolveRealInside } from './safe-path.js';
import { compileDeep, compileTemplate, type TemplateScope } from '../../definition/template.js';

/** What one request brings: the caller, and a signal that aborts when the request is cancelled. */
export interface CallContext {
  userId: string | undefined;
  signal: AbortSignal;
  /** the client, while a tool runs (tools/call only) */
  peer?: Peer;
}

export type ResourceContents = ReadResourceResult['contents'][number];

/** What compilers share: the definition folder and how to read a defined resource. */
export interface CompileContext {
  /** real path of the folder the definition's files are in */
  realDir: string;
  server: { name: string; version: string };
  /** start-up problems (a missing file, a missing variable): collected, then reported together */
  problems: Problem[];
  /** reads a defined resource; bound once resources are compiled */
  readResource(uri: string, call: CallContext): Promise<ResourceContents[]>;
  /** what `http` handlers and `url` resources may reach, and the dispatcher that enforces it */
  egress: Egress;
}

export interface RenderedContent {
  block: ContentBlock;
  /** for a `json` item: the value, used as a tool's structuredContent */
  structured?: unknown;
}

export type ContentRenderer = (scope: TemplateScope, call: CallContext) => Promise<RenderedContent>;

const MIME_BY_EXTENSION: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.ts': 'text/plain',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.toml': 'application/toml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.mp4': 'video/mp4',
  '.woff2': 'font/woff2',
};

export function guessMimeType(path: string): string | undefined {
  return MIME_BY_EXTENSION[extname(path).toLowerCase()];
}

const TEXT_MIME =
  /^(text\/|application\/(json|xml|yaml|x-yaml|toml|javascript|ecmascript|graphql|sql|x-ndjson|x-sh)\b|[\w.-]+\/[\w.-]+\+(json|xml|yaml)\b)/i;

/** Whether content of this media type is served as text (otherwise as a base64 blob). */
export function isTextMimeType(mimeType: string): boolean {
  return TEXT_MIME.test(mimeType);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Text that decodes as UTF-8 and holds no NUL byte. */
export function looksLikeText(bytes: Uint8Array): boolean {
  if (bytes.subarray(0, 8192).includes(0)) return false;
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Resource contents for bytes: text for textual media types, a base64 blob otherwise. */
export function toResourceContents(uri: string, bytes: Buffer, mimeType: string | undefined): ResourceContents {
  if (mimeType === undefined) {
    return looksLikeText(bytes)
      ? { uri, mimeType: 'text/plain', text: bytes.toString('utf8') }
      : { uri, mimeType: 'application/octet-stream', blob: bytes.toString('base64') };
  }
  const base = mimeType.split(';')[0]!.trim();
  return isTextMimeType(base)
    ? { uri, mimeType: base, text: bytes.toString('utf8') }
    : { uri, mimeType: base, blob: bytes.toString('base64') };
}

/** Reads a file of the definition folder, within the size limit. */
export async function readDefinitionFile(
  realDir: string,
  path: string,
  maxBytes: number = LIMITS.maxBytes,
): Promise<Buffer> {
  const real = await resolveRealInside(realDir, path);
  const info = await stat(real);
  if (!info.isFile()) throw new Error(`"${path}" is not a file`);
  if (info.size > maxBytes) throw new Error(`"${path}" is larger than the limit of ${maxBytes} bytes`);
  return readFile(real);
}

/** Compiles one content item; `where` names it in start-up problems. */
export async function compileContent(
  item: ContentItem | string,
  where: string,
  ctx: CompileContext,
): Promise<ContentRenderer> {
  if (typeof item === 'string') item = { type: 'text', text: item };
  switch (item.type) {
    case 'text': {
      const text = compileTemplate(item.text);
      return async (scope) => ({ block: { type: 'text', text: text.render(scope) } });
    }
    case 'json': {
      const json = compileDeep(item.json);
      return async (scope) => {
        const value = json(scope);
        return { block: { type: 'text', text: JSON.stringify(value, null, 2) }, structured: value };
      };
    }
    case 'image':
    case 'audio': {
      const kind = item.type;
      let data = item.data ?? '';
      if (item.path !== undefined) {
        try {
          data = (await readDefinitionFile(ctx.realDir, item.path)).toString('base64');
        } catch (error) {
          ctx.problems.push({ path: `${where}.path`, message: `cannot read ${item.path}: ${messageOf(error)}` });
        }
      }
      const block = { type: kind, data, mimeType: item.mimeType } as ContentBlock;
      return async () => ({ block });
    }
    case 'resource': {
      const uri = compileTemplate(item.uri);
      if (item.text !== undefined) {
        const text = compileTemplate(item.text);
        const mimeType = item.mimeType ?? 'text/plain';
        return async (scope) => ({
          block: { type: 'resource', resource: { uri: uri.render(scope), mimeType, text: text.render(scope) } },
        });
      }
      return async (scope, call) => {
        const [contents] = await ctx.readResource(uri.render(scope), call);
        if (contents === undefined) throw new Error(`resource ${uri.render(scope)} has no contents`);
        return { block: { type: 'resource', resource: contents } };
      };
    }
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'no such file';
    if (code === 'EISDIR') return 'it is a folder';
    if (code === 'EACCES') return 'permission denied';
    return error.message;
  }
  return String(error);
}
