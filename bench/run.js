#!/usr/bin/env node
// Benchmarks: each figure is printed with its reference, measured in the same run, and as a ratio.
// Usage: npm run bench [-- --only startup,validate,runtime,engine] [-- --json] [-- --update-readme]
// Loopback only; every loop is bounded; every process started here is stopped here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, 'bin', 'mcpctl.js');
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1]?.split(',') : undefined;
const asJson = args.includes('--json');
const updateReadme = args.includes('--update-readme');

const results = [];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function timeCommand(argv, runs, env = {}) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, argv, { env: { ...process.env, ...env }, stdio: 'pipe' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0 && !env.BENCH_ALLOW_FAIL) {
      throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr.toString().slice(0, 500)}`);
    }
    times.push(ms);
  }
  return median(times);
}

function record(name, value, unit, reference, referenceName, target) {
  const ratio = reference === undefined ? undefined : value / reference;
  results.push({ name, value, unit, reference, referenceName, ratio, target });
}

const benches = {
  startup() {
    const runs = 21;
    timeCommand(['-e', '0'], 3); // warm the file cache
    const bare = timeCommand(['-e', '0'], runs);
    const version = timeCommand([bin, '--version'], runs);
    const help = timeCommand([bin, '--help'], runs);
    record('cli start-up: mcpctl --version', version, 'ms', bare, 'node -e 0', '≤ 2.0×');
    record('cli start-up: mcpctl --help', help, 'ms', bare, 'node -e 0', '≤ 2.0×');
  },
  validate() {
    // A very large definition: the schema's maximum tool count, each with a few parameters.
    const dir = mkdtempSync(join(tmpdir(), 'mcpctl-bench-'));
    try {
      const tools = [];
      for (let i = 0; i < 256; i++) {
        tools.push(
          [
            `  - name: tool_${i}`,
            `    description: Tool number ${i}, which looks something up by id and returns it`,
            '    inputSchema:',
            '      type: object',
            '      properties:',
            '        id: { type: string, description: the id }',
            '        limit: { type: integer, minimum: 1, maximum: 100 }',
            '        verbose: { type: boolean }',
            '      required: [id]',
            '    handler:',
            '      type: static',
            '      content:',
            `        - { type: text, text: "tool ${i} got {{args.id}}" }`,
          ].join('\n'),
        );
      }
      const resources = [];
      for (let i = 0; i < 512; i++) {
        resources.push(
          `  - { uri: "docs://page-${i}", name: "Page ${i}", description: "Documentation page ${i}", mimeType: text/plain, source: { type: text, text: "page ${i}" } }`,
        );
      }
      const file = join(dir, 'large.yaml');
      writeFileSync(file, `name: large\ntemplate: basic\ntools:\n${tools.join('\n')}\nresources:\n${resources.join('\n')}\n`);
      const small = join(dir, 'small.yaml');
      writeFileSync(
        small,
        'name: small\ntemplate: basic\ntools:\n  - name: echo\n    description: Echo a message\n    inputSchema: { type: object, properties: { text: { type: string } } }\n',
      );
      const runs = 9;
      const smallMs = timeCommand([bin, 'validate', small], runs);
      const largeMs = timeCommand([bin, 'validate', file], runs);
      record('validate: 256 tools + 512 resources', largeMs, 'ms', smallMs, 'validate: 1 tool', '≤ 3.0×');
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
};

/** Runs a bench script that prints one JSON result per line with --json. */
function subBench(script) {
  const r = spawnSync(process.execPath, [join(root, 'bench', script), '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`bench/${script} exited ${r.status}`);
  for (const line of r.stdout.split('\n')) if (line.trim() !== '') results.push(JSON.parse(line));
}

for (const [name, fn] of Object.entries(benches)) {
  if (only !== undefined && !only.includes(name)) continue;
  await fn();
}

function formatRow(r) {
  const digits = r.unit === 'req/s' ? 0 : 1;
  const ratio = r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}× ${r.referenceName} (${r.reference.toFixed(digits)} ${r.unit})`;
  return { name: r.name, value: `${r.value.toFixed(digits)} ${r.unit}`, ratio, target: r.target ?? '-' };
}

if (updateReadme) {
  const readme = join(root, 'README.md');
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${process.platform}/${process.arch}:`,
    '',
    '| benchmark | value | against its reference | target |',
    '|---|---|---|---|',
    ...results.map(formatRow).map((r) => `| ${r.name} | ${r.value} | ${r.ratio} | ${r.target} |`),
  ].join('\n');
  const text = readFileSync(readme, 'utf8').replace(/<!-- bench:start -->[\s\S]*<!-- bench:end -->/, `<!-- bench:start -->\n${table}\n<!-- bench:end -->`);
  writeFileSync(readme, text);
}

if (asJson) {
  console.log(JSON.stringify({ node: process.version, date: new Date().toISOString(), results }, null, 2));
} else {
  console.log(`mcpctl benchmarks — node ${process.version}, ${new Date().toISOString()}`);
  for (const r of results.map(formatRow)) console.log(`${r.name.padEnd(44)} ${r.value.padStart(14)}  ${r.ratio}  target ${r.target}`);
}
