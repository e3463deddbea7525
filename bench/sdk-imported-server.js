// A bare node:http server (as bench/bare-http-server.js) in a process that has imported the MCP SDK
// and built nothing with it: what loading the SDK (and zod, which it imports) alone costs an idle
// process. Prints {"event":"listening","port":N}.
import { createServer } from 'node:http';
import '@modelcontextprotocol/server';

const http = createServer((_req, res) => res.writeHead(204).end());
http.listen(0, '127.0.0.1', () =>
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: http.address().port })}\n`),
);
process.once('SIGTERM', () => (http.closeAllConnections(), http.close()));
