#!/usr/bin/env node
// A built server (serve-bundle from a bundle) against the minimal server written directly on the
// MCP SDK (bench/minimal-sdk-server.js), measured in the same run:
// - tools/call throughput over loopback HTTP, 20 connections, a fixed time each (target ≥ 1.0×);
// - memory (RSS) of each, idle after start.
// Usage: node bench/runtime-throughput.js [--seconds 5] [--json]   (needs `npm run build` first)
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchArgs, loadMcp, report, rssMb, startProcess } from './load.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { seconds, json: asJson } = benchArgs(5);

const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

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
  const minimal = await startProcess([join(root, 'bench', 'minimal-sdk-server.js')], { cwd: root });
  stops.push(minimal.stop);
  const built = await startProcess([join(root, 'dist', 'runtime', 'serve-bundle.js'), '--bundle', dir, '--port', '0'], { cwd: root });
  stops.push(built.stop);

  await sleep(500); // let both settle after start
  report(
    { name: 'memory (RSS): an idle instance', value: rssMb(built.pid), unit: 'MB', reference: rssMb(minimal.pid), referenceName: 'minimal SDK server' },
    asJson,
  );

  // alternate, so that neither side always runs on a warmer machine
  const reference = [];
  const measured = [];
  for (let round = 0; round < 2; round++) {
    reference.push((await loadMcp({ port: minimal.port, name: 'echo', args: { text: 'hello' }, seconds })).rps);
    measured.push((await loadMcp({ port: built.port, name: 'echo', args: { text: 'hello' }, seconds })).rps);
  }
  report(
    {
      name: 'runtime tools/call throughput',
      value: Math.max(...measured),
      unit: 'req/s',
      reference: Math.max(...reference),
      referenceName: 'minimal SDK server',
      target: '≥ 1.0×',
    },
    asJson,
  );
} finally {
  for (const stop of stops) await stop();
  rmSync(temp, { recursive: true, force: true });
}
