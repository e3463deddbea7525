// What the reliability suite's scenarios share: temporary homes with their engines, the real
// `bin/mcpctl`, requests to the engine and to deployments, and cleaning up whatever was started.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

/* global fetch, AbortSignal */

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bin = join(root, 'bin', 'mcpctl.cjs');
const asJson = process.argv.includes('--json');
const CLI_DEADLINE_MS = 15 * 60_000;

const homes = new Set();
export const children = new Set();
// --- processes and homes -------------------------------------------------------------------------

export function log(text) {
  if (!asJson) process.stderr.write(`[chaos] ${text}\n`);
}

export function newHome(prefix) {
  const home = mkdtempSync(join(tmpdir(), `mcpctl-chaos-${prefix}-`));
  homes.add(home);
  return home;
}

export function cliEnv(home, extra = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    MCPCTL_HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    CI: 'true',
    ...extra,
  };
  return env;
}

/** Runs `mcpctl args…`; resolves with its exit code and output (killed past the deadline). */
export function mcpctl(home, argv, extraEnv = {}) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...argv], {
      env: cliEnv(home, extraEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_DEADLINE_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code: code ?? (signal === null ? -1 : 128), stdout, stderr, ms: performance.now() - started });
    });
  });
}

export function engineState(home) {
  try {
    return JSON.parse(readFileSync(join(home, 'engine.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitFor(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Stops the engine of a home (and, if it will not stop, kills its process group); removes the home. */
export async function cleanHome(home) {
  const state = engineState(home);
  if (state !== undefined && alive(state.pid)) {
    await mcpctl(home, ['engine', 'stop']);
    if (alive(state.pid)) {
      try {
        process.kill(-state.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
  rmSync(home, { recursive: true, force: true });
  homes.delete(home);
}

export async function cleanAll() {
  for (const child of children) child.kill('SIGKILL');
  for (const home of [...homes]) await cleanHome(home);
}

process.on('SIGINT', () => {
  void cleanAll().finally(() => process.exit(130));
});

/** One HTTP request to the engine with its key; resolves with status and parsed body. */
export async function api(state, method, path, body) {
  const response = await fetch(`${state.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${state.apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(150_000),
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed };
}

/** One tools/call through a deployment's MCP URL: its HTTP status, or 0 when no answer came. */
export function callTool(mcpUrl, name, args = {}, id = 1) {
  return post(mcpUrl, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

/**
 * One POST of a JSON-RPC message (an object, or a string sent as it is) with more headers, from
 * `localAddress` when given: its status (0 when no answer came), headers and text.
 */
export function post(url, message, headers = {}, { localAddress, timeoutMs = 30_000 } = {}) {
  return new Promise((resolve) => {
    const body = typeof message === 'string' ? message : JSON.stringify(message);
    const request = httpRequest(
      url,
      {
        method: 'POST',
        agent: false,
        timeout: timeoutMs,
        ...(localAddress === undefined ? {} : { localAddress }),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
        response.on('error', () => resolve({ status: 0, headers: {}, text }));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve({ status: 0, headers: {}, text: '' }));
    request.end(body);
  });
}

/** The JSON-RPC messages of an MCP answer, whether it came as JSON or as a stream of events. */
export function messagesOf(text) {
  const parse = (json) => {
    try {
      return [JSON.parse(json)].flat();
    } catch {
      return [];
    }
  };
  if (!/^(event|data|id|retry):/m.test(text)) return parse(text);
  return text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .flatMap((line) => parse(line.slice(5)));
}

/** A tool call's answer as text: its result's text items (and `isError`), or its error's message. */
export function toolAnswer(text) {
  const message = messagesOf(text).find((m) => m !== null && typeof m === 'object' && ('result' in m || 'error' in m));
  if (message === undefined) return { answered: false, isError: false, text: '' };
  if ('error' in message) return { answered: false, isError: true, text: String(message.error?.message ?? '') };
  const content = Array.isArray(message.result?.content) ? message.result.content : [];
  const joined = content.map((item) => (typeof item?.text === 'string' ? item.text : JSON.stringify(item))).join('\n');
  return { answered: true, isError: message.result?.isError === true, text: joined };
}

/** An HTTP server on 127.0.0.1 with a port of its own; `close` ends it and its connections. */
export function listen(handler) {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        port,
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A definition file in `dir`: a static tool, a slow one, and an exec tool that fails printing its environment. */
export function writeDefinition(dir, name, extra = []) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'server.yaml');
  writeFileSync(
    file,
    [
      `name: ${name}`,
      'template: basic',
      'description: A server of the reliability suite',
      'tools:',
      '  - name: greet',
      '    description: Greets someone by name',
      '    inputSchema: { type: object, properties: { name: { type: string } }, required: [name] }',
      '    handler: { type: static, content: [{ type: text, text: "Hello {{args.name}}" }] }',
      ...extra,
    ].join('\n') + '\n',
  );
  return file;
}

/** Sends raw bytes on a new connection; resolves with what came back until the close (at most 10 s, or `hangUpAfterMs`). */
export function rawExchange(port, text, hangUpAfterMs) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    let received = '';
    const timer = setTimeout(() => socket.destroy(), hangUpAfterMs ?? 10_000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(Buffer.from(text, 'latin1'));
  });
}

export function expectOk(result, what) {
  if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}): ${result.stderr.slice(-600)}`);
}

/** A definition file from its lines, in a folder of its own. */
export function writeServer(dir, lines, files = {}) {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const file = join(dir, 'server.yaml');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** Starts the engine of a fresh home with nothing of the caller's environment. */
export async function startEngine(home) {
  expectOk(await mcpctl(home, ['engine', 'start']), 'engine start');
  return waitFor('the engine', () => engineState(home));
}

/** `mcpctl --json deploy …`, its answer parsed. */
export async function deploy(home, file, environment, env = {}, flags = []) {
  const result = await mcpctl(home, ['--json', 'deploy', file, '--env', environment, ...flags], env);
  expectOk(result, `deploy ${relative(home, file)}`);
  return JSON.parse(result.stdout);
}

/** A YAML flow list of strings (a JSON string is a YAML double-quoted scalar). */
export const yamlList = (items) => `[${items.map((item) => JSON.stringify(item)).join(', ')}]`;
