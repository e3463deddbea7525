#!/usr/bin/env node
// The reliability suite: mcpctl used the way a parallel CI system and an adversary would use it,
// through the real `bin/mcpctl` and the real background engine, each scenario in its own
// temporary MCPCTL_HOME. Prints a table of figures.
//
//   npm run chaos [-- --only builds,deploys,ack,instance,restart,secrets,junk,adversary]
//                 [-- --builds 100] [-- --deploys 50] [-- --trials 20] [-- --json] [-- --update-readme]
//
// `adversary` runs isolation, ssrf, identity, injection, guessing and flooding
// (scripts/chaos-adversary.js); each may also be named alone.
//
// Loopback only; every loop is bounded by a count or a deadline; every process started here (CLIs,
// engines, their servers, CPU burners) is stopped here, by pid, also on Ctrl-C.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { adversaryScenarios } from './chaos-adversary.js';
import {
  alive,
  api,
  callTool,
  children,
  cleanAll,
  cleanHome,
  engineState,
  expectOk,
  log,
  mcpctl,
  newHome,
  rawExchange,
  root,
  sleep,
  waitFor,
  writeDefinition,
} from './chaos-support.js';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const only = option('only')?.split(',');
const N_BUILDS = Number(option('builds', process.env.CHAOS_BUILDS ?? 100));
const N_DEPLOYS = Number(option('deploys', process.env.CHAOS_DEPLOYS ?? 50));
const TRIALS = Number(option('trials', process.env.CHAOS_TRIALS ?? 20));
const asJson = args.includes('--json');
const updateReadme = args.includes('--update-readme');

const rows = [];

function reasons(results) {
  const counts = new Map();
  for (const r of results) {
    if (r.code === 0) continue;
    const line = (r.stderr.split('\n').find((l) => l.startsWith('error:')) ?? `exit ${r.code}`).replace(
      /deploy_[a-z0-9]+|mcp_[a-z0-9]+|pid \d+|\d+(\.\d+)? ?m?s\b|127\.0\.0\.1:\d+/g,
      '…',
    );
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([line, n]) => `${n}× ${line.slice(0, 120)}`);
}

function record(name, result, target, ok, notes = []) {
  rows.push({ name, result, target, ok, notes });
  log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${result}${notes.length === 0 ? '' : ` (${notes.join('; ')})`}`);
}

const seconds = (ms) => `${(ms / 1000).toFixed(0)} s`;

// --- scenarios ---------------------------------------------------------------------------------------

const scenarios = {
  /** N concurrent `mcpctl build` of N different definitions. */
  async builds() {
    const home = newHome('builds');
    try {
      const files = Array.from({ length: N_BUILDS }, (_, i) =>
        writeDefinition(join(home, 'defs', `s${i}`), `parallel-${i}`),
      );
      expectOk(await mcpctl(home, ['engine', 'start']), 'engine start');
      const started = performance.now();
      const results = await Promise.all(files.map((file) => mcpctl(home, ['--json', 'build', file])));
      const took = performance.now() - started;
      const ids = new Set(results.filter((r) => r.code === 0).map((r) => JSON.parse(r.stdout).mcp_id));
      const ok = results.filter((r) => r.code === 0).length;
      record(
        `${N_BUILDS} concurrent \`mcpctl build\` (distinct definitions)`,
        `${ok}/${N_BUILDS} succeeded, ${ids.size} distinct ids, ${seconds(took)}`,
        'all succeed, ids distinct',
        ok === N_BUILDS && ids.size === N_BUILDS,
        reasons(results),
      );
    } finally {
      await cleanHome(home);
    }
  },

  /** N concurrent `mcpctl deploy <mcp_id> --env development` of one build. */
  async deploys() {
    const home = newHome('deploys');
    try {
      const file = writeDefinition(join(home, 'def'), 'parallel');
      const built = await mcpctl(home, ['--json', 'build', file]);
      expectOk(built, 'build');
      const mcpId = JSON.parse(built.stdout).mcp_id;
      const started = performance.now();
      const results = await Promise.all(
        Array.from({ length: N_DEPLOYS }, () => mcpctl(home, ['--json', 'deploy', mcpId, '--env', 'development'])),
      );
      const took = performance.now() - started;
      // Each newer development deployment of a server replaces the one before: reaching
      // `deployed` (and maybe being replaced since) is success.
      const reached = results.filter(
        (r) => r.code === 0 && (JSON.parse(r.stdout).transitions ?? []).some((t) => t.status === 'deployed'),
      );
      const ids = new Set(reached.map((r) => JSON.parse(r.stdout).deployment_id));
      record(
        `${N_DEPLOYS} concurrent \`mcpctl deploy --env development\``,
        `${reached.length}/${N_DEPLOYS} deployed, ${ids.size} distinct ids, ${seconds(took)}`,
        'all succeed, ids distinct',
        reached.length === N_DEPLOYS && ids.size === N_DEPLOYS,
        reasons(results),
      );
    } finally {
      await cleanHome(home);
    }
  },

  /** kill -9 of the engine the moment a synchronous deploy answers 200, then a restart. */
  async ack() {
    const home = newHome('ack');
    try {
      expectOk(await mcpctl(home, ['engine', 'start']), 'engine start');
      let acknowledged = 0;
      let lost = 0;
      for (let trial = 0; trial < TRIALS; trial += 1) {
        const state = await waitFor('the engine', () => engineState(home));
        const file = writeDefinition(join(home, 'defs', `t${trial}`), `ack-${trial}`);
        const built = await mcpctl(home, ['--json', 'build', file]);
        expectOk(built, 'build');
        const mcpId = JSON.parse(built.stdout).mcp_id;
        const status = await postKillingAtHead(state, '/v1/deploy', { mcp_id: mcpId, environment: 'development' });
        await waitFor('the engine to die', () => !alive(state.pid));
        if (status === 200) acknowledged += 1;
        expectOk(await mcpctl(home, ['engine', 'start']), 'engine start');
        const again = await waitFor('the engine again', () => engineState(home));
        const list = await api(again, 'GET', `/v1/deployments?mcp_id=${mcpId}`);
        const deployment = list.body?.data?.deployments?.[0];
        if (status === 200 && deployment?.status !== 'deployed') lost += 1;
      }
      record(
        `kill -9 of the engine at the first 200 of a deploy, ${TRIALS} trials`,
        `${acknowledged} acknowledged, ${lost} lost`,
        '0 acknowledged deployments lost',
        lost === 0 && acknowledged === TRIALS,
      );
    } finally {
      await cleanHome(home);
    }
  },

  /** kill -9 of one production instance while a load generator calls a non-idempotent tool. */
  async instance() {
    const home = newHome('instance');
    try {
      const file = writeDefinition(join(home, 'def'), 'under-load');
      const deployed = await mcpctl(home, ['--json', 'deploy', file, '--env', 'production']);
      expectOk(deployed, 'deploy');
      const deployment = JSON.parse(deployed.stdout);
      const victim = deployment.instances[0].pid;
      const outcomes = [];
      // when the engine had reaped the killed process, i.e. knew it was gone
      let reapedAt;
      let sent = 0;
      const TOTAL = 3000;
      const worker = async () => {
        while (sent < TOTAL) {
          sent += 1;
          if (sent === 600) {
            process.kill(victim, 'SIGKILL');
            void (async () => {
              while (alive(victim)) await sleep(2);
              reapedAt = performance.now();
            })();
          }
          const began = performance.now();
          const answer = await callTool(`${deployment.url}/mcp`, 'greet', { name: 'load' }, sent);
          outcomes.push({ ok: answer.status === 200 && answer.text.includes('Hello load'), began });
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      await waitFor('the instance to be replaced', async () => {
        const status = await api(engineState(home), 'GET', `/v1/deploy/${deployment.deployment_id}/status`);
        return (status.body?.data?.instances ?? []).filter((i) => i.state === 'healthy').length === 2;
      });
      const failed = outcomes.filter((o) => !o.ok);
      const failedLater = failed.filter((o) => reapedAt === undefined || o.began > reapedAt);
      record(
        'kill -9 of a production instance under load (8 callers, 3000 calls)',
        `${failed.length} of ${outcomes.length} failed, ${failedLater.length} of them sent after the engine saw the instance die; replaced`,
        'only calls in flight fail',
        failedLater.length === 0,
      );
    } finally {
      await cleanHome(home);
    }
  },

  /** An engine restart with 8 deployments while a load generator and CPU burners run. */
  async restart() {
    const home = newHome('restart');
    const burners = [];
    try {
      const environments = [
        'production',
        'production',
        'production',
        'staging',
        'staging',
        'development',
        'development',
        'development',
      ];
      const deployments = [];
      for (const [i, environment] of environments.entries()) {
        const file = writeDefinition(join(home, 'defs', `d${i}`), `restart-${i}`);
        const result = await mcpctl(home, ['--json', 'deploy', file, '--env', environment]);
        expectOk(result, `deploy ${i}`);
        deployments.push(JSON.parse(result.stdout));
      }
      const instances = deployments.reduce((n, d) => n + d.instances.length, 0);
      // a loaded machine: one busy process per core, and callers on every deployment
      for (let i = 0; i < availableParallelism(); i += 1) {
        const burner = spawn(
          process.execPath,
          ['-e', 'const end = Date.now() + 600_000; while (Date.now() < end) {}'],
          { stdio: 'ignore' },
        );
        children.add(burner);
        burners.push(burner);
      }
      let loading = true;
      const load = (async () => {
        while (loading) {
          await Promise.all(deployments.map((d) => callTool(`${d.url}/mcp`, 'greet', { name: 'x' })));
          await sleep(20);
        }
      })();
      const started = performance.now();
      expectOk(await mcpctl(home, ['engine', 'stop']), 'engine stop');
      expectOk(await mcpctl(home, ['engine', 'start']), 'engine start');
      const state = await waitFor('the engine', () => engineState(home));
      let back = [];
      try {
        await waitFor(
          'every deployment back',
          async () => {
            back = [];
            for (const d of deployments) {
              const status = await api(state, 'GET', `/v1/deploy/${d.deployment_id}/status`);
              const data = status.body?.data;
              if (
                data?.status === 'deployed' &&
                data.url === d.url &&
                (data.instances ?? []).some((i) => i.state === 'healthy')
              )
                back.push(d);
            }
            return back.length === deployments.length;
          },
          300_000,
        );
      } catch {
        // reported below
      }
      const took = performance.now() - started;
      loading = false;
      await load;
      let answering = 0;
      for (const d of back)
        if ((await callTool(`${d.url}/mcp`, 'greet', { name: 'back' })).text.includes('Hello back')) answering += 1;
      record(
        `engine restart with ${deployments.length} deployments (${instances} instances), under load`,
        `${back.length}/${deployments.length} back at the same URL and answering ${answering}/${deployments.length}, in ${seconds(took)}`,
        'all back at the same URLs',
        back.length === deployments.length && answering === deployments.length,
      );
    } finally {
      for (const burner of burners) burner.kill('SIGKILL');
      await cleanHome(home);
    }
  },

  /** A planted secret, searched in every output, log line and file. */
  async secrets() {
    const home = newHome('secrets');
    const secret = `planted-${randomBytes(12).toString('hex')}`;
    const outputs = [];
    try {
      const file = writeDefinition(join(home, 'def'), 'secretive', [
        '  - name: leak',
        '    description: Prints its token on stderr and fails',
        '    inputSchema: { type: object }',
        '    handler:',
        '      type: exec',
        `      command: [${JSON.stringify(process.execPath)}, "-e", "process.stderr.write('token=' + process.env.TOKEN); process.exit(1)"]`,
        '      env: { TOKEN: "${PLANTED_TOKEN}" }',
      ]);
      const env = { PLANTED_TOKEN: secret };
      const run = async (argv) => {
        const result = await mcpctl(home, argv, env);
        outputs.push(result.stdout, result.stderr);
        return result;
      };
      const deployed = await run(['--json', 'deploy', file, '--env', 'development', '--env-var', 'PLANTED_TOKEN']);
      expectOk(deployed, 'deploy');
      const deployment = JSON.parse(deployed.stdout);
      for (const [name, callArgs] of [
        ['leak', {}],
        ['greet', { name: secret }],
        ['greet', { name: 'plain' }],
      ]) {
        const answer = await callTool(`${deployment.url}/mcp`, name, callArgs);
        // what a tool returns on success is the tool's; an error text must not carry the secret
        if (name === 'leak') outputs.push(answer.text);
      }
      await run(['--json', 'status', deployment.deployment_id]);
      await run(['logs', deployment.deployment_id, '-n', '5000']);
      await run(['--json', 'logs', deployment.deployment_id, '-n', '5000']);
      await run(['test', file, '-m', 'greet the token owner']);
      await run(['--json', 'ls']);
      await run(['engine', 'logs', '-n', '5000']);
      await run(['stop', deployment.deployment_id]);
      expectOk(await run(['engine', 'stop']), 'engine stop');
      const inOutputs = outputs.filter((text) => text.includes(secret)).length;
      const files = [];
      const visit = (dir) => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const path = join(dir, entry.name);
          if (entry.isDirectory()) visit(path);
          else if (entry.isFile() && readFileSync(path).includes(secret))
            files.push({ path: relative(home, path), mode: statSync(path).mode & 0o777 });
        }
      };
      visit(home);
      const stored = files.filter((f) => f.path.startsWith(join('store', 'deployments')) && f.mode === 0o600);
      const elsewhere = files.filter((f) => !stored.includes(f));
      record(
        'a planted secret (--env-var) in every output, log and file',
        `${inOutputs} hits in ${outputs.length} outputs, ${elsewhere.length} files outside 0600 storage (${stored.length} in the 0600 store)`,
        '0 hits outside 0600 storage',
        inOutputs === 0 && elsewhere.length === 0,
        elsewhere.map((f) => f.path),
      );
    } finally {
      await cleanHome(home);
    }
  },

  /** Malformed and hostile requests on raw sockets, to the API and the data plane. */
  async junk() {
    const home = newHome('junk');
    try {
      const file = writeDefinition(join(home, 'def'), 'target');
      const deployed = await mcpctl(home, ['--json', 'deploy', file, '--env', 'staging']);
      expectOk(deployed, 'deploy');
      const deployment = JSON.parse(deployed.stdout);
      const state = engineState(home);
      const { port } = new URL(state.url);
      const mcpPath = new URL(deployment.url).pathname + '/mcp';
      const key = state.apiKey;
      // Connection: close, so each answer ends with the connection (no wait for a keep-alive to lapse)
      const h = (extra = '') => `Host: 127.0.0.1:${port}\r\nConnection: close\r\n${extra}`;
      const cases = [
        'GARBAGE\r\n\r\n',
        'GET / HTTP/9.9\r\n\r\n',
        '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03',
        `GET /v1/health HTTP/1.1\r\n${h()}X-Big: ${'a'.repeat(100_000)}\r\n\r\n`,
        `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n`,
        `GET /v1/health HTTP/1.1\r\n${h()}Expect: foo\r\nAuthorization: Bearer ${key}\r\n\r\n`,
        `GET /v1/health HTTP/1.1\r\nHost: rebind.example\r\nConnection: close\r\nAuthorization: Bearer ${key}\r\n\r\n`,
        `GET /v1/health HTTP/1.1\r\n${h()}Authorization: Bearer ${' '.repeat(16)}\r\n\r\n`,
        `GET /v1/deploy/../../etc/passwd/status HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\n\r\n`,
        `GET /%00%ff HTTP/1.1\r\n${h()}\r\n\r\n`,
        `GET /d/%2e%2e/mcp HTTP/1.1\r\n${h()}\r\n`,
        `GET http://127.0.0.1/v1/health HTTP/1.1\r\n${h()}\r\n`,
        `OPTIONS * HTTP/1.1\r\n${h()}\r\n`,
        `TRACE /v1/health HTTP/1.1\r\n${h()}\r\n`,
        `POST /v1/build HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        `POST /v1/build HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n`,
        `POST /v1/build HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nContent-Length: 1\r\nContent-Type: application/json\r\n\r\n{`,
        `POST /v1/build HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\n{}`,
        `POST /v1/deploy HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n${'['.repeat(1000)}${']'.repeat(1000)}`,
        `POST /v1/deploy HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 39\r\n\r\n{"mcp_id":"mcp_x","environment":"moon"}`,
        `POST /v1/build HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nIdempotency-Key: ${'\u00e9'.repeat(10)}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
        `GET /v1/deploy/${deployment.deployment_id}/status?wait=-1 HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\n\r\n`,
        `GET /v1/deploy/${deployment.deployment_id}/logs?since=yesterday&limit=1e9 HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\n\r\n`,
        `POST ${mcpPath} HTTP/1.1\r\n${h()}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 3\r\n\r\n{{{`,
        `POST ${mcpPath} HTTP/1.1\r\n${h()}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n[]`,
        `POST ${mcpPath} HTTP/1.1\r\n${h()}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 17\r\n\r\n{"jsonrpc":"2.0"}`,
        `POST ${mcpPath} HTTP/1.1\r\n${h()}Content-Type: text/plain\r\nContent-Length: 4\r\n\r\nnope`,
        `GET ${mcpPath} HTTP/1.1\r\n${h()}Accept: text/event-stream\r\n\r\n`,
        `DELETE ${mcpPath} HTTP/1.1\r\n${h()}\r\n`,
        `GET ${mcpPath.replace('/mcp', '/nothing')} HTTP/1.1\r\n${h()}\r\n`,
        `GET /v1/health HTTP/1.1\r\n${h()}Upgrade: websocket\r\nConnection: Upgrade\r\nAuthorization: Bearer ${key}\r\n\r\n`,
        `GET /v1/health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n`,
        `GET /v1/health HTTP/1.1\r\n${h()}X-Null: a\x00b\r\n\r\n`,
      ];
      // and some bytes at random (seeded, so a failure can be replayed)
      let seed = 0x5eed;
      const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
      for (let i = 0; i < 200; i += 1) {
        const verb = ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'XYZ'][Math.floor(random() * 6)];
        const path = ['/v1/build', '/v1/deploy', mcpPath, '/v1/servers/' + 'x'.repeat(Math.floor(random() * 300)), '/'][
          Math.floor(random() * 5)
        ];
        const bytes = Buffer.from(Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256)));
        cases.push(
          `${verb} ${path} HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n${bytes.toString('latin1')}`,
        );
      }
      // an upload cut short, a few times
      const cut = [];
      for (let i = 0; i < 5; i += 1) {
        cut.push(
          rawExchange(
            port,
            `POST /v1/build HTTP/1.1\r\n${h()}Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{"name":"x"`,
            100,
          ),
        );
      }
      await Promise.all(cut);
      const statuses = new Map();
      let serverErrors = 0;
      let unanswered = 0;
      for (const text of cases) {
        const answer = await rawExchange(port, text);
        const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 'none';
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status.startsWith('5')) serverErrors += 1;
        if (status === 'none') {
          unanswered += 1;
          if (process.env.CHAOS_DEBUG !== undefined) log(`no answer to ${JSON.stringify(text.slice(0, 80))}`);
        }
      }
      const health = await api(state, 'GET', '/v1/health');
      const engineLog = readFileSync(join(home, 'engine.log'), 'utf8');
      const unexpected = engineLog.split('\n').filter((line) => line.includes('"unexpected error"')).length;
      const summary = [...statuses]
        .sort()
        .map(([status, n]) => `${n}×${status}`)
        .join(' ');
      record(
        `${cases.length + cut.length} junk requests (API and data plane)`,
        `${serverErrors} × 5xx, ${unexpected} unexpected errors logged, engine ${health.status === 200 ? 'still answering' : 'NOT answering'}`,
        '0 × 5xx',
        serverErrors === 0 && unexpected === 0 && health.status === 200,
        [summary, `${unanswered} closed without an answer`],
      );
    } finally {
      await cleanHome(home);
    }
  },
};

/** POSTs with the engine's key and kills the engine's process group the moment the answer's head arrives. */
function postKillingAtHead(state, path, body) {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const request = httpRequest(`${state.url}${path}`, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${state.apiKey}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      },
    });
    request.on('response', (response) => {
      try {
        process.kill(-state.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end(text);
  });
}

// --- run -----------------------------------------------------------------------------------------------

if (!existsSync(join(root, 'dist', 'engine', 'daemon.js'))) {
  console.error('build first: npm run build');
  process.exit(1);
}
// the adversary's scenarios return their row; `--only adversary` runs them all
for (const [name, scenario] of Object.entries(adversaryScenarios)) {
  scenarios[name] = async () => {
    const row = await scenario();
    record(row.scenario, row.result, row.target, row.met, row.notes ?? []);
  };
}
const adversaryNames = new Set(Object.keys(adversaryScenarios));
const selected = (name) =>
  only === undefined || only.includes(name) || (only.includes('adversary') && adversaryNames.has(name));
const unknown = (only ?? []).filter((name) => name !== 'adversary' && !(name in scenarios));
if (unknown.length > 0) {
  console.error(`unknown scenario ${unknown.join(', ')}: use ${[...Object.keys(scenarios), 'adversary'].join(', ')}`);
  process.exit(2);
}
const started = Date.now();
for (const [name, scenario] of Object.entries(scenarios)) {
  if (!selected(name)) continue;
  log(`${name}…`);
  try {
    await scenario();
  } catch (error) {
    record(name, `could not run: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`, '', false);
  }
}
await cleanAll();

const header = `Measured ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} cores, in ${seconds(Date.now() - started)}:`;
const table = [
  '| scenario | result | target | met |',
  '|---|---|---|---|',
  ...rows.map((r) => `| ${r.name} | ${r.result} | ${r.target} | ${r.ok ? 'yes' : '**no**'} |`),
].join('\n');
if (updateReadme) {
  const readme = join(root, 'README.md');
  const text = readFileSync(readme, 'utf8').replace(
    /<!-- chaos:start -->[\s\S]*<!-- chaos:end -->/,
    `<!-- chaos:start -->\n${header}\n\n${table}\n<!-- chaos:end -->`,
  );
  writeFileSync(readme, text);
}
if (asJson) console.log(JSON.stringify({ node: process.version, date: new Date().toISOString(), rows }, null, 2));
else {
  console.log(header);
  console.log('');
  console.log(table);
  for (const r of rows) for (const note of r.notes) console.log(`  ${r.name}: ${note}`);
}
process.exitCode = rows.every((r) => r.ok) ? 0 : 1;
