/**
 * The tools of an MCP server as `mcpctl tools` shows them: each name with its title, its description
 * wrapped to the terminal, and its arguments with their types, limits and required marks. What the
 * server wrote is shown with its control characters as text (the Printer does that).
 */
import type { Printer } from '../output.js';
import type { ArgumentSchema } from '../steps/tool-arguments.js';
import { plural, shellQuote } from './format.js';

/** The part of a listed tool this reads. */
export interface ListedTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: object | undefined;
  annotations?: { title?: string | undefined } | undefined;
}

/** A property of an input schema, as far as a person choosing a value needs it. */
interface PropertySchema extends ArgumentSchema {
  description?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

export function printTools(p: Printer, label: string, tools: readonly ListedTool[], width: number): void {
  p.success(`${label} offers ${plural(tools.length, 'tool')}`);
  for (const tool of tools) {
    p.line();
    const title = tool.title ?? tool.annotations?.title;
    p.line(
      title === undefined || title === tool.name ? p.style.bold(tool.name) : `${p.style.bold(tool.name)}  ${title}`,
    );
    if (tool.description !== undefined && tool.description.trim() !== '') {
      for (const line of wrapWords(tool.description.trim(), width - 2)) p.line(`  ${line}`);
    }
    printArguments(p, tool.inputSchema ?? {}, width);
  }
  if (tools.length > 0) {
    p.line();
    p.next(`call one: mcpctl call ${shellQuote(label)} ${tools[0]!.name} --arg key=value …`);
  }
}

function printArguments(p: Printer, schema: ArgumentSchema, width: number): void {
  const properties = Object.entries(schema.properties ?? {}) as Array<[string, PropertySchema]>;
  if (properties.length === 0) {
    p.line(p.style.dim('  no arguments'));
    return;
  }
  const required = new Set(schema.required ?? []);
  const rows = properties.map(([key, property]) => ({
    key,
    type: `${typeText(property)}${required.has(key) ? ', required' : ''}`,
    about: aboutText(property),
  }));
  const keyWidth = Math.max(...rows.map((row) => row.key.length));
  const typeWidth = Math.max(...rows.map((row) => row.type.length));
  const indent = 2 + keyWidth + 2 + typeWidth + 2;
  for (const row of rows) {
    const head = `  ${row.key.padEnd(keyWidth)}  ${row.type.padEnd(typeWidth)}`;
    const type = row.type.endsWith(', required') ? p.style.bold(head) : head;
    const [first = '', ...rest] = row.about === '' ? [''] : wrapWords(row.about, Math.max(20, width - indent));
    p.line(`${type}  ${p.style.dim(first)}`.trimEnd());
    for (const line of rest) p.line(`${' '.repeat(indent)}${p.style.dim(line)}`);
  }
}

/** `number`, `integer`, `list of string`, `string | null`… */
export function typeText(property: PropertySchema): string {
  const types = property.type === undefined ? [] : Array.isArray(property.type) ? property.type : [property.type];
  if (types.length === 0) return property.enum !== undefined ? 'one of' : 'any';
  return types
    .map((type) =>
      type === 'array' && property.items?.type !== undefined ? `list of ${typeText(property.items)}` : type,
    )
    .join(' | ');
}

/** The description, then the allowed values, the range and the default. */
function aboutText(property: PropertySchema): string {
  const parts: string[] = [];
  if (property.description !== undefined && property.description.trim() !== '') parts.push(property.description.trim());
  if (property.enum !== undefined) parts.push(`one of ${property.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  if (property.minimum !== undefined && property.maximum !== undefined)
    parts.push(`${property.minimum} to ${property.maximum}`);
  else if (property.minimum !== undefined) parts.push(`at least ${property.minimum}`);
  else if (property.maximum !== undefined) parts.push(`at most ${property.maximum}`);
  if (property.default !== undefined) parts.push(`default ${JSON.stringify(property.default)}`);
  return parts.join('; ');
}

/** Text broken into lines of at most `width` characters, at spaces; a longer word keeps its own line. */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter((w) => w !== '')) {
      if (line === '') line = word;
      else if (line.length + 1 + word.length <= width) line += ` ${word}`;
      else {
        lines.push(line);
        line = word;
      }
    }
    lines.push(line);
  }
  return lines;
}
