#!/usr/bin/env node
// The embedded engine, driven through the real CLI in a temporary MCPCTL_HOME, against the cold
// start of a minimal SDK server (bench/minimal-sdk-server.js, spawn to listening) measured here:
// - `mcpctl build` of a new 1-tool file, `mcpctl deploy <mcp_id> --env development`, and
//   `mcpctl test <id> -m …` with the offline agent, each CLI start to answer;
// - the gateway: tools/call throughput and the p50 latency it adds, against the instance called
//   directly, with 1 and with 100 deployments running, and with 1,000 registered (1 running, 999
//   stopped ones that it replaced, written through the engine's own store while it is stopped);
//   in alternated rounds once the engine's warm pool is full, as medians (see gatewayAgainstDirect in load.js); the
//   deployment is a development one, whose gateway also logs every call and its result (the
//   trace), and the same server deployed to staging is measured beside it without the trace, with
//   a stateless call of each protocol revision (2025-11-25 without a session, and 2026-07-28);
// - scale: deploy latency with 1, 20 and 100 existing deployments, each the median of SCALE_RUNS (5)
//   deploys measured once those have gone quiet (see quiet()); the engine's memory with 1 and 100.
// The deployments that fill the engine are development ones (one instance each), built and deployed
// through the API two at a time. Whether an instance comes from a warm process or a cold one is the
// engine's business: the figures are what a user waits for either way. Each measured build, test
// and deploy starts once the warm pool is full again (what a command run seconds after the last
// one finds); "build, back to back" shows the cost of commands that come faster than the refill.
// Usage: node bench/engine.js [--seconds 5] [--json] [--gateway-only | --scale-only | --cli-only] [--cpu-prof DIR]   (needs `npm run build` first)
// --gateway-only: the gateway rows with 1 deployment and with 1,000 registered; --scale-only: those,
// then deploy latency, gateway and memory as the engine fills up (no build and test rows); --cli-only:
// the cold start, build, test and deploy rows (deploy with 1 existing), without the gateway and scale rows.
// --cpu-prof DIR starts the engine daemon with node's --cpu-prof, writing its profile to DIR when it stops.
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startViewer } from './dashboard-view.js';
import { benchArgs, coldStart, cpuMs, engineApi, gatewayAgainstDirect, median, report, rssMb } from './load.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, 'bin', 'mcpctl.cjs');
const { seconds, json } = benchArgs(5);
const gatewayOnly = process.argv.includes('--gateway-only');
const scaleOnly = process.argv.includes('--scale-only');
const cliOnly = process.argv.includes('--cli-only');
const profileDir = process.argv.includes('--cpu-prof')
  ? process.argv[process.argv.indexOf('--cpu-prof') + 1]
  : undefined;
const home = mkdtempSync(join(tmpdir(), 'mcpctl-bench-engine-'));
const env = {
  ...process.env,
  MCPCTL_HOME: home,
  XDG_CONFIG_HOME: join(home, 'config'),
  MCPCTL_RATE_LIMIT: '0',
  CI: 'true',
};
delete env.MCPCTL_API_URL;
delete env.MCPCTL_API_KEY;
const SCALE = [1, 20, 100];
const REGISTERED = 1000;
const RUNS = 5;
/** Deploys measured per scale row: the row is their median. */
const SCALE_RUNS = 5;
/**
 * The gateway rows with many deployments against the one with 1: the ratio is of the gateway's
 * share of direct throughput in each (measured minutes apart, the rates alone move with the
 * machine's load; the shares do not, unless the deployments cost the gateway something).
 */
const WITH_ONE = 'with 1; ratio of the gateway/direct ratios';

function mcpctl(...args) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [bin, '--json', ...args], { env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`mcpctl ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-800)}`);
  return { ms, data: JSON.parse(r.stdout) };
}

const TOOL = {
  name: 'echo',
  description: 'Echo the text back',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  handler: { type: 'static', content: [{ type: 'text', text: '{{args.text}}' }] },
};

/** A new 1-tool definition file; its name makes it a new server. */
function definition(name) {
  const file = join(home, `${name}.yaml`);
  writeFileSync(file, `name: ${name}\ntemplate: basic\ntools:\n  - ${JSON.stringify(TOOL)}\n`);
  return file;
}

/** The running engine's API, for filling it without paying a CLI start per deployment. */
function api() {
  return engineApi(home);
}

/**
 * `mcpctl engine start`; with --cpu-prof, the daemon is started here instead (as the CLI would, in
 * the background with its log in the home) under node's profiler, and the CLI then finds it running.
 */
function startEngine() {
  if (profileDir === undefined) return mcpctl('engine', 'start');
  mkdirSync(profileDir, { recursive: true });
  const log = openSync(join(home, 'engine.log'), 'a', 0o600);
  const daemon = join(root, 'dist', 'engine', 'daemon.js');
  const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profileDir, daemon], {
    detached: true,
    stdio: ['ignore', log, log],
    cwd: home,
    env,
  });
  child.unref();
  closeSync(log);
  for (let i = 0; i < 100; i++) {
    if (spawnSync(process.execPath, [bin, 'engine', 'status'], { env, stdio: 'ignore' }).status === 0) return;
    spawnSync('sleep', ['0.2']);
  }
  throw new Error('the profiled engine did not start');
}

const instancePids = new Set();
function remember(deployment) {
  if (deployment.status !== 'deployed')
    throw new Error(`deployment ${deployment.deployment_id} is ${deployment.status}`);
  for (const instance of deployment.instances ?? []) if (instance.pid !== undefined) instancePids.add(instance.pid);
  return deployment;
}

/** A second try for filling only: on a shared machine a process start can miss its time-out. */
async function twice(step) {
  try {
    return await step();
  } catch (error) {
    process.stderr.write(`bench: retrying once after: ${error.message}\n`);
    return step();
  }
}

let servers = 0;
/** Builds and deploys development deployments through the API, two at a time, until `total` exist. */
async function fillTo(engine, deployed, total) {
  const worker = async () => {
    while (deployed.length < total) {
      deployed.push(undefined); // claim a slot
      const slot = deployed.length - 1;
      const server = await twice(() =>
        engine.post('/v1/build', { name: `fill-${servers++}`, template: 'basic', tools: [TOOL] }),
      );
      deployed[slot] = remember(
        await twice(() => engine.post('/v1/deploy', { mcp_id: server.mcp_id, environment: 'development' })),
      );
    }
  };
  await Promise.all([worker(), worker()]);
}

/**
 * Makes `deployment` one of REGISTERED: the engine is stopped, and the deployments it replaced
 * before (development deployments of the same server, each deployed, then stopped when the next
 * one replaced it, oldest first) are written through the engine's own store, as it writes them;
 * then the engine starts again and restores the one that is deployed. Returns it as restored.
 */
async function registerMany(deployment) {
  mcpctl('engine', 'stop');
  const { FileStore } = await import('../dist/engine/store/file-store.js');
  const { newDeploymentRecord } = await import('../dist/engine/deployments/new-record.js');
  const { applyTransition } = await import('../dist/engine/deployments/states.js');
  const store = await FileStore.open({ dir: join(home, 'store') });
  const live = await store.getDeployment(deployment.deployment_id);
  const server = await store.getServer(live.mcpId);
  const baseUrl = deployment.url.slice(0, deployment.url.indexOf('/d/'));
  const start = Date.parse(live.deployment.created_at) - REGISTERED * 60_000;
  let previousId;
  for (let i = 0; i < REGISTERED - 1; i++) {
    const now = start + i * 60_000;
    const record = newDeploymentRecord({
      server,
      environment: 'development',
      config: {},
      domain: undefined,
      desired: 1,
      previousId,
      baseUrl,
      now,
      runner: 'process',
    });
    applyTransition(record.deployment, 'deployed', now + 300);
    const next = i + 1 < REGISTERED - 1 ? 'the next one' : live.deployment.deployment_id;
    applyTransition(record.deployment, 'stopped', now + 60_000, `replaced by ${next}`);
    record.version = 3;
    await store.putDeployment(record);
    previousId = record.deployment.deployment_id;
  }
  await store.close();
  startEngine();
  return restored(deployment);
}

/** Waits (bounded) until a restarted engine has restored `deployment`, its instance healthy, and its pool full. */
async function restored(deployment) {
  for (let i = 0; i < 100; i++) {
    // engine.json is read again each time: the address is the new engine's once it has written it
    let engine;
    try {
      engine = api();
    } catch {
      await sleep(200);
      continue;
    }
    const now = await engine.get(`/v1/deploy/${deployment.deployment_id}/status`).catch(() => undefined);
    if (now?.status === 'deployed' && now.instances?.[0]?.state === 'healthy') {
      await settled(engine);
      return { engine, deployment: remember(now) };
    }
    await sleep(200);
  }
  throw new Error(`${deployment.deployment_id} was not restored`);
}

/**
 * The gateway measured with the engine restarted under OTEL_EXPORTER_OTLP_ENDPOINT (a collector on
 * loopback that answers every export with 200), then restarted without it again.
 */
async function withTracing(deployment) {
  let exports = 0;
  const collector = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve));
  try {
    mcpctl('engine', 'stop');
    env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${collector.address().port}`;
    startEngine();
    const { engine, deployment: again } = await restored(deployment);
    const measured = await gatewayAgainstDirect(again, engine.pid, { seconds });
    if (exports === 0) throw new Error('the engine exported no trace while tracing was on');
    return measured;
  } finally {
    mcpctl('engine', 'stop');
    delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
    startEngine();
    await restored(deployment);
    collector.close();
  }
}

/**
 * Waits (bounded) until a started engine has filled its warm pool: the pool fills once the
 * restore is done, and processes loading Node and the MCP SDK beside the measurement would be
 * counted against the registered deployments.
 */
async function settled(engine) {
  for (let i = 0; i < 150; i++) {
    const pool = (await engine.get('/v1/health').catch(() => undefined))?.warm_pool;
    if (pool === undefined || (pool.warming === 0 && pool.ready >= pool.size)) return;
    await sleep(200);
  }
  process.stderr.write('bench: the warm pool did not fill within 30 s; measuring anyway\n');
}

/**
 * Median CLI deploy latency of `runs` new development deployments (each adds one). Each deploy
 * starts with the engine's warm pool full (the build before it, and the filling before that, took
 * warm processes): what is measured is how the deploy grows with the deployments there are, not
 * whether the pool had refilled yet.
 */
async function deployLatency(engine, runs, deployed) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const server = mcpctl('build', definition(`measured-${servers++}`)).data;
    await settled(engine);
    const r = mcpctl('deploy', server.mcp_id, '--env', 'development');
    deployed.push(remember(r.data));
    times.push(r.ms);
  }
  return median(times);
}

const row = (name, value, unit, reference, referenceName, target, ratio) =>
  report({ name, value, unit, reference, referenceName, target, ratio }, json);

/** The share of the machine's CPU below which the engine and its instances count as idle. */
const QUIET_SHARE = 0.05;

/**
 * Waits (bounded, 90 s) until the engine and every instance started here have used less than
 * QUIET_SHARE of the machine's CPU for 3 seconds in a row. A runtime process that has just started
 * is not idle yet: about 25 s after its start V8 shrinks its heap (three "reduce" mark-compacts,
 * ≈150 ms of CPU, once). Deployments filled a few a second would otherwise be measured while the
 * last few dozen of them do that, which is the rate of the filling, not the number there are.
 */
async function quiet(engine) {
  const pids = [engine.pid, ...instancePids];
  const budget = QUIET_SHARE * availableParallelism() * 1000;
  let calm = 0;
  for (let i = 0; i < 90 && calm < 3; i++) {
    const before = pids.map(cpuMs);
    await sleep(1000);
    const used = pids.reduce((sum, pid, k) => sum + (cpuMs(pid) - before[k] || 0), 0);
    calm = used <= budget ? calm + 1 : 0;
  }
  if (calm < 3)
    process.stderr.write('bench: the engine and its instances did not go quiet within 90 s; measuring anyway\n');
}

/**
 * Deploy latency as the engine fills up, each row the median of SCALE_RUNS deploys measured once
 * the deployments there are have settled (see quiet), then the gateway and the engine's memory with
 * all of them.
 */
async function scaleRows(engine, deployed, cold, one) {
  const engineRss1 = rssMb(engine.pid);
  const viewer = await startViewer();
  try {
    const view = viewer && (await dashboardView(viewer, engine));
    await fillRows(engine, deployed, cold, one, engineRss1);
    if (viewer === undefined) return;
    const many = await dashboardView(viewer, engine);
    row(
      `dashboard first view, ${many.running} deployments running`,
      many.ms,
      'ms',
      view.ms,
      `with ${view.running}`,
      '≤ 1000 ms',
    );
  } finally {
    await viewer?.close();
  }
}

/** The dashboard's first view with the deployments running now (bench/dashboard-view.js). */
async function dashboardView(viewer, engine) {
  const { deployments } = await engine.get('/v1/deployments');
  const running = deployments.filter((d) => d.status === 'deployed').length;
  return { running, ms: await viewer.firstView(engine, running) };
}

async function fillRows(engine, deployed, cold, one, engineRss1) {
  const latency = new Map();
  for (const existing of SCALE) {
    await fillTo(engine, deployed, existing);
    await quiet(engine);
    latency.set(existing, await deployLatency(engine, SCALE_RUNS, deployed));
  }
  const base = latency.get(1);
  row('mcpctl deploy <mcp_id> --env development', base, 'ms', cold, 'minimal SDK server cold start', '≤ 0.75×');
  for (const existing of SCALE.slice(1)) {
    row(
      `deploy latency, ${existing} existing deployments`,
      latency.get(existing),
      'ms',
      base,
      'with 1',
      existing === 100 ? '≤ 1.2×' : undefined,
    );
  }
  const many = await gatewayAgainstDirect(deployed[0], engine.pid, { seconds });
  row(
    `gateway throughput, ${deployed.length} deployments running`,
    many.via,
    'req/s',
    one.via,
    WITH_ONE,
    undefined,
    many.ratio / one.ratio,
  );
  row(
    `memory (RSS): engine with ${deployed.length} deployments`,
    rssMb(engine.pid),
    'MB',
    engineRss1,
    'with 1',
    undefined,
  );
}

try {
  const cold = await coldStart([join(root, 'bench', 'minimal-sdk-server.js')], RUNS, { cwd: root });
  const COLD = 'minimal SDK server cold start';
  row('cold start: minimal SDK server (spawn to listening)', cold, 'ms', undefined, undefined, undefined);

  startEngine();
  const engine = api();
  const deployed = [];
  let built;
  if (!gatewayOnly && !scaleOnly) {
    // build: a new definition each time, so every build is a real one; each starts with the warm
    // pool full, as a command a person or a pipeline step runs seconds after the last one does
    const builds = [];
    for (let i = 0; i < RUNS; i++) {
      await settled(engine);
      const r = mcpctl('build', definition(`bench-${i}`));
      builds.push(r.ms);
      built = r.data;
    }
    const build = median(builds);
    row('mcpctl build of a new 1-tool file (CLI to ready)', build, 'ms', cold, COLD, '≤ 1.2×');
    // the same, one right after the other: each shares the machine with the refill of the pool
    const rapid = [];
    for (let i = 0; i < RUNS; i++) rapid.push(mcpctl('build', definition(`bench-rapid-${i}`)).ms);
    row(`mcpctl build, ${RUNS} back to back`, median(rapid), 'ms', build, 'build with the pool full', undefined);

    // the offline agent: an instance, an MCP session, planning, one tool call
    const tests = [];
    for (let i = 0; i < RUNS; i++) {
      await settled(engine);
      tests.push(mcpctl('test', built.mcp_id, '-m', 'echo the text "hello"').ms);
    }
    row('mcpctl test -m … (offline agent)', median(tests), 'ms', cold, COLD, '≤ 1.5×');
  } else {
    built = mcpctl('build', definition('bench-0')).data;
  }

  if (cliOnly) {
    deployed.push(remember(mcpctl('deploy', built.mcp_id, '--env', 'development').data));
    row(
      'mcpctl deploy <mcp_id> --env development',
      await deployLatency(engine, RUNS, deployed),
      'ms',
      cold,
      COLD,
      '≤ 0.75×',
    );
  } else {
    // one deployment alone: the gateway against calling its instance directly
    deployed.push(remember(mcpctl('deploy', built.mcp_id, '--env', 'development').data));
    await settled(engine);
    const one = await gatewayAgainstDirect(deployed[0], engine.pid, { seconds });
    row(
      'gateway tools/call throughput, 20 connections',
      one.via,
      'req/s',
      one.direct,
      'the instance called directly',
      '≥ 0.95×',
      one.ratio,
    );
    row('gateway p50 latency added', one.p50Added, 'ms', one.p50Direct, 'direct p50', '≤ 1 ms');
    row(
      'gateway: engine CPU per request',
      one.engineUsPerRequest,
      'µs',
      one.instanceUsPerRequest,
      'instance CPU per request',
    );
    // The same server deployed to staging: the gateway without the development trace (a log line of
    // every call's arguments and of its result). Shown beside the rows above, not instead of them.
    const staging = remember(mcpctl('deploy', built.mcp_id, '--env', 'staging').data);
    await settled(engine);
    const untraced = await gatewayAgainstDirect(staging, engine.pid, { seconds });
    row(
      'gateway throughput, staging (no request trace)',
      untraced.via,
      'req/s',
      untraced.direct,
      'the instance called directly',
      undefined,
      untraced.ratio,
    );
    row('gateway p50 latency added, staging', untraced.p50Added, 'ms', untraced.p50Direct, 'direct p50');
    // A stateless call of the 2026-07-28 revision: the gateway reads its Mcp-Method / Mcp-Name headers.
    const modern = await gatewayAgainstDirect(staging, engine.pid, { seconds, revision: '2026' });
    row(
      'gateway throughput, staging, 2026-07-28',
      modern.via,
      'req/s',
      modern.direct,
      'the instance called directly',
      '≥ 0.95×',
      modern.ratio,
    );
    row('gateway p50 latency added, staging, 2026-07-28', modern.p50Added, 'ms', modern.p50Direct, 'direct p50');
    // The same staging deployment with traces exported over OTLP/HTTP to a collector on loopback
    // that accepts everything: the engine restarted with OTEL_EXPORTER_OTLP_ENDPOINT set.
    const traced = await withTracing(staging);
    row(
      'gateway throughput, staging, tracing on (OTLP/HTTP)',
      traced.via,
      'req/s',
      untraced.via,
      'tracing off; ratio of the gateway/direct ratios',
      undefined,
      traced.ratio / untraced.ratio,
    );
    row(
      'gateway: engine CPU per request, tracing on',
      traced.engineUsPerRequest,
      'µs',
      untraced.engineUsPerRequest,
      'tracing off',
    );
    mcpctl('stop', staging.deployment_id);
    // the same deployment among 1,000 registered: the scale rows below run with these in the store
    const registered = await registerMany(deployed[0]);
    deployed[0] = registered.deployment;
    const many = await gatewayAgainstDirect(registered.deployment, registered.engine.pid, { seconds });
    row(
      `gateway throughput, ${REGISTERED.toLocaleString('en')} deployments registered (1 running)`,
      many.via,
      'req/s',
      one.via,
      WITH_ONE,
      undefined,
      many.ratio / one.ratio,
    );
    row(
      `gateway: engine CPU per request, ${REGISTERED.toLocaleString('en')} registered`,
      many.engineUsPerRequest,
      'µs',
      one.engineUsPerRequest,
      'with 1',
    );
    if (!gatewayOnly) await scaleRows(registered.engine, deployed, cold, one);
  }
} finally {
  spawnSync(process.execPath, [bin, 'engine', 'stop'], { env, stdio: 'ignore' });
  // The engine stops its instances; any it left behind are stopped here, by pid.
  for (const pid of instancePids) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(home)) process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(home, { recursive: true, force: true });
}
