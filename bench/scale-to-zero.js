#!/usr/bin/env node
// Scale to zero on the embedded engine (process runner and its warm pool), in a temporary MCPCTL_HOME,
// against references measured in the same run:
// - the first call to an idle deployment (gateway request to answer, the instance started on the
//   way), p50 and p99 over WAKES wakes, each once the warm pool has refilled (a user coming back;
//   wakes in a burst beyond the pool's size start cold), against the minimal SDK server's cold start
//   (spawn to listening; targets p50 ≤ 0.5×, p99 ≤ 1×);
// - a warm call's p50 through the gateway on a deployment that goes idle, against one that never
//   does (idle_seconds: 0), in alternated rounds (target ≤ 1.05×: unchanged);
// - TOTAL development and staging deployments registered, ACTIVE of them called within their idle
//   period (and kept awake while measured): the memory the engine and every process it started hold
//   together (PSS summed, target ≤ 4096 MB; their RSS summed counts the pages they share once per
//   process, and is shown too) against TOTAL × an instance's RSS (one process each); the gateway's share of
//   direct throughput to a deployment against the same share with few registered; and every one of them
//   answering a tool call.
// Usage: node bench/scale-to-zero.js [--deployments 1000] [--json]   (needs `npm run build` first)
// Every process started here is stopped here (the engine stops its instances); requests go to 127.0.0.1 only.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { fetch } from 'undici';
import { fileURLToPath } from 'node:url';
import { benchArgs, coldStart, engineApi, gatewayAgainstDirect, median, report, rollupMb, rssMb } from './load.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, 'bin', 'mcpctl.cjs');
const { json } = benchArgs(3);
const argv = process.argv.slice(2);
const TOTAL = argv.includes('--deployments') ? Number(argv[argv.indexOf('--deployments') + 1]) : 1000;
const ACTIVE = Math.min(50, TOTAL);
/** wakes measured, over WAKING deployments woken in turn */
const WAKES = 50;
const WAKING = 10;
/** the idle period of the deployments measured (seconds): short, so a bench run sees many wakes */
const IDLE_SECONDS = 1;
/** the idle period of the TOTAL but the ACTIVE (seconds): short, so they are idle when measured */
const FILL_IDLE_SECONDS = 8;
/**
 * the idle period of the ACTIVE (seconds): longer than waking them all one after another takes
 * (up to a cold start each once the warm pool is used up), so they stay awake while measured
 */
const ACTIVE_IDLE_SECONDS = 120;
/**
 * alternated rounds of the warm call (100 calls a side each): the two sides differ by a flag read,
 * a fraction of a millisecond, and with 5 rounds the row moved across its 1.05× target from run to run
 */
const WARM_ROUNDS = 9;
/** at most this long to get every ACTIVE deployment awake (ms) */
const ACTIVE_DEADLINE_MS = 180_000;
const home = mkdtempSync(join(tmpdir(), 'mcpctl-bench-idle-'));
const env = { ...process.env, MCPCTL_HOME: home, XDG_CONFIG_HOME: join(home, 'config'), MCPCTL_RATE_LIMIT: '0' };
delete env.MCPCTL_API_URL;
delete env.MCPCTL_API_KEY;

const TOOL = {
  name: 'echo',
  description: 'Echo the text back',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  handler: { type: 'static', content: [{ type: 'text', text: '{{args.text}}' }] },
};

function mcpctl(...args) {
  const r = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mcpctl ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-800)}`);
}

/** One tools/call on a fresh connection; resolves with its time in ms, rejects unless answered 200. */
async function call(deployment) {
  const start = performance.now();
  const response = await fetch(`${deployment.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', connection: 'close' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hi' } },
    }),
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('hi'))
    throw new Error(`${deployment.deployment_id} answered ${response.status}: ${text.slice(0, 300)}`);
  return performance.now() - start;
}

/** The pth percentile (0–100) of `values`, nearest rank. */
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Polls until every deployment is idle (bounded). */
async function allIdle(engine, deployments) {
  for (let i = 0; i < 300; i++) {
    const views = await Promise.all(deployments.map((d) => engine.get(`/v1/deploy/${d.deployment_id}/status`)));
    if (views.every((view) => view.idle === true && (view.instances ?? []).length === 0)) return;
    await sleep(100);
  }
  throw new Error('the deployments did not go idle within 30 s');
}

/** Waits (bounded) until the engine's warm pool is full again. */
async function poolReady(engine) {
  for (let i = 0; i < 100; i++) {
    const pool = (await engine.get('/v1/health')).warm_pool;
    if (pool === undefined || pool.ready >= pool.size) return;
    await sleep(100);
  }
}

let serial = 0;
async function deploy(engine, environment, idleSeconds) {
  const server = await engine.post('/v1/build', { name: `idle-${serial++}`, template: 'basic', tools: [TOOL] });
  const deployment = await engine.post('/v1/deploy', {
    mcp_id: server.mcp_id,
    environment,
    config: { scaling: { idle_seconds: idleSeconds } },
  });
  if (deployment.status !== 'deployed') throw new Error(`${deployment.deployment_id} is ${deployment.status}`);
  return deployment;
}

/**
 * Memory of a process and every descendant, in MB: `rss` summed (pages shared between them, such as
 * the node binary's, counted in each), and `pss` summed (each shared page split between the
 * processes that map it, so counted once in the total: what the group holds in RAM).
 */
function treeMemoryMb(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const total = { rss: 0, pss: 0 };
  const stack = [pid];
  while (stack.length > 0) {
    const next = stack.pop();
    const rss = rssMb(next);
    if (!Number.isNaN(rss)) total.rss += rss;
    const pss = rollupMb(next, 'Pss');
    if (!Number.isNaN(pss)) total.pss += pss;
    stack.push(...(children.get(next) ?? []));
  }
  return total;
}

async function wakeRows(engine, cold) {
  const waking = [];
  for (let i = 0; i < WAKING; i++)
    waking.push(await deploy(engine, i % 2 === 0 ? 'development' : 'staging', IDLE_SECONDS));
  const wakes = [];
  while (wakes.length < WAKES) {
    await allIdle(engine, waking);
    for (const deployment of waking) {
      if (wakes.length >= WAKES) break;
      // a user coming back, not a burst: the warm pool has refilled since the last wake
      await poolReady(engine);
      wakes.push(await call(deployment));
    }
  }
  const p50 = percentile(wakes, 50);
  const p99 = percentile(wakes, 99);
  const COLD = 'minimal SDK server cold start';
  report(
    {
      name: `first call to an idle deployment, p50 of ${WAKES}`,
      value: p50,
      unit: 'ms',
      reference: cold,
      referenceName: COLD,
      target: '≤ 0.5×',
    },
    json,
  );
  report(
    {
      name: `first call to an idle deployment, p99 of ${WAKES}`,
      value: p99,
      unit: 'ms',
      reference: cold,
      referenceName: COLD,
      target: '≤ 1.0×',
    },
    json,
  );

  // a warm call: the deployment that goes idle (kept awake by the calls) against one that never does
  const never = await deploy(engine, 'staging', 0);
  const sometimes = waking[1];
  const rounds = { never: [], sometimes: [] };
  for (let round = 0; round < WARM_ROUNDS; round++) {
    for (const [side, deployment] of [
      ['never', never],
      ['sometimes', sometimes],
    ]) {
      const times = [];
      for (let i = 0; i < 100; i++) times.push(await call(deployment));
      rounds[side].push(median(times.slice(10)));
    }
  }
  report(
    {
      name: 'warm call p50 through the gateway, a deployment that idles',
      value: median(rounds.sometimes),
      unit: 'ms',
      reference: median(rounds.never),
      referenceName: 'one that never idles',
      target: '≤ 1.05×',
    },
    json,
  );
  return [...waking, never];
}

/**
 * The gateway against the deployment's instance called directly, in alternated rounds (see
 * gatewayAgainstDirect in load.js), with the deployment's instances as its status shows them now.
 */
async function gatewayShare(engine, deployment) {
  const view = await engine.get(`/v1/deploy/${deployment.deployment_id}/status`);
  return gatewayAgainstDirect({ ...deployment, ...view, url: deployment.url }, engine.pid, { seconds: 3 });
}

/** Registers deployments, two at a time, until `total` exist; half development, half staging; the last ACTIVE stay awake longer. */
async function fillTo(engine, deployments, total) {
  const worker = async () => {
    while (deployments.length < total) {
      const slot = deployments.push(undefined) - 1;
      const idleSeconds = slot >= total - ACTIVE ? ACTIVE_IDLE_SECONDS : FILL_IDLE_SECONDS;
      deployments[slot] = await deploy(engine, slot % 2 === 0 ? 'development' : 'staging', idleSeconds);
    }
  };
  await Promise.all([worker(), worker()]);
}

async function thousandRows(engine, deployments, before) {
  await fillTo(engine, deployments, TOTAL);
  const active = deployments.slice(-ACTIVE);
  // the active ones are called (within their idle period) until every one is awake, and for long
  // enough that the others have gone idle
  const until = Date.now() + (FILL_IDLE_SECONDS + 4) * 1000;
  const deadline = Date.now() + ACTIVE_DEADLINE_MS;
  let views;
  for (;;) {
    for (const deployment of active) await call(deployment);
    views = await Promise.all(active.map((d) => engine.get(`/v1/deploy/${d.deployment_id}/status`)));
    const awake = views.every((view) => view.idle !== true && (view.instances ?? []).length > 0);
    if ((awake && Date.now() >= until) || Date.now() >= deadline) break;
    await sleep(1000);
  }
  const pids = views.flatMap((view) => (view.instances ?? []).map((instance) => instance.pid)).filter(Boolean);
  const instance = median(pids.map(rssMb).filter((rss) => !Number.isNaN(rss)));
  const memory = treeMemoryMb(engine.pid);
  report(
    {
      name: `memory of the engine and its processes (PSS), ${TOTAL} deployments, ${ACTIVE} active`,
      value: memory.pss,
      unit: 'MB',
      reference: TOTAL * instance,
      referenceName: `${TOTAL} × an instance's RSS`,
      target: '≤ 4096 MB',
    },
    json,
  );
  report(
    {
      name: `RSS summed over the engine and its processes, ${TOTAL} deployments, ${ACTIVE} active`,
      value: memory.rss,
      unit: 'MB',
      reference: TOTAL * instance,
      referenceName: `${TOTAL} × an instance`,
    },
    json,
  );
  // the gateway's share of direct throughput, against the same share with few registered: measured
  // minutes apart, the rates alone move with the machine's speed; the shares do not, unless the
  // deployments there are cost the gateway something
  const after = await gatewayShare(engine, deployments.at(WAKING));
  report(
    {
      name: `gateway throughput with ${TOTAL} deployments registered (${ACTIVE} active)`,
      value: after.via,
      unit: 'req/s',
      reference: before.via,
      referenceName: `with ${WAKING + 1} registered; ratio of the gateway/direct ratios`,
      ratio: after.ratio / before.ratio,
      target: '≥ 0.95×',
    },
    json,
  );
  // every one, four at a time (most are idle: each call wakes one)
  let answered = 0;
  let next = 0;
  const caller = async () => {
    while (next < deployments.length) {
      await call(deployments[next++]);
      answered += 1;
    }
  };
  await Promise.all([caller(), caller(), caller(), caller()]);
  report(
    {
      name: `deployments of ${TOTAL} answering a tool call`,
      value: answered,
      unit: 'calls',
      target: `≥ ${TOTAL} calls`,
    },
    json,
  );
}

try {
  const cold = await coldStart([join(root, 'bench', 'minimal-sdk-server.js')], 5, { cwd: root });
  mcpctl('engine', 'start');
  const engine = engineApi(home);
  const deployments = await wakeRows(engine, cold);
  // the deployment that never idles, through the gateway, before the engine fills up
  const before = await gatewayShare(engine, deployments.at(WAKING));
  await thousandRows(engine, deployments, before);
} finally {
  spawnSync(process.execPath, [bin, 'engine', 'stop'], { env, stdio: 'ignore' });
  rmSync(home, { recursive: true, force: true });
}
