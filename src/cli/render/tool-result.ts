/**
 * A tool's result as a person reads it: text as written (JSON text pretty-printed), structured
 * content pretty-printed once, and what cannot be printed (images, audio, resources) named with its
 * type and size. What the server wrote is shown with its control characters as text.
 */
import type { Printer } from '../output.js';
import { jsonInText } from '../../shared/json-text.js';

/** The part of a `tools/call` result this reads; the client validated the rest. */
export interface ToolResultView {
  content?: ReadonlyArray<Record<string, unknown>> | undefined;
  structuredContent?: unknown;
  isError?: boolean | undefined;
}

/** The lines of a result, for the terminal and for --quiet alike. */
export function resultLines(result: ToolResultView): string[] {
  const structured = result.structuredContent;
  const structuredText = structured === undefined ? undefined : canonical(structured);
  const lines: string[] = [];
  for (const block of result.content ?? []) {
    // the same data as the structured content, which is printed below: once is enough
    if (structuredText !== undefined && block.type === 'text' && canonical(jsonInText(block.text)) === structuredText) {
      continue;
    }
    lines.push(...blockLines(block));
  }
  if (structured !== undefined) lines.push(JSON.stringify(structured, null, 2));
  if (lines.length === 0) lines.push('(no content)');
  return lines;
}

export function printToolResult(p: Printer, result: ToolResultView): void {
  for (const line of resultLines(result)) p.line(line);
}

function blockLines(block: Record<string, unknown>): string[] {
  switch (block.type) {
    case 'text': {
      const text = typeof block.text === 'string' ? block.text : '';
      const json = jsonInText(text);
      return [json !== undefined && typeof json === 'object' && json !== null ? JSON.stringify(json, null, 2) : text];
    }
    case 'image':
    case 'audio':
      return [`[${block.type}: ${textOf(block.mimeType) || 'unknown type'}, ${sizeOfBase64(block.data)}]`];
    case 'resource_link':
      return [`[resource: ${textOf(block.name)} ${textOf(block.uri)}]`.replace(/\s+]$/, ']')];
    case 'resource': {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      const mime = textOf(resource.mimeType);
      const head = `[resource: ${textOf(resource.uri)}${mime === '' ? '' : `, ${mime}`}]`;
      if (typeof resource.text === 'string') return [head, resource.text];
      return [`${head.slice(0, -1)}, ${sizeOfBase64(resource.blob)}]`];
    }
    default:
      return [`[${String(block.type)} content]`];
  }
}

/** A field the server should have given as text; anything else counts as absent. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** JSON with its object keys sorted, to compare two values. */
function canonical(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

function sizeOfBase64(data: unknown): string {
  if (typeof data !== 'string') return 'no data';
  const bytes = Math.floor((data.replace(/=+$/, '').length * 3) / 4);
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} kB`;
}
