/**
 * The warm-up of a warm runtime process: before it says `warm`, it serves a throwaway definition
 * of its own (one tool) for a moment (initialize, tools/list, a tool call) over a loopback
 * socket that it then closes. V8 compiles a function the first time it runs, so without
 * this the first requests of the real bundle (the build's check, a test's session, a client's
 * first call) would pay for compiling the runtime's, the SDK's and node:http's request path.
 *
 * Nothing is kept: no environment is read or changed (the runtime is given an empty one), the
 * server and its connections are closed, the runtime is closed, and nothing is written to stdout.
 * It costs a warm process about a third more CPU to get ready (≈170 ms here), in the background;
 * resources and prompts are left out, as their share of the first requests is small.
 */
import { createServer } from 'node:http';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postText, type TextAnswer } from '../../shared/http.js';
import { MCP_PATH } from '../constants.js';
import { createJsonLogger } from '../server/logger.js';
import { createRuntime, type RuntimeDefinition } from '../server/server.js';

const DEFINITION: RuntimeDefinition = {
  name: 'warm-up',
  template: 'basic',
  tools: [
    {
      name: 'echo',
      description: 'Echo the text back',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: { type: 'static', content: [{ type: 'text', text: '{{args.text}}' }] },
    },
  ],
};

/** One POST of a JSON-RPC body to the throwaway server, on a connection of its own. */
function post(port: number, body: unknown, headers: Record<string, string>): Promise<TextAnswer> {
  return postText(`http://127.0.0.1:${port}${MCP_PATH}`, {
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
    agent: false,
  });
}

/**
 * Serves the throwaway definition and talks MCP to it once, then closes everything. Resolves
 * whether it worked: a warm-up that fails costs only speed, never the process.
 */
export async function warmUp(): Promise<boolean> {
  let runtime;
  try {
    // its folder is this file's: the definition reads no file (and os.tmpdir() would read TMPDIR)
    runtime = await createRuntime(DEFINITION, {
      dir: dirname(fileURLToPath(import.meta.url)),
      env: {},
      logger: createJsonLogger(() => {}),
      secrets: [],
    });
  } catch {
    return false;
  }
  const server = createServer(runtime.handler);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const init = await post(
      port,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'warm-up', version: '0' } },
      },
      {},
    );
    const headers: Record<string, string> = { 'mcp-protocol-version': '2025-06-18' };
    const session = init.headers['mcp-session-id'];
    if (typeof session === 'string') headers['mcp-session-id'] = session;
    await post(port, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    const calls: Array<[string, Record<string, unknown>]> = [
      ['tools/list', {}],
      ['tools/call', { name: 'echo', arguments: { text: 'warm' } }],
    ];
    let id = 2;
    for (const [method, params] of calls) await post(port, { jsonrpc: '2.0', id: id++, method, params }, headers);
    return init.status === 200;
  } catch {
    return false;
  } finally {
    server.close();
    server.closeAllConnections();
    await runtime.close().catch(() => undefined);
  }
}
