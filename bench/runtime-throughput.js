#!/usr/bin/env node
// A built server (serve-bundle from a bundle) against the minimal server written directly on the
// MCP SDK (bench/minimal-sdk-server.js), measured in the same run:
// - tools/call throughput over loopback HTTP, 20 connections, in alternated rounds after an equal
//   warm-up, the median of the rounds' ratios (target ≥ 1.0×), for a stateless call of each
//   protocol revision (2025-11-25 without a session, 2026-07-28);
// - memory (RSS) of each, idle for 45 s after start, beside two floors: a bare node:http server
//   (bench/bare-http-server.js), and the same in a process that has imported the SDK
//   (bench/sdk-imported-server.js): what any process that serves MCP with the SDK holds at least.
// With two CPUs or more, the load generator runs on one and both servers on another (taskset).
// Usage: node bench/runtime-throughput.js [--seconds 1.5] [--rounds 15] [--json]   (needs `npm run build` first)
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  alternate,
  benchArgs,
  loadMcp,
  median,
  pinToCpu,
  report,
  rollupMb,
  rssMb,
  startEchoInstance,
  startProcess,
} from './load.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
// Many short alternated rounds (15 of 1.5 s a side): on a shared 2-core machine the speed of
// both sides drifts within seconds, and a ratio of back-to-back pairs follows it better than a few
// long rounds (5 of 4 s swung ±10% run to run; with 2, ±15%).
const { seconds, rounds, json: asJson } = benchArgs(1.5, 15);
/** how long both servers sit idle before their memory is read */
const IDLE_MS = 45_000;

const temp = mkdtempSync(join(tmpdir(), 'mcpctl-bench-runtime-'));
const stops = [];
try {
  const minimal = await startProcess([join(root, 'bench', 'minimal-sdk-server.js')], { cwd: root });
  stops.push(minimal.stop);
  const built = await startEchoInstance(root, temp);
  stops.push(built.stop);
  // the floors: a bare node:http server, and the same in a process that has imported the SDK
  const floors = [];
  for (const file of ['bare-http-server.js', 'sdk-imported-server.js']) {
    const floor = await startProcess([join(root, 'bench', file)], { cwd: root });
    stops.push(floor.stop);
    floors.push(floor);
  }
  const [bare, sdkOnly] = floors;

  // Idle: V8's memory reducer gives back the young generation the start grew to 2 × 8 MB once a
  // process has allocated next to nothing for a while (about 15–20 s after start), in both.
  await sleep(IDLE_MS);
  const rows = [
    ['memory (RSS): an idle instance, 45 s after start', rssMb(built.pid), rssMb(minimal.pid), '≤ 0.8×'],
    [
      'anonymous memory of an idle instance (RSS without the shared node binary)',
      rollupMb(built.pid, 'Anonymous'),
      rollupMb(minimal.pid, 'Anonymous'),
    ],
    ['memory (RSS): a bare Node HTTP server, no SDK, 45 s after start', rssMb(bare.pid), rssMb(minimal.pid)],
    ['memory (RSS): the same with the MCP SDK imported, serving nothing', rssMb(sdkOnly.pid), rssMb(minimal.pid)],
  ];
  for (const [name, value, reference, target] of rows)
    report(
      {
        name,
        value,
        unit: 'MB',
        reference,
        referenceName: 'minimal SDK server',
        ...(target === undefined ? {} : { target }),
      },
      asJson,
    );
  for (const floor of floors) await floor.stop();
  stops.splice(-floors.length);

  // The load generator (this process) on CPU 0, both servers on CPU 1, where the machine allows.
  if (pinToCpu(process.pid, 0)) for (const server of [minimal, built]) pinToCpu(server.pid, 1);

  // Alternated rounds after an equal warm-up of both; the ratio is the median of the rounds' ratios
  // (each pair measured back to back), the values the medians of each side.
  // Each revision's stateless tools/call: 2025-11-25 without a session, and 2026-07-28.
  for (const [revision, name] of [
    ['2025', 'runtime tools/call throughput'],
    ['2026', 'runtime tools/call throughput, 2026-07-28'],
  ]) {
    const load = (server, warm) =>
      loadMcp({
        port: server.port,
        name: 'echo',
        args: { text: 'hello' },
        seconds: warm ? Math.min(2, seconds) : seconds,
        revision,
      });
    const pairs = alternate(rounds, (side, warm) => load(side === 'a' ? minimal : built, warm));
    const { a: reference, b: measured, ratio } = await pairs;
    report(
      {
        name,
        value: median(measured.map((r) => r.rps)),
        unit: 'req/s',
        reference: median(reference.map((r) => r.rps)),
        referenceName: 'minimal SDK server',
        ratio,
        target: '≥ 1.0×',
      },
      asJson,
    );
  }
} finally {
  for (const stop of stops) await stop();
  rmSync(temp, { recursive: true, force: true });
}
