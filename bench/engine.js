#!/usr/bin/env node
// The embedded engine, driven through the real CLI in a temporary MCPCTL_HOME:
// - build latency (`mcpctl build`) against starting the same bundle directly (serve-bundle to listening);
// - deploy latency (`mcpctl deploy --env production`, two instances) against the same direct start;
// - test latency with the offline agent (`mcpctl test`) against the same direct start;
// - gateway overhead: tools/call throughput through the engine's gateway against the same instance
//   called directly.
// Usage: node bench/engine.js [--seconds 5] [--json]   (needs `npm run build` first)
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchArgs, loadMcp, report, startProcess } from './load.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, 'bin', 'mcpctl.js');
const { seconds, json } = benchArgs(5);
const home = mkdtempSync(join(tmpdir(), 'mcpctl-bench-engine-'));
const env = { ...process.env, MCPCTL_HOME: home, XDG_CONFIG_HOME: join(home, 'config'), MCPCTL_RATE_LIMIT: '0', CI: 'true' };
delete env.MCPCTL_API_URL;
delete env.MCPCTL_API_KEY;

function mcpctl(...args) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [bin, '--json', ...args], { env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`mcpctl ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-800)}`);
  return { ms, data: JSON.parse(r.stdout) };
}

function definition(name) {
  const file = join(home, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      'template: basic',
      'tools:',
      '  - name: echo',
      '    description: Echo the text back',
      '    inputSchema: { type: object, properties: { text: { type: string } }, required: [text] }',
      '    handler: { type: static, content: [ { type: text, text: "{{args.text}}" } ] }',
      '',
    ].join('\n'),
  );
  return file;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

try {
  mcpctl('engine', 'start');
  // build latency: a new definition each time, so every build is a real one
  const builds = [];
  let last;
  for (let i = 0; i < 5; i++) {
    const r = mcpctl('build', definition(`bench-${i}`));
    builds.push(r.ms);
    last = r.data;
  }
  // reference: the same bundle started directly, spawn to listening
  const { readdirSync } = await import('node:fs');
  const bundleDir = join(
    home,
    'bundles',
    readdirSync(join(home, 'bundles')).find((d) => !d.startsWith('.')),
  );
  const starts = [];
  for (let i = 0; i < 5; i++) {
    const t = process.hrtime.bigint();
    const p = await startProcess([join(root, 'dist', 'runtime', 'serve-bundle.js'), '--bundle', bundleDir, '--port', '0']);
    starts.push(Number(process.hrtime.bigint() - t) / 1e6);
    await p.stop();
  }
  const direct = median(starts);
  report(
    {
      name: 'build latency (mcpctl build)',
      value: median(builds),
      unit: 'ms',
      reference: direct,
      referenceName: 'one server process start',
      ratio: median(builds) / direct,
      target: '≤ 3.0×',
    },
    json,
  );

  // the offline agent: a fresh server process, an MCP session, planning, one tool call
  const tests = [];
  for (let i = 0; i < 5; i++) tests.push(mcpctl('test', last.mcp_id, '-m', 'echo the text "hello"').ms);
  report(
    {
      name: 'test latency (mcpctl test, offline agent)',
      value: median(tests),
      unit: 'ms',
      reference: direct,
      referenceName: 'one server process start',
      ratio: median(tests) / direct,
      target: '≤ 4.0×',
    },
    json,
  );

  const deploy = mcpctl('deploy', last.mcp_id, '--env', 'production');
  report(
    {
      name: 'deploy latency (production, 2 instances)',
      value: deploy.ms,
      unit: 'ms',
      reference: direct,
      referenceName: 'one server process start',
      ratio: deploy.ms / direct,
      target: '≤ 4.0×',
    },
    json,
  );

  // gateway overhead on a one-instance development deployment
  const dev = mcpctl('deploy', last.mcp_id, '--env', 'development').data;
  const gateway = new URL(dev.url);
  const instancePort = dev.instances?.[0]?.port;
  if (instancePort === undefined) throw new Error('the deployment does not show its instance port');
  const direct1 = await loadMcp({ port: instancePort, name: 'echo', args: { text: 'hi' }, seconds });
  const via1 = await loadMcp({ port: Number(gateway.port), path: `${gateway.pathname}/mcp`, name: 'echo', args: { text: 'hi' }, seconds });
  const direct2 = await loadMcp({ port: instancePort, name: 'echo', args: { text: 'hi' }, seconds });
  const via2 = await loadMcp({ port: Number(gateway.port), path: `${gateway.pathname}/mcp`, name: 'echo', args: { text: 'hi' }, seconds });
  const ref = Math.max(direct1.rps, direct2.rps);
  const val = Math.max(via1.rps, via2.rps);
  report(
    {
      name: 'gateway tools/call throughput',
      value: val,
      unit: 'req/s',
      reference: ref,
      referenceName: 'the instance called directly',
      ratio: val / ref,
      target: '≥ 0.8×',
    },
    json,
  );
} finally {
  spawnSync(process.execPath, [bin, 'engine', 'stop'], { env, stdio: 'ignore' });
  rmSync(home, { recursive: true, force: true });
}
