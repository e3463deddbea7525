#!/usr/bin/env node
// Benchmarks: each figure is printed with its reference, measured in the same run, and as a ratio.
// Usage: npm run bench [-- --only startup,validate,runtime,engine,idle,shared,ui,floor] [-- --json] [-- --update-readme]
// (with --only, --update-readme replaces the README rows of those benchmarks and keeps the others)
// Loopback only; every loop is bounded; every process started here is stopped here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, meets } from './load.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, 'bin', 'mcpctl.cjs');
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1]?.split(',') : undefined;
const asJson = args.includes('--json');
const updateReadme = args.includes('--update-readme');

const results = [];

function timeCommand(argv, runs, env = {}) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, argv, { env: { ...process.env, ...env }, stdio: 'pipe' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr.toString().slice(0, 500)}`);
    times.push(ms);
  }
  return median(times);
}

function record(name, value, unit, reference, referenceName, target) {
  const ratio = reference === undefined ? undefined : value / reference;
  results.push({ name, value, unit, reference, referenceName, ratio, target });
}

/** A definition of `count` tools, each with a few parameters, as people write them. */
function definitionWith(count) {
  const tools = [];
  for (let i = 0; i < count; i++) {
    tools.push(
      [
        `  - name: tool_${i}`,
        `    description: Look up record number ${i} by its id and return its fields as text`,
        '    inputSchema:',
        '      type: object',
        '      properties:',
        '        id: { type: string, description: the id of the record }',
        '        limit: { type: integer, minimum: 1, maximum: 100, description: how many fields at most }',
        '        verbose: { type: boolean, description: include empty fields }',
        '      required: [id]',
        '    handler:',
        '      type: static',
        '      content:',
        `        - { type: text, text: "record ${i}: {{args.id}}" }`,
      ].join('\n'),
    );
  }
  return `name: tools-${count}\ntemplate: basic\ntools:\n${tools.join('\n')}\n`;
}

const benches = {
  startup() {
    const runs = 21;
    timeCommand(['-e', '0'], 3); // warm the file cache
    const bare = timeCommand(['-e', '0'], runs);
    const version = timeCommand([bin, '--version'], runs);
    record('mcpctl --version', version, 'ms', bare, 'node -e 0', '≤ 1.3×');
  },
  validate() {
    const dir = mkdtempSync(join(tmpdir(), 'mcpctl-bench-'));
    try {
      const files = new Map();
      for (const count of [1, 3, 64, 256]) {
        const file = join(dir, `tools-${count}.yaml`);
        writeFileSync(file, definitionWith(count));
        files.set(count, file);
      }
      const runs = 9;
      timeCommand([bin, 'validate', files.get(1)], 2); // warm the file cache
      const version = timeCommand([bin, '--version'], runs);
      const ms = new Map([...files].map(([count, file]) => [count, timeCommand([bin, 'validate', file], runs)]));
      record('mcpctl validate of a 3-tool file', ms.get(3), 'ms', version, 'mcpctl --version', '≤ 2.0×');
      for (const count of [64, 256])
        record(`validate, ${count} tools`, ms.get(count), 'ms', ms.get(1), 'validate, 1 tool');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  runtime() {
    subBench('runtime-throughput.js');
  },
  engine() {
    subBench('engine.js');
  },
  idle() {
    subBench('scale-to-zero.js');
  },
  shared() {
    subBench('shared-runtime.js');
  },
  async ui() {
    const { codeSize } = await import('./dashboard-view.js');
    const size = codeSize(join(root, 'dist', 'ui'));
    record(
      'dashboard code, gzip (all of dist/ui)',
      size.compressed / 1024,
      'KB',
      size.raw / 1024,
      'uncompressed',
      '≤ 200 KB',
    );
  },
  floor() {
    subBench('proxy-floor.js');
  },
};

/** Runs a bench script that prints one JSON result per line with --json. */
function subBench(script) {
  const r = spawnSync(process.execPath, [join(root, 'bench', script), '--json'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`bench/${script} exited ${r.status}`);
  for (const line of r.stdout.split('\n')) if (line.trim() !== '') results.push(JSON.parse(line));
}

for (const [name, fn] of Object.entries(benches)) {
  if (only !== undefined && !only.includes(name)) continue;
  await fn();
}

function formatRow(r) {
  const digits = r.unit === 'req/s' ? 0 : 1;
  const ratio =
    r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}× ${r.referenceName} (${r.reference.toFixed(digits)} ${r.unit})`;
  const met = meets(r);
  return {
    name: r.name,
    value: `${r.value.toFixed(digits)} ${r.unit}`,
    ratio,
    target: r.target ?? '-',
    met: met === undefined ? '-' : met ? 'met' : 'not met',
  };
}

if (updateReadme) {
  const readme = join(root, 'README.md');
  const text = readFileSync(readme, 'utf8');
  const rows = results.map(formatRow).map((r) => `| ${r.name} | ${r.value} | ${r.ratio} | ${r.target} | ${r.met} |`);
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${process.platform}/${process.arch}${only === undefined ? '' : ` (rows of ${only.join(', ')} re-measured then; the others earlier)`}:`,
    '',
    '| benchmark | value | against its reference (same run) | target | |',
    '|---|---|---|---|---|',
    ...(only === undefined ? rows : mergedRows(text, rows)),
  ].join('\n');
  writeFileSync(
    readme,
    text.replace(/<!-- bench:start -->[\s\S]*<!-- bench:end -->/, `<!-- bench:start -->\n${table}\n<!-- bench:end -->`),
  );
}

/** With --only: the README's rows, each replaced by this run's row of the same name; new rows at the end. */
function mergedRows(readmeText, rows) {
  const nameOf = (row) => row.split(' | ')[0].slice(2);
  const fresh = new Map(rows.map((row) => [nameOf(row), row]));
  const table = /<!-- bench:start -->([\s\S]*)<!-- bench:end -->/.exec(readmeText)?.[1] ?? '';
  const kept = table
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| benchmark |'))
    .map((row) => fresh.get(nameOf(row)) ?? row);
  const listed = new Set(kept.map(nameOf));
  return [...kept, ...rows.filter((row) => !listed.has(nameOf(row)))];
}

if (asJson) {
  console.log(JSON.stringify({ node: process.version, date: new Date().toISOString(), results }, null, 2));
} else {
  console.log(`mcpctl benchmarks — node ${process.version}, ${new Date().toISOString()}`);
  for (const r of results.map(formatRow))
    console.log(
      `${r.name.padEnd(52)} ${r.value.padStart(12)}  ${r.ratio.padEnd(58)} target ${r.target.padEnd(8)} ${r.met}`,
    );
}
