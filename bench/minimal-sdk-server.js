// The reference server: written directly on the MCP SDK, one tool, stateless Streamable HTTP
// (a server per request, its schema compiled once). Prints {"event":"listening","port":N}.
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const schema = fromJsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
const handler = toNodeHandler(
  createMcpHandler(() => {
    const server = new McpServer({ name: 'minimal', version: '1.0.0' });
    server.registerTool('echo', { description: 'echo', inputSchema: schema }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    return server;
  }),
);
const http = createServer((req, res) => void handler(req, res));
http.listen(0, '127.0.0.1', () =>
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: http.address().port })}\n`),
);
process.once('SIGTERM', () => (http.closeAllConnections(), http.close()));
