// The floor of any server on Node: a bare node:http server that answers nothing but 204, with no
// MCP SDK, no zod and no application code. Prints {"event":"listening","port":N}.
import { createServer } from 'node:http';

const http = createServer((_req, res) => res.writeHead(204).end());
http.listen(0, '127.0.0.1', () =>
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: http.address().port })}\n`),
);
process.once('SIGTERM', () => (http.closeAllConnections(), http.close()));
