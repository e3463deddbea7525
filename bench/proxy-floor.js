#!/usr/bin/env node
// The floor under the gateway rows: what the least a Node HTTP proxy can do costs on this machine.
// A built server (serve-bundle, as a deployment's instance) is called directly, and through a bare
// proxy in its own process: node:http's server in front of one undici Pool to the instance (the
// engine's own pair), which only passes each request and its answer on (no routing, metrics, logs,
// retries or request ids). Alternated rounds, 20 connections, as the gateway rows in engine.js.
// If the bare proxy's throughput ratio is below the gateway's target, the target is out of reach of
// any proxy written in Node on this machine, whatever the engine does per request.
// Usage: node bench/proxy-floor.js [--seconds 4] [--rounds 5] [--json]   (needs `npm run build` first)
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alternate, benchArgs, cpuMs, loadMcp, median, report, startEchoInstance, startProcess } from './load.js';

const self = fileURLToPath(import.meta.url);
const root = dirname(dirname(self));

if (process.argv[2] === '--proxy') {
  const { Pool } = await import('undici');
  const target = Number(process.argv[3]);
  const pool = new Pool(`http://127.0.0.1:${target}`, {
    connections: 256,
    pipelining: 1,
    keepAliveTimeout: 4_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const headers = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i].toLowerCase();
        if (name !== 'host' && name !== 'connection' && name !== 'content-length')
          headers.push(name, req.rawHeaders[i + 1]);
      }
      headers.push('host', `127.0.0.1:${target}`);
      pool.dispatch(
        { method: req.method, path: req.url, headers, body: Buffer.concat(chunks) },
        {
          onRequestStart() {},
          onResponseStart(_controller, status, answer) {
            if (status < 200) return;
            const out = {};
            for (const [name, value] of Object.entries(answer))
              if (name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding') out[name] = value;
            res.writeHead(status, out);
          },
          onResponseData(_controller, chunk) {
            res.write(chunk);
          },
          onResponseEnd() {
            res.end();
          },
          onResponseError(_controller, error) {
            if (!res.headersSent) res.writeHead(502);
            res.end(String(error.message));
          },
        },
      );
    });
  });
  server.keepAliveTimeout = 5_000;
  server.listen(0, '127.0.0.1', () =>
    process.stdout.write(`${JSON.stringify({ event: 'listening', port: server.address().port })}\n`),
  );
  process.once('SIGTERM', () => (server.closeAllConnections(), server.close(), pool.destroy()));
} else {
  const { seconds, rounds, json } = benchArgs(4, 5);
  const temp = mkdtempSync(join(tmpdir(), 'mcpctl-bench-floor-'));
  const stops = [];
  try {
    const instance = await startEchoInstance(root, temp);
    stops.push(instance.stop);
    const proxy = await startProcess([self, '--proxy', String(instance.port)], { cwd: root });
    stops.push(proxy.stop);
    const cpu = { proxy: 0, via: 0 };
    const {
      a: direct,
      b: via,
      ratio,
    } = await alternate(rounds, async (side, warm) => {
      const before = cpuMs(proxy.pid);
      const r = await loadMcp({
        port: side === 'a' ? instance.port : proxy.port,
        name: 'echo',
        args: { text: 'hi' },
        seconds: warm ? 1 : seconds,
      });
      if (!warm && side === 'b') {
        cpu.proxy += cpuMs(proxy.pid) - before;
        cpu.via += r.requests;
      }
      return r;
    });
    const row = (name, value, unit, reference, referenceName, extra = {}) =>
      report({ name, value, unit, reference, referenceName, ...extra }, json);
    row(
      'bare Node proxy tools/call throughput, 20 connections',
      median(via.map((r) => r.rps)),
      'req/s',
      median(direct.map((r) => r.rps)),
      'the instance called directly',
      {
        ratio,
      },
    );
    row(
      'bare Node proxy p50 latency added',
      median(via.map((r, i) => r.p50 - direct[i].p50)),
      'ms',
      median(direct.map((r) => r.p50)),
      'direct p50',
    );
    row('bare Node proxy: CPU per request', (1000 * cpu.proxy) / cpu.via, 'µs', undefined, undefined);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    rmSync(temp, { recursive: true, force: true });
  }
}
