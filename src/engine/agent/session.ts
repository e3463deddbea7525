/**
 * The agent's connection to the server under test: the official MCP client over Streamable
 * HTTP, the lists read once, and every tool call and resource read recorded for the result.
 */
import type * as ClientSdkModule from '@modelcontextprotocol/client';
import { FAILURE_META } from '../../api/guidance.js';
import type {
  AgentSession,
  Catalog,
  InputSchema,
  ResourceOutcome,
  ToolCallRecord,
  ToolOutcome,
} from './agent-types.js';
import { jsonInText } from '../../shared/json-text.js';
import { isSecretName } from '../../shared/secret-name.js';

export interface OpenSessionOptions {
  mcpUrl: string;
  /** sent as X-MCP-User-Id: the caller, for per-user resources */
  userId?: string | undefined;
  /** the bearer token of a server with `auth` */
  token?: string | undefined;
  clientVersion: string;
  callTimeoutMs: number;
  signal: AbortSignal;
}

export interface RecordingSession extends AgentSession {
  calls: ToolCallRecord[];
  /** distinct URIs read successfully, in order */
  resourcesRead: string[];
  /** what the agent could not call, and the inputs it lacked */
  unmet: Array<{ tool: string; missing: string[]; unmapped?: boolean }>;
  close(): Promise<void>;
}

const ERROR_CHARS = 500;
const REDACTED = '[redacted]';

type ClientSdk = typeof ClientSdkModule;
let clientSdk: Promise<ClientSdk> | undefined;
/** The MCP client SDK, loaded once (the test service loads it ahead of the first run). */
export function loadClientSdk(): Promise<ClientSdk> {
  return (clientSdk ??= import('@modelcontextprotocol/client'));
}

export async function openSession(options: OpenSessionOptions): Promise<RecordingSession> {
  const { Client, StreamableHTTPClientTransport } = await loadClientSdk();
  const headers: Record<string, string> = {};
  if (options.userId !== undefined) headers['X-MCP-User-Id'] = options.userId;
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  const client = new Client({ name: 'mcpctl-test-agent', version: options.clientVersion });
  const transport = new StreamableHTTPClientTransport(new URL(options.mcpUrl), { requestInit: { headers } });
  const requestOptions = () => ({ timeout: options.callTimeoutMs, signal: options.signal });
  await client.connect(transport, requestOptions());

  try {
    const capabilities = client.getServerCapabilities() ?? {};
    const catalog: Catalog = { instructions: client.getInstructions(), tools: [], resources: [], templates: [] };
    if (capabilities.tools !== undefined) {
      catalog.tools = (await client.listTools(undefined, requestOptions())).tools.map((tool) => ({
        name: tool.name,
        title: tool.title ?? tool.annotations?.title,
        description: tool.description,
        inputSchema: tool.inputSchema as InputSchema,
        outputSchema: tool.outputSchema,
      }));
    }
    if (capabilities.resources !== undefined) {
      catalog.resources = (await client.listResources(undefined, requestOptions())).resources.map((r) => ({
        uri: r.uri,
        name: r.name,
        title: r.title,
        description: r.description,
        mimeType: r.mimeType,
      }));
      catalog.templates = (await client.listResourceTemplates(undefined, requestOptions())).resourceTemplates.map(
        (t) => ({
          uriTemplate: t.uriTemplate,
          name: t.name,
          title: t.title,
          description: t.description,
          mimeType: t.mimeType,
        }),
      );
    }

    const calls: ToolCallRecord[] = [];
    const resourcesRead: string[] = [];
    const unmet: Array<{ tool: string; missing: string[]; unmapped?: boolean }> = [];
    const callTool = async (name: string, args: Record<string, unknown>): Promise<ToolOutcome> => {
      const started = performance.now();
      const record = (ok: boolean, error?: string, failure?: ToolCallRecord['failure']) => {
        calls.push({
          name,
          ok,
          arguments: redactArguments(args) as Record<string, unknown>,
          ...(error === undefined ? {} : { error: error.slice(0, ERROR_CHARS) }),
          duration_ms: Math.round((performance.now() - started) * 10) / 10,
          ...(failure === undefined ? {} : { failure }),
        });
      };
      try {
        const result = await client.callTool({ name, arguments: args }, requestOptions());
        const text = textOfContent(result.content);
        if (result.isError === true) {
          record(false, text === '' ? 'the tool answered with an error and no text' : text, failureOf(result._meta));
          return { ok: false, text };
        }
        record(true);
        const data = result.structuredContent ?? jsonInText(text);
        return { ok: true, text, ...(data === undefined ? {} : { data }) };
      } catch (error) {
        const message = messageOf(error);
        record(false, message);
        return { ok: false, text: message };
      }
    };
    const readResource = async (uri: string): Promise<ResourceOutcome> => {
      try {
        const result = await client.readResource({ uri }, requestOptions());
        if (!resourcesRead.includes(uri)) resourcesRead.push(uri);
        return { ok: true, text: result.contents.map(textOfResourceContent).join('\n') };
      } catch (error) {
        return { ok: false, text: messageOf(error) };
      }
    };
    return {
      catalog,
      calls,
      resourcesRead,
      unmet,
      callTool,
      readResource,
      recordRejectedCall: (name, error) =>
        calls.push({
          name,
          ok: false,
          error: error.slice(0, ERROR_CHARS),
          duration_ms: 0,
          failure: { kind: 'arguments' },
        }),
      noteUnmet: (tool, missing, unmapped) =>
        void unmet.push({ tool, missing: [...missing], ...(unmapped === true ? { unmapped } : {}) }),
      close: () => client.close().catch(() => {}),
    };
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
}

/**
 * The arguments as the result records them (and the engine stores them): a value under a key that
 * names a secret (a token, a password, an API key) is `[redacted]`, as in every log of the engine,
 * so a stored run never holds what a model was given to pass on.
 */
export function redactArguments(value: unknown, depth = 0): unknown {
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactArguments(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    copy[key] = isSecretName(key) ? REDACTED : redactArguments(item, depth + 1);
  return copy;
}

/** How the server says the call failed, in the result's `_meta`, when it says. */
function failureOf(meta: unknown): ToolCallRecord['failure'] {
  const failure = (meta as Record<string, unknown> | undefined)?.[FAILURE_META];
  if (failure === null || typeof failure !== 'object' || typeof (failure as { kind?: unknown }).kind !== 'string')
    return undefined;
  const { kind, status, exit_code: exitCode, signal } = failure as Record<string, unknown>;
  return {
    kind: kind as string,
    ...(typeof status === 'number' ? { status } : {}),
    ...(typeof exitCode === 'number' ? { exit_code: exitCode } : {}),
    ...(typeof signal === 'string' ? { signal } : {}),
  };
}

function textOfContent(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((item: unknown) => {
      const block = (item ?? {}) as Record<string, unknown>;
      switch (block.type) {
        case 'text':
          return typeof block.text === 'string' ? block.text : '';
        case 'image':
        case 'audio':
          return `[${block.type} ${stringOf(block.mimeType)}]`;
        case 'resource':
          return textOfResourceContent(block.resource);
        case 'resource_link':
          return `[resource ${stringOf(block.uri)}]`;
        default:
          return '';
      }
    })
    .filter((text) => text !== '')
    .join('\n');
}

function textOfResourceContent(content: unknown): string {
  const item = (content ?? {}) as Record<string, unknown>;
  if (typeof item.text === 'string') return item.text;
  if (typeof item.blob === 'string')
    return `[binary ${stringOf(item.mimeType) || 'content'}, ${Math.floor((item.blob.length * 3) / 4)} bytes]`;
  return '';
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
