#!/usr/bin/env node
// Throughput of a built server (serve-bundle from a bundle) against a minimal server written
// directly on the MCP SDK (McpServer, schema compiled once, a server per request), measured in
// the same run: tools/call over loopback HTTP, 20 connections, a fixed time each. Target ≥ 0.9×.
// Usage: node bench/runtime-throughput.js [--seconds 5] [--json]   (needs `npm run build` first)
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs, loadMcp, report, startProcess } from './load.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { seconds, json: asJson } = benchArgs(5);

const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

const MINIMAL_SERVER = `
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
const schema = fromJsonSchema(${JSON.stringify(inputSchema)});
const handler = toNodeHandler(createMcpHandler(() => {
  const server = new McpServer({ name: 'minimal', version: '1.0.0' });
  server.registerTool('echo', { description: 'echo', inputSchema: schema }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}));
const http = createServer((req, res) => void handler(req, res));
http.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ event: 'listening', port: http.address().port }) + '\\n'));
process.once('SIGTERM', () => { http.closeAllConnections(); http.close(); });
`;

const temp = mkdtempSync(join(tmpdir(), 'mcpctl-bench-runtime-'));
const stops = [];
try {
  const { writeBundle } = await import(join(root, 'dist', 'runtime', 'bundle.js'));
  const { dir } = await writeBundle(
    {
      name: 'bench',
      template: 'basic',
      tools: [{ name: 'echo', description: 'echo', inputSchema, handler: { type: 'static', content: [{ type: 'text', text: '{{args.text}}' }] } }],
    },
    temp,
  );
  const minimal = await startProcess(['--input-type=module', '-e', MINIMAL_SERVER], { cwd: root });
  stops.push(minimal.stop);
  const built = await startProcess([join(root, 'dist', 'runtime', 'serve-bundle.js'), '--bundle', dir, '--port', '0'], { cwd: root });
  stops.push(built.stop);

  // alternate, so that neither side always runs on a warmer machine
  const reference = [];
  const measured = [];
  for (let round = 0; round < 2; round++) {
    reference.push((await loadMcp({ port: minimal.port, name: 'echo', args: { text: 'hello' }, seconds })).rps);
    measured.push((await loadMcp({ port: built.port, name: 'echo', args: { text: 'hello' }, seconds })).rps);
  }
  const ref = Math.max(...reference);
  const value = Math.max(...measured);
  const result = {
    name: 'runtime tools/call throughput',
    value,
    unit: 'req/s',
    reference: ref,
    referenceName: 'minimal SDK server',
    ratio: value / ref,
    target: '≥ 0.9×',
  };
  report(result, asJson);
} finally {
  for (const stop of stops) await stop();
  rmSync(temp, { recursive: true, force: true });
}
