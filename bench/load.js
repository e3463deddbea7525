// Shared pieces of the benchmarks: start a process that reports its port, and drive MCP
// tools/call load at an endpoint. Loopback only; every loop is bounded by a count or a deadline.
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { setTimeout, clearTimeout } from 'node:timers';

export const CONNECTIONS = 20;

/** Starts `node argv…` and resolves once it prints `{"event":"listening","port":N}`; stdout is drained. */
export function startProcess(argv, options = {}) {
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'], ...options });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${argv.join(' ')} did not start`)), 20_000);
    let port;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (port !== undefined) return;
      try {
        const event = JSON.parse(line);
        if (event.event === 'listening') {
          port = event.port;
          clearTimeout(timer);
          resolve({
            port,
            listening: event,
            pid: child.pid,
            stop: () => new Promise((done) => (child.once('exit', done), child.kill('SIGTERM'))),
          });
        }
      } catch {
        // not the listening line
      }
    });
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}`)));
  });
}

/**
 * A stateless tools/call of a protocol revision: '2025' (2025-11-25, no session) or '2026'
 * (2026-07-28: the client named in `_meta`, the method and tool in the Mcp-Method / Mcp-Name headers).
 */
export function toolCall(revision, name, args) {
  if (revision === '2025') {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    return { body, headers: { 'mcp-protocol-version': '2025-11-25' } };
  }
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args, _meta },
  });
  return { body, headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name } };
}

/** A share of failed requests above which a load run is not a measurement. */
export const MAX_ERROR_SHARE = 0.01;
/** After a failed request a connection's loop waits this long: a refused port must not spin it. */
const ERROR_PAUSE_MS = 20;

/**
 * Sends tools/call `name` (of `revision`, see toolCall) from CONNECTIONS loops for `seconds` to http://127.0.0.1:port{path};
 * returns requests per second and the median latency in ms of the requests answered 200, and how
 * many failed (another status, or a connection error). A few failures on a loaded machine (a 503
 * while an instance restarts) are counted and reported; more than MAX_ERROR_SHARE of the requests
 * fails the run, saying what the first failure was.
 */
export async function loadMcp({
  port,
  path = '/mcp',
  name,
  args = {},
  seconds,
  host = '127.0.0.1',
  headers: extra = {},
  revision = '2025',
}) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const { body, headers: standard } = toolCall(revision, name, args);
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...standard,
    'content-length': Buffer.byteLength(body),
    ...extra,
  };
  let errors = 0;
  let firstError;
  /** Resolves true when answered 200, false (counted) otherwise. */
  const once = () =>
    new Promise((resolve) => {
      const failed = (why) => {
        errors += 1;
        firstError ??= why;
        setTimeout(() => resolve(false), ERROR_PAUSE_MS);
      };
      const req = request({ host, port, path, method: 'POST', headers, agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(true) : failed(`status ${res.statusCode} from ${path}`)));
        res.on('error', (error) => failed(error.message));
      });
      req.on('error', (error) => failed(`${error.code ?? error.message} from ${path}`));
      req.end(body);
    });
  // warm up: bounded, and it must mostly work
  let warm = 0;
  for (let i = 0; i < 200; i++) if (await once()) warm += 1;
  if (warm < 190)
    throw new Error(`the warm-up of ${path} on port ${port} failed ${200 - warm} of 200 requests: ${firstError}`);
  errors = 0;
  firstError = undefined;
  const latencies = [];
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < end) {
        const start = process.hrtime.bigint();
        if (await once()) latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }),
  );
  agent.destroy();
  const total = latencies.length + errors;
  if (errors > 0)
    process.stderr.write(
      `bench: ${errors} of ${total} requests to ${path} on port ${port} failed; the first: ${firstError}\n`,
    );
  if (total === 0 || errors > MAX_ERROR_SHARE * total) {
    throw new Error(
      `${errors} of ${total} requests to ${path} on port ${port} failed (more than ${MAX_ERROR_SHARE * 100}%); the first: ${firstError}`,
    );
  }
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / seconds,
    p50: latencies[Math.floor(latencies.length / 2)] ?? NaN,
    requests: latencies.length,
    errors,
  };
}

/**
 * Measures two sides in `rounds` alternated rounds (A B, then B A, …, so neither always runs on a
 * warmer machine), after one discarded warm-up round of each (`run(side, true)`: it may be shorter);
 * `run(side)` returns a load result.
 * Returns each side's results and the median of the paired ratios b/a (each pair measured back
 * to back), which a drift of the machine's load over the rounds moves least.
 */
export async function alternate(rounds, run, warmUp = true) {
  if (warmUp) {
    await run('a', true);
    await run('b', true);
  }
  const a = [];
  const b = [];
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? ['a', 'b'] : ['b', 'a']) (side === 'a' ? a : b).push(await run(side));
  }
  return { a, b, ratio: median(b.map((r, i) => r.rps / a[i].rps)) };
}

/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median time (ms) from spawning `node argv…` to its listening line, over `runs` starts. */
export async function coldStart(argv, runs, options = {}) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const server = await startProcess(argv, options);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    await server.stop();
  }
  return median(times);
}

/** Resident memory of a process in MB (Linux /proc), or NaN where it cannot be read. */
export function rssMb(pid) {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

/**
 * One field of a process's memory summary in MB (Linux /proc smaps_rollup), or NaN where it cannot
 * be read: `Anonymous` is what it holds of its own (heap, stacks), without the pages of the node
 * binary and libraries every Node process shares; `Pss` splits each shared page between the
 * processes that map it.
 */
export function rollupMb(pid, field) {
  try {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) / 1024;
  } catch {
    return NaN;
  }
}

/** CPU time (user + system, ms) a process has used so far (Linux /proc), or NaN. */
export function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/**
 * Whether a result meets its target: "≤ 1.2×" / "≥ 0.95×" compare the ratio, "≤ 1 ms" the value;
 * undefined when the row has no target (a scale figure shown for how it grows).
 */
export function meets(result) {
  const m = /^([≤≥])\s*([\d.]+)\s*(×|\S+)$/.exec(result.target ?? '');
  if (m === null) return undefined;
  const figure = m[3] === '×' ? result.ratio : result.value;
  if (figure === undefined || Number.isNaN(figure)) return undefined;
  return m[1] === '≤' ? figure <= Number(m[2]) : figure >= Number(m[2]);
}

/** Parses `--seconds N`, `--rounds N` and `--json` the same way in every bench script. */
export function benchArgs(defaultSeconds, defaultRounds) {
  const args = process.argv.slice(2);
  const number = (flag, fallback) => (args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : fallback);
  return {
    seconds: number('--seconds', defaultSeconds),
    rounds: number('--rounds', defaultRounds),
    json: args.includes('--json'),
  };
}

/**
 * Writes a one-tool server (`echo`, a static handler) as a bundle under `temp` and starts it as the
 * engine's process runner starts a deployment's instance (`root`'s build): a warm process of the
 * pool (the one-file entry, the runtime's Node options of src/runtime/host/node-flags.ts, its
 * request path warmed up) handed the bundle, with no sandbox. Resolves to `{ port, pid, stop }`.
 */
export async function startEchoInstance(root, temp) {
  const { writeBundle } = await import(join(root, 'dist', 'runtime', 'host', 'bundle.js'));
  const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
  const { dir } = await writeBundle(
    {
      name: 'bench',
      template: 'basic',
      tools: [
        {
          name: 'echo',
          description: 'echo',
          inputSchema,
          handler: { type: 'static', content: [{ type: 'text', text: '{{args.text}}' }] },
        },
      ],
    },
    temp,
  );
  const { spawnWarmRuntimeProcess } = await import(join(root, 'dist', 'runtime', 'host', 'process.js'));
  const warm = spawnWarmRuntimeProcess();
  const instance = await warm.serve({ bundleDir: dir });
  return { port: instance.port, pid: instance.pid, stop: () => instance.stop() };
}

/** Prints one result: a JSON line with --json, else a sentence. */
export function report(result, json) {
  const full = {
    ...result,
    ratio: result.ratio ?? (result.reference === undefined ? undefined : result.value / result.reference),
  };
  if (json) process.stdout.write(`${JSON.stringify(full)}\n`);
  else {
    const ratio =
      full.reference === undefined
        ? ''
        : ` vs ${full.reference.toFixed(1)} ${full.unit} (${full.referenceName}) = ${full.ratio.toFixed(2)}×`;
    const met = meets(full);
    const verdict = met === undefined ? '' : met ? ', met' : ', NOT met';
    process.stdout.write(
      `${full.name}: ${full.value.toFixed(1)} ${full.unit}${ratio} (target ${full.target ?? '-'}${verdict})\n`,
    );
  }
}

/**
 * The API of the engine running in `home` (its engine.json), for driving it without paying a CLI
 * start per call: `get(path)` and `post(path, body)` resolve with the envelope's data.
 */
export function engineApi(home) {
  const state = JSON.parse(readFileSync(join(home, 'engine.json'), 'utf8'));
  return {
    pid: state.pid,
    url: state.url,
    get(path) {
      return this.post(path, undefined, 'GET');
    },
    /** One request on a fresh connection: no race with the engine closing an idle kept-alive one. */
    post(path, body, method = 'POST') {
      const text = body === undefined ? '' : JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const req = request(
          `${state.url}${path}`,
          {
            method,
            agent: false,
            headers: {
              authorization: `Bearer ${state.apiKey}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(text),
            },
          },
          (res) => {
            const chunks = [];
            res.on('data', (chunk) => chunks.push(chunk));
            res.on('end', () => {
              const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8'));
              if (envelope.success) resolve(envelope.data);
              else reject(new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(envelope.error)}`));
            });
          },
        );
        req.on('error', reject);
        req.end(text);
      });
    },
  };
}

/**
 * The CPUs this process may use, read once at start: after the load generator pins itself to one,
 * `availableParallelism()` answers 1, and the servers pinned after it would be left unpinned.
 */
const CPUS = availableParallelism();

/**
 * Pins a process (every thread it has, and those it starts later) to one CPU with taskset, when the
 * machine has more than one and taskset is there; says whether it did. A load generator and the
 * server it measures on CPUs of their own do not take turns on one, which made runs swing.
 */
export function pinToCpu(pid, cpu) {
  if (CPUS < 2) return false;
  const r = spawnSync('taskset', ['-apc', String(cpu), String(pid)], { stdio: 'ignore' });
  return r.status === 0;
}

/** alternated rounds of the gateway against direct calls (gatewayAgainstDirect), after a warm-up of each */
const GATEWAY_ROUNDS = 5;
/**
 * Seconds of warm-up load on each side before the rounds. The engine's optimizing compiler is still
 * busy with the request path for several seconds of a first load (`perf record` of an engine put
 * about 15 % of its CPU in V8's compiler threads between 2 and 10 s of load, and under 2 % after),
 * so a short warm-up measured the compiler in the first gateway round.
 */
const GATEWAY_WARM_UP_SECONDS = 4;

/**
 * Gateway against direct on one deployment, in alternated rounds after a warm-up of each (see
 * alternate): medians of each side, the median of the rounds' ratios and of their p50
 * differences; and the CPU the engine spends per request passed through it, against what the
 * instance spends per request. `revision`: the tools/call sent (see toolCall); `seconds`: each round's length.
 */
export async function gatewayAgainstDirect(deployment, enginePid, { seconds, revision = '2025' }) {
  const url = new URL(deployment.url);
  const port = deployment.instances?.[0]?.port;
  const instancePid = deployment.instances?.[0]?.pid;
  if (port === undefined) throw new Error('the deployment does not show its instance port');
  // CPU per request: the engine's while requests pass through it, less its own while they go
  // straight to the instance (it reads the instance's log lines either way)
  const cpu = { engineVia: 0, engineDirect: 0, instance: 0, via: 0, direct: 0 };
  const run = async (side, warm) => {
    const e0 = cpuMs(enginePid);
    const i0 = cpuMs(instancePid);
    const time = warm ? GATEWAY_WARM_UP_SECONDS : seconds;
    const r =
      side === 'a'
        ? await loadMcp({ port, name: 'echo', args: { text: 'hi' }, seconds: time, revision })
        : await loadMcp({
            revision,
            port: Number(url.port),
            path: `${url.pathname}/mcp`,
            name: 'echo',
            args: { text: 'hi' },
            seconds: time,
          });
    if (warm) return r;
    if (side === 'a') {
      cpu.engineDirect += cpuMs(enginePid) - e0;
      cpu.direct += r.requests;
    } else {
      cpu.engineVia += cpuMs(enginePid) - e0;
      cpu.instance += cpuMs(instancePid) - i0;
      cpu.via += r.requests;
    }
    return r;
  };
  const { a: direct, b: via, ratio } = await alternate(GATEWAY_ROUNDS, run);
  return {
    direct: median(direct.map((r) => r.rps)),
    via: median(via.map((r) => r.rps)),
    ratio,
    p50Direct: median(direct.map((r) => r.p50)),
    p50Added: median(via.map((r, i) => r.p50 - direct[i].p50)),
    engineUsPerRequest: (1000 * cpu.engineVia) / cpu.via - (1000 * cpu.engineDirect) / cpu.direct,
    instanceUsPerRequest: (1000 * cpu.instance) / cpu.via,
  };
}
