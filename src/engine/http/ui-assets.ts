/**
 * The dashboard's files under /ui, from a folder (the package's dist/ui/, built by `npm run build`).
 * They are public and hold no secret: the data comes only through /v1, with a session
 * (ui-session.ts). Every answer carries a Content-Security-Policy that lets the page load its own
 * scripts and styles and call its own origin, nothing else, so text a service sent can never run
 * as script even where the page forgot to escape it.
 */
import { createHash } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { packageRoot } from '../../shared/package-root.js';
import { firstHeader } from '../../shared/http.js';
import { ServiceError } from '../service-error.js';
import type { Exchange } from './exchange.js';
import { HttpError } from './respond.js';

export const UI_PATH = '/ui';

export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** On every answer under /ui, the session's JSON ones included. */
export const UI_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': UI_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/** The folder the built dashboard is in, in the installed package. */
export function defaultUiDir(): string {
  return join(packageRoot(), 'dist', 'ui');
}

/** Whether a path is the dashboard's: `/ui` and everything under `/ui/`. */
export function isUiPath(path: string | undefined): boolean {
  return path === UI_PATH || (path?.startsWith(`${UI_PATH}/`) ?? false);
}

/** Sets the headers every answer under /ui carries. */
export function setUiHeaders(x: Exchange): void {
  for (const [name, value] of Object.entries(UI_HEADERS)) x.res.setHeader(name, value);
}

/**
 * The file a path under /ui names, relative to the folder: `/ui/` is index.html. Undefined for a
 * path that could leave the folder (`..` or `.` segments, encoded or not, an encoded slash or
 * backslash, a NUL) or that names a hidden file.
 */
export function uiFileOf(path: string): string | undefined {
  const rest = path.slice(UI_PATH.length + 1);
  if (rest === '') return 'index.html';
  const segments: string[] = [];
  for (const raw of rest.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '' || segment.startsWith('.') || /[/\\\0]/.test(segment)) return undefined;
    segments.push(segment);
  }
  return segments.join('/');
}

/** `GET`/`HEAD` of a file under /ui (not the session's endpoints, ui-session.ts answers those). */
export async function answerUiFile(x: Exchange, dir: string): Promise<void> {
  x.req.resume();
  x.res.setHeader('X-Request-Id', x.requestId);
  const path = x.path!;
  if (x.method !== 'GET' && x.method !== 'HEAD') {
    throw new HttpError('method_not_allowed', `${x.method} is not allowed on ${path}; use GET`, { Allow: 'GET, HEAD' });
  }
  if (path === UI_PATH) {
    x.res.writeHead(302, { Location: `${UI_PATH}/`, 'Content-Length': '0' });
    x.res.end();
    return;
  }
  const relative = uiFileOf(path);
  if (relative === undefined) throw new ServiceError('not_found', `nothing is served at ${path}`);
  const file = await regularFileIn(dir, relative, path);
  const { content, gzipped, etag } = await loadFile(file);
  const headers = {
    'Content-Type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Cache-Control': 'no-cache',
    ETag: etag,
    ...(gzipped === undefined ? {} : { Vary: 'Accept-Encoding' }),
  };
  if (matchesEtag(firstHeader(x.req.headers['if-none-match']), etag)) {
    x.res.writeHead(304, headers);
    x.res.end();
    return;
  }
  const body = gzipped !== undefined && acceptsGzip(x.req.headers['accept-encoding']) ? gzipped : undefined;
  x.res.writeHead(200, {
    ...headers,
    ...(body === undefined ? {} : { 'Content-Encoding': 'gzip' }),
    'Content-Length': String((body ?? content).length),
  });
  x.res.end(x.method === 'HEAD' ? undefined : (body ?? content));
}

interface LoadedFile {
  content: Buffer;
  /** the content gzip-compressed, for text files worth it */
  gzipped: Buffer | undefined;
  etag: string;
}

/** Files read and compressed once, again when a build changes them (their size or time). */
const loaded = new Map<string, { version: string; file: Promise<LoadedFile> }>();
const COMPRESSED = new Set(['.html', '.js', '.mjs', '.css', '.json', '.map', '.svg', '.txt', '.webmanifest']);
const COMPRESS_FROM_BYTES = 1024;
const gzipAsync = promisify(gzip);

async function loadFile(file: string): Promise<LoadedFile> {
  const stats = await stat(file);
  const version = `${stats.size} ${stats.mtimeMs}`;
  const cached = loaded.get(file);
  if (cached?.version === version) return cached.file;
  const reading = (async (): Promise<LoadedFile> => {
    const content = await readFile(file);
    const compress = COMPRESSED.has(extname(file).toLowerCase()) && content.length >= COMPRESS_FROM_BYTES;
    return {
      content,
      gzipped: compress ? await gzipAsync(content, { level: 9 }) : undefined,
      etag: `"${createHash('sha256').update(content).digest('base64url').slice(0, 27)}"`,
    };
  })();
  loaded.set(file, { version, file: reading });
  // a failed read is not kept: the next request tries again
  reading.catch(() => loaded.delete(file));
  return reading;
}

/** Whether `Accept-Encoding` takes gzip (RFC 9110: a q of 0 refuses it; gzip named wins over `*`). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined) return false;
  const weights = new Map<string, number>();
  for (const part of value.split(',')) {
    const [coding = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    weights.set(coding, q === undefined ? 1 : Number(q.slice(2)));
  }
  const weight = weights.get('gzip') ?? weights.get('*') ?? 0;
  return weight > 0;
}
/** The real path of `relative` in `dir` when it is a regular file inside it (a link out of it is not), else 404. */
async function regularFileIn(dir: string, relative: string, path: string): Promise<string> {
  let root: string;
  try {
    root = await realpath(dir);
  } catch {
    throw new ServiceError(
      'not_found',
      `the dashboard is not built into this engine (no ${dir}); run \`npm run build\` in the mcpctl package, then reload`,
    );
  }
  try {
    const file = await realpath(join(root, relative));
    if (file.startsWith(root + sep) && (await stat(file)).isFile()) return file;
  } catch {
    // missing: the same answer as outside the folder
  }
  throw new ServiceError('not_found', `nothing is served at ${path}`);
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === etag || tag === '*');
}
