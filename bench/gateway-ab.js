#!/usr/bin/env node
// The engine's CPU per proxied MCP request, two builds against each other (A/B): the HTTP app and the
// gateway of each tree's dist/ in this one process, each on its own loopback port in front of one stub
// instance (a bare node:http server answering a tools/call, in its own process), loaded in alternated
// rounds (A B, B A, …) by the bench's load client (20 connections, in its own process). This process's
// CPU during a round divided by the requests answered is the figure: the instance and the client are
// elsewhere, so a shared, noisy machine moves it less than it moves throughput.
// Usage: node bench/gateway-ab.js ROOT_A ROOT_B [--seconds 3] [--rounds 6] [--traced] [--sse]
//   ROOT_*: a checkout with `npm run build` done (e.g. this tree, and `git worktree add /tmp/base HEAD~1`
//   built). --traced: a development deployment's trace is on (its log lines go nowhere). --sse: the stub
//   answers as the SDK's handler does, an event stream whose headers go out before the event.
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { setImmediate } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { benchArgs, loadMcp, median, startProcess } from './load.js';

const self = fileURLToPath(import.meta.url);
const ANSWER = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hi' }] } });

if (process.argv[2] === '--stub') {
  const sse = process.argv[3] === '--sse';
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!sse)
        return res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) })
          .end(ANSWER);
      // as the SDK's handler answers a POST that accepts both: an event stream, its headers first
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).flushHeaders();
      setImmediate(() => res.end(`event: message\ndata: ${ANSWER}\n\n`));
    });
  });
  server.keepAliveTimeout = 5000; // serve-bundle's
  server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ event: 'listening', port: server.address().port })));
} else if (process.argv[2] === '--client') {
  const [port, seconds] = process.argv.slice(3).map(Number);
  console.log(JSON.stringify(await loadMcp({ port, path: '/d/x/mcp', name: 'echo', args: { text: 'hi' }, seconds })));
} else {
  const [rootA, rootB] = process.argv.slice(2, 4).map((root) => resolve(root));
  const { seconds, rounds } = benchArgs(3, 6);
  const traced = process.argv.includes('--traced');
  const stub = await startProcess([self, '--stub', ...(process.argv.includes('--sse') ? ['--sse'] : [])]);
  const logger = { info() {}, warn() {}, error() {}, debug() {}, child: () => logger };
  const side = async (root) => {
    const { createApp } = await import(`${root}/dist/engine/http/app.js`);
    const { createGateway } = await import(`${root}/dist/engine/gateway/gateway.js`);
    const { newRequestId } = await import(`${root}/dist/engine/ids.js`);
    const attempt = {
      instance: 'i1',
      host: '127.0.0.1',
      port: stub.port,
      sticky: false,
      refused() {},
      answers: async () => true,
      answered() {},
      release() {},
    };
    const upstream = {
      id: 'deploy_x',
      status: 'deployed',
      traced,
      healthReport: () => ({ healthy: true, body: {} }),
      pick: (_request, tried) => (tried.has('i1') ? undefined : attempt),
      safeToRepeat: () => true,
      report() {},
      log() {},
    };
    const routes = {
      byName: (name) => (name === 'x' ? upstream : undefined),
      byDomain: () => undefined,
      inactive: async () => undefined,
    };
    const gateway = createGateway(routes, { limits: { maxBodyBytes: 1 << 20 }, clock: Date.now, newRequestId });
    const deployments = { handleGateway: gateway, servesDomain: () => false };
    const app = createApp({
      store: {},
      builds: {},
      deployments,
      apiKey: 'k'.repeat(32),
      version: '0',
      logger,
      limits: { ratePerSecond: 0 },
    });
    const server = createServer((req, res) => void app(req, res));
    await new Promise((done) => server.listen(0, '127.0.0.1', done));
    return { root, server, gateway, port: server.address().port, us: [] };
  };
  const sides = [await side(rootA), await side(rootB)];
  const load = (s, time) =>
    new Promise((done, fail) => {
      const child = spawn(process.execPath, [self, '--client', String(s.port), String(time)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.on('exit', (code) =>
        code === 0 ? done(JSON.parse(out)) : fail(new Error(`the load client exited with ${code}`)),
      );
    });
  try {
    for (const s of sides) await load(s, 2); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const s of round % 2 === 0 ? sides : [...sides].reverse()) {
        const before = process.cpuUsage();
        const r = await load(s, seconds);
        const cpu = process.cpuUsage(before);
        s.us.push((cpu.user + cpu.system) / r.requests);
      }
    }
    for (const s of sides)
      console.log(
        `${s.root}: engine CPU per request median ${median(s.us).toFixed(1)} µs [${s.us.map((u) => u.toFixed(0)).join(' ')}]`,
      );
    console.log(
      `B/A, median of the paired ratios: ${median(sides[1].us.map((u, i) => u / sides[0].us[i])).toFixed(3)}${traced ? ' (traced)' : ''}`,
    );
  } finally {
    for (const s of sides) {
      s.server.closeAllConnections();
      s.server.close();
      s.gateway.close();
    }
    await stub.stop();
  }
}
