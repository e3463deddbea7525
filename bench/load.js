// Shared pieces of the benchmarks: start a process that reports its port, and drive MCP
// tools/call load at an endpoint. Loopback only; every loop is bounded by a count or a deadline.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
          resolve({ port, pid: child.pid, stop: () => new Promise((done) => (child.once('exit', done), child.kill('SIGTERM'))) });
        }
      } catch {
        // not the listening line
      }
    });
    child.once('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}`)));
  });
}

/**
 * Sends tools/call `name` from CONNECTIONS loops for `seconds` to http://127.0.0.1:port{path};
 * returns requests per second and the median latency in ms.
 */
export async function loadMcp({ port, path = '/mcp', name, args = {}, seconds, host = '127.0.0.1', headers: extra = {} }) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    'content-length': Buffer.byteLength(body),
    ...extra,
  };
  const once = () =>
    new Promise((resolve, reject) => {
      const req = request({ host, port, path, method: 'POST', headers, agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode} from ${path}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < 200; i++) await once(); // warm up
  const latencies = [];
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < end) {
        const start = process.hrtime.bigint();
        await once();
        latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / seconds, p50: latencies[Math.floor(latencies.length / 2)] ?? NaN, requests: latencies.length };
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

/** Parses `--seconds N` and `--json` the same way in every bench script. */
export function benchArgs(defaultSeconds) {
  const args = process.argv.slice(2);
  return {
    seconds: args.includes('--seconds') ? Number(args[args.indexOf('--seconds') + 1]) : defaultSeconds,
    json: args.includes('--json'),
  };
}

/** Prints one result: a JSON line with --json, else a sentence. */
export function report(result, json) {
  const full = { ...result, ratio: result.ratio ?? (result.reference === undefined ? undefined : result.value / result.reference) };
  if (json) process.stdout.write(`${JSON.stringify(full)}\n`);
  else {
    const ratio = full.reference === undefined ? '' : ` vs ${full.reference.toFixed(1)} ${full.unit} (${full.referenceName}) = ${full.ratio.toFixed(2)}×`;
    const met = meets(full);
    const verdict = met === undefined ? '' : met ? ', met' : ', NOT met';
    process.stdout.write(`${full.name}: ${full.value.toFixed(1)} ${full.unit}${ratio} (target ${full.target ?? '-'}${verdict})\n`);
  }
}
