#!/usr/bin/env node
// Throughput of a built server (serve-bundle from a bundle) against a minimal server written
// directly on the MCP SDK (McpServer, schema compiled once, a server per request), measured in
// the same run: tools/call over loopback HTTP, 20 connections, a fixed time each. Target ≥ 0.9×.
// Usage: node bench/runtime-throughput.js [--seconds 5] [--json]   (needs `npm run build` first)
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout, clearTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const seconds = args.includes('--seconds') ? Number(args[args.indexOf('--seconds') + 1]) : 5;
const asJson = args.includes('--json');
const CONNECTIONS = 20;

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

/** Starts a process and resolves with its port once it prints the listening line; stdout is drained. */
function startProcess(argv, options = {}) {
  const child = spawn(process.execPath, argv, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], ...options });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')} did not start`)), 20_000);
    let port;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (port !== undefined) return;
      try {
        const event = JSON.parse(line);
        if (event.event === 'listening') {
          port = event.port;
          clearTimeout(timer);
          resolve({ port, stop: () => new Promise((done) => (child.once('exit', done), child.kill('SIGTERM'))) });
        }
      } catch {
        // not the listening line
      }
    });
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}`)));
  });
}

/** Sends tools/call from CONNECTIONS loops for `seconds`; returns requests per second. */
async function load(port, name) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { text: 'hello' } } });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    'content-length': Buffer.byteLength(body),
  };
  const once = () =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers, agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  // warm up
  for (let i = 0; i < 200; i++) await once();
  let count = 0;
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < end) {
        await once();
        count += 1;
      }
    }),
  );
  agent.destroy();
  return count / seconds;
}

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
  const minimal = await startProcess(['--input-type=module', '-e', MINIMAL_SERVER]);
  stops.push(minimal.stop);
  const built = await startProcess([join(root, 'dist', 'runtime', 'serve-bundle.js'), '--bundle', dir, '--port', '0']);
  stops.push(built.stop);

  // alternate, so that neither side always runs on a warmer machine
  const reference = [];
  const measured = [];
  for (let round = 0; round < 2; round++) {
    reference.push(await load(minimal.port, 'echo'));
    measured.push(await load(built.port, 'echo'));
  }
  const ref = Math.max(...reference);
  const value = Math.max(...measured);
  const result = { name: 'runtime tools/call throughput', value, unit: 'req/s', reference: ref, referenceName: 'minimal SDK server', ratio: value / ref, target: '≥ 0.9×' };
  if (asJson) process.stdout.write(`${JSON.stringify(result)}\n`);
  else process.stdout.write(`${result.name}: ${value.toFixed(0)} req/s vs ${ref.toFixed(0)} req/s (${result.referenceName}) = ${result.ratio.toFixed(2)}× (target ${result.target})\n`);
} finally {
  for (const stop of stops) await stop();
  rmSync(temp, { recursive: true, force: true });
}
