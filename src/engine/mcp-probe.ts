/**
 * A build's smoke check: talk to a freshly started server over Streamable HTTP the way an MCP
 * client would (initialize, initialized, then the lists) and report what it offers. Plain
 * JSON-RPC over node:http on one kept-alive connection, so the engine does not need the client SDK
 * at run time (node:http costs less than fetch here: no web streams, no undici to load).
 */
import { Agent } from 'node:http';
import { postText, type TextAnswer as Answer } from '../shared/http.js';

export interface ProbeOptions {
  mcpUrl: string;
  /** bearer token of the MCP endpoint, when the definition declares `auth` */
  token?: string;
  /** which lists to ask for */
  lists: { tools: boolean; resources: boolean; prompts: boolean };
  timeoutMs: number;
  clientVersion: string;
}

export interface ProbeResult {
  serverName: string | undefined;
  protocolVersion: string;
  tools: string[];
  resources: string[];
  prompts: string[];
}

/** The server did not answer as an MCP server should; `message` says what it did. */
export class ProbeError extends Error {
  override readonly name = 'ProbeError';
}

const PROTOCOL_VERSION = '2025-06-18';

export async function probeMcp(options: ProbeOptions): Promise<ProbeResult> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let nextId = 1;
  // one connection for the whole exchange, closed at the end
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const call = async (method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const id = nextId++;
      const response = await send({ jsonrpc: '2.0', id, method, params });
      const message = readMessage(response, id);
      if (message.error !== undefined) {
        const error = message.error as { message?: unknown; code?: unknown };
        const text = typeof error.message === 'string' ? error.message : 'unknown error';
        throw new ProbeError(`${method} failed: ${text} (code ${JSON.stringify(error.code)})`);
      }
      if (message.result === null || typeof message.result !== 'object')
        throw new ProbeError(`${method} answered without a result`);
      return message.result as Record<string, unknown>;
    };

    const send = async (body: unknown): Promise<Answer> => {
      let response: Answer;
      try {
        response = await postText(options.mcpUrl, { headers, body: JSON.stringify(body), agent, signal });
      } catch (error) {
        if (signal.aborted) throw new ProbeError(`the server did not answer within ${options.timeoutMs / 1000} s`);
        throw new ProbeError(`could not reach the server's MCP endpoint: ${(error as Error).message}`);
      }
      if (response.status >= 400) {
        const text = response.text;
        throw new ProbeError(
          `the MCP endpoint answered HTTP ${response.status}${text === '' ? '' : `: ${text.slice(0, 300)}`}`,
        );
      }
      return response;
    };

    const init = await call('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'mcpctl-build-check', version: options.clientVersion },
    });
    const protocolVersion = typeof init.protocolVersion === 'string' ? init.protocolVersion : PROTOCOL_VERSION;
    headers['mcp-protocol-version'] = protocolVersion;
    const info = init.serverInfo as { name?: unknown } | undefined;
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' });

    const list = async (method: string, field: string, key: string): Promise<string[]> => {
      const names: string[] = [];
      let cursor: string | undefined;
      // Bounded: a server that keeps handing out cursors is not followed forever.
      for (let page = 0; page < 100; page += 1) {
        const result = await call(method, cursor === undefined ? {} : { cursor });
        const items = result[field];
        if (!Array.isArray(items)) throw new ProbeError(`${method} answered without a ${field} list`);
        for (const item of items)
          if (item !== null && typeof item === 'object') names.push(String((item as Record<string, unknown>)[key]));
        cursor = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined;
        if (cursor === undefined) break;
      }
      return names;
    };

    return {
      serverName: typeof info?.name === 'string' ? info.name : undefined,
      protocolVersion,
      tools: options.lists.tools ? await list('tools/list', 'tools', 'name') : [],
      resources: options.lists.resources ? await list('resources/list', 'resources', 'uri') : [],
      prompts: options.lists.prompts ? await list('prompts/list', 'prompts', 'name') : [],
    };
  } finally {
    agent.destroy();
  }

  function readMessage(response: Answer, id: number): Record<string, unknown> {
    const session = response.headers['mcp-session-id'];
    if (typeof session === 'string') headers['mcp-session-id'] = session;
    const type = response.headers['content-type'] ?? '';
    const text = response.text;
    const candidates: unknown[] = [];
    if (type.includes('text/event-stream')) {
      for (const event of text.split(/\r?\n\r?\n/)) {
        const data = event
          .split(/\r?\n/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data !== '') candidates.push(parse(data));
      }
    } else {
      const parsed = parse(text);
      if (Array.isArray(parsed)) candidates.push(...(parsed as unknown[]));
      else candidates.push(parsed);
    }
    const message = candidates.find((c) => c !== null && typeof c === 'object' && (c as { id?: unknown }).id === id);
    if (message === undefined) throw new ProbeError('the MCP endpoint answered without a JSON-RPC response');
    return message as Record<string, unknown>;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProbeError(`the MCP endpoint answered something that is not JSON: ${text.slice(0, 200)}`);
  }
}
