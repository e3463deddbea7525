/**
 * A server's definition as `GET /v1/servers/:mcp_id/definition` gives it, read into what the server
 * page shows, tolerant of fields a service leaves out; and the names the page gives its items. Pure.
 */

export type ItemKind = 'tool' | 'resource' | 'prompt';

/** One tool, resource or prompt, with what the page shows of it. */
export interface DefinedItem {
  kind: ItemKind;
  /** the tool or prompt name, the resource URI */
  key: string;
  /** a resource's name, a tool's or prompt's title */
  label: string | undefined;
  description: string | undefined;
  /** the handler's type (tools) */
  handler: string | undefined;
  /** a resource's media type */
  mimeType: string | undefined;
  /** JSON shown as it is: inputSchema, outputSchema, annotations, arguments */
  details: Array<{ label: string; value: unknown }>;
  line: number | undefined;
  column: number | undefined;
}

export interface ServerDefinition {
  mcpId: string;
  name: string;
  version: string | undefined;
  description: string | undefined;
  file: string | undefined;
  tools: DefinedItem[];
  resources: DefinedItem[];
  prompts: DefinedItem[];
}

type Loose = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const position = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
const object = (value: unknown): Loose | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Loose) : undefined;

/** The fields of an item shown as JSON, in this order, when the service sent them. */
const DETAILS: Record<ItemKind, Array<[field: string, label: string]>> = {
  tool: [
    ['inputSchema', 'Input schema'],
    ['outputSchema', 'Output schema'],
    ['annotations', 'Annotations'],
  ],
  resource: [],
  prompt: [['arguments', 'Arguments']],
};

function readItems(value: unknown, kind: ItemKind): DefinedItem[] {
  if (!Array.isArray(value)) return [];
  const keyField = kind === 'resource' ? 'uri' : 'name';
  return value
    .map(object)
    .filter((item): item is Loose => item !== undefined && typeof item[keyField] === 'string')
    .map((item) => ({
      kind,
      key: item[keyField] as string,
      label: kind === 'resource' ? text(item.name) : text(item.title),
      description: text(item.description),
      handler: text(item.handler),
      mimeType: text(item.mimeType),
      details: DETAILS[kind].flatMap(([field, label]) =>
        item[field] === undefined ? [] : [{ label, value: item[field] }],
      ),
      line: position(item.line),
      column: position(item.column),
    }));
}

/** The answer of `GET /v1/servers/:mcp_id/definition`. */
export function toServerDefinition(data: unknown): ServerDefinition {
  const d = object(data) ?? {};
  return {
    mcpId: text(d.mcp_id) ?? '',
    name: text(d.name) ?? text(d.mcp_id) ?? 'server',
    version: text(d.version) || undefined,
    description: text(d.description),
    file: text(d.file) || undefined,
    tools: readItems(d.tools, 'tool'),
    resources: readItems(d.resources, 'resource'),
    prompts: readItems(d.prompts, 'prompt'),
  };
}

/**
 * The element id of an item: `tool-<name>`, `resource-<uri>` …, with every character other than a
 * letter, digit, `_` or `-` written as `.<hex>.`, so that any name gives a plain id and two names
 * never give the same one.
 */
export function anchorId(kind: ItemKind, key: string): string {
  const safe = [...key]
    .map((char) => (/^[A-Za-z0-9_-]$/.test(char) ? char : `.${char.codePointAt(0)!.toString(16)}.`))
    .join('');
  return `${kind}-${safe}`;
}

/** `server.yaml:14:5`, `server.yaml:14` or undefined, when the service said where the item is. */
export function placeOf(file: string | undefined, item: Pick<DefinedItem, 'line' | 'column'>): string | undefined {
  if (file === undefined || item.line === undefined) return undefined;
  return item.column === undefined ? `${file}:${item.line}` : `${file}:${item.line}:${item.column}`;
}

/** JSON as people read it: indented by two spaces. */
export function readableJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}
