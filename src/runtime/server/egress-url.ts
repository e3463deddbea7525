/**
 * Renders the URL of an `http` handler or a `url` resource: each inserted value is URL-encoded
 * (one component, so `/`, `?` and `#` cannot change the URL's shape), and a value that would make
 * a path segment `.` or `..` (also percent-encoded, once or more: `%2e%2e`, `%252e`) is refused,
 * because URL parsers and the servers behind them resolve those and the call would reach another
 * path than the definition names (`/v1/users/{{args.id}}/profile` with `..` → `/v1/profile`).
 */
import { encodeUrlValue, type Template, type TemplateScope } from '../../definition/template.js';

/** A value that cannot go into the URL where the definition puts it. */
export class UrlValueError extends Error {
  override readonly name = 'UrlValueError';
}

/** Rounds of percent-decoding tried: a server or proxy in between may decode more than once. */
const DECODE_ROUNDS = 4;

export function renderUrl(template: Template, scope: TemplateScope): string {
  const pieces = template.renderPieces(scope, encodeUrlValue);
  const url = pieces.map((piece) => piece.text).join('');
  if (!template.dynamic) return url;
  const [pathStart, pathEnd] = pathSpan(url);
  let offset = 0;
  const inserted: Array<{ start: number; end: number; ref: string }> = [];
  for (const piece of pieces) {
    if (piece.ref !== undefined) inserted.push({ start: offset, end: offset + piece.text.length, ref: piece.ref });
    offset += piece.text.length;
  }
  let start = pathStart;
  while (start <= pathEnd) {
    const slash = url.indexOf('/', start);
    const end = slash === -1 || slash > pathEnd ? pathEnd : slash;
    const from = inserted.find((piece) => piece.start <= end && piece.end >= start);
    if (from !== undefined && isDotSegment(url.slice(start, end))) {
      throw new UrlValueError(
        `the value of {{${from.ref}}} makes a URL path segment "." or ".." (or an encoding of them), which would change the path the call reaches; ` +
          'pass a value without "." or ".." segments',
      );
    }
    start = end + 1;
  }
  return url;
}

/** Where the path of a rendered URL starts and ends: after `scheme://authority`, before `?` or `#`. */
function pathSpan(url: string): [number, number] {
  const scheme = url.indexOf('://');
  const afterScheme = scheme === -1 ? 0 : scheme + 3;
  let start = url.length;
  for (const mark of ['/', '?', '#']) {
    const at = url.indexOf(mark, afterScheme);
    if (at !== -1 && at < start) start = at;
  }
  let end = url.length;
  for (const mark of ['?', '#']) {
    const at = url.indexOf(mark, start);
    if (at !== -1 && at < end) end = at;
  }
  return [start, end];
}

/** `.` or `..`, after decoding, or a `/` or `\` inside the value that would bring one in when decoded. */
function isDotSegment(segment: string): boolean {
  let text = segment;
  for (let round = 0; round <= DECODE_ROUNDS; round += 1) {
    if (text.split(/[/\\]/).some((part) => part === '.' || part === '..')) return true;
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      return false;
    }
    if (decoded === text) return false;
    text = decoded;
  }
  return false;
}
