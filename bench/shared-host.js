#!/usr/bin/env node
// One process serving several bundles, each its own runtime (its own compiled definition, SDK
// servers, HTTP server and port): what a shared runtime for declarative staging servers would be.
// bench/shared-runtime.js starts it. Usage: node bench/shared-host.js <bundle dir>…
// Prints {"event":"listening","ports":[…]} once every bundle listens; stops on SIGTERM.
import { createServer } from 'node:http';
import { readBundle } from '../dist/runtime/host/bundle.js';
import { createRuntime } from '../dist/runtime/server/server.js';

const servers = [];
for (const dir of process.argv.slice(2)) {
  const bundle = await readBundle(dir);
  const runtime = await createRuntime(bundle.definition, { dir: bundle.filesDir });
  const http = createServer(runtime.handler);
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  servers.push(http);
}
process.stdout.write(
  `${JSON.stringify({ event: 'listening', port: servers[0]?.address().port, ports: servers.map((s) => s.address().port) })}\n`,
);
process.once('SIGTERM', () => {
  for (const http of servers) {
    http.closeAllConnections();
    http.close();
  }
  process.exit(0);
});
