// The reliability suite's adversary: deployments and anonymous callers that try to reach what is
// not theirs, each scenario in its own temporary MCPCTL_HOME with its own engine, through the real
// `bin/mcpctl`. Each scenario resolves with its row of the table: { scenario, result, target, met, notes }.
//
//   isolation  one deployment's exec and module tools read the engine's key, the store and another deployment's files
//   ssrf       an http tool led by redirects and `..` arguments to addresses and paths it should not reach
//   identity   calls to an OAuth server that claim someone else's identity, or none
//   injection  terminal escape sequences in tool names, arguments and headers, then `mcpctl logs`
//   guessing   200 wrong API keys from one address, then the right key from another
//   flooding   1,000 anonymous `initialize`, then a real MCP client
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { apiKeyGuessing, ssrf } from './chaos-adversary-network.js';
import { sessionFlooding, spoofedIdentity } from './chaos-adversary-clients.js';
import {
  api,
  callTool,
  cleanHome,
  deploy,
  mcpctl,
  newHome,
  rawExchange,
  startEngine,
  toolAnswer,
  writeServer,
  yamlList,
} from './chaos-support.js';

// A reader over a path argument: node's fs, a shell's cat, and a module's fs.readFile. Each
// returns what it read and also prints it (so a leak would reach the log too).
const NODE_READER =
  "let s='';process.stdin.on('data',(c)=>(s+=c)).on('end',()=>{const p=JSON.parse(s).path;" +
  "try{const t=require('fs').readFileSync(p,'utf8');process.stderr.write(t);process.stdout.write(t)}" +
  "catch(e){process.stdout.write('unreadable: '+e.code)}})";
const SHELL_READER = `IFS= read -r j; p=$(printf '%s' "$j" | sed -e 's/^.*"path":"//' -e 's/".*$//'); cat -- "$p" >&2; cat -- "$p" 2>&1`;
const MODULE_READER = `import { readFile } from 'node:fs/promises';

// a relative path is one of this module's neighbours
export async function readPath(args) {
  try {
    const text = await readFile(args.path.startsWith('/') ? args.path : new URL(args.path, import.meta.url), 'utf8');
    console.error(text);
    return text;
  } catch (error) {
    return 'unreadable: ' + (error.code ?? error.message);
  }
}
`;

/** Every file under `dir` (to a bounded depth), as full paths. */
function filesUnder(dir, depth = 8) {
  const found = [];
  const visit = (path, level) => {
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const child = join(path, entry.name);
      if (entry.isDirectory() && level < depth) visit(child, level + 1);
      else if (entry.isFile()) found.push(child);
    }
  };
  visit(dir, 0);
  return found;
}

/** Deployment B's exec and module tools read the engine's key, the store, A's bundle and A's environment. */
export async function crossDeploymentReads() {
  const home = newHome('isolation');
  const secret = `secret-a-${randomBytes(12).toString('hex')}`;
  const marker = `file-of-a-${randomBytes(12).toString('hex')}`;
  try {
    const state = await startEngine(home);
    const fileA = writeServer(
      join(home, 'defs', 'a'),
      [
        'name: victim',
        'template: basic',
        'description: A server with a value and a file of its own',
        'include: [data]',
        'tools:',
        '  - name: configured',
        '    description: Says whether its key is set',
        '    inputSchema: { type: object }',
        '    handler:',
        '      type: exec',
        `      command: ${yamlList([process.execPath, '-e', "process.stdout.write(process.env.SECRET ? 'set' : 'unset')"])}`,
        '      env: { SECRET: "${SECRET_A}" }',
      ],
      { 'data/marker.txt': marker },
    );
    const a = await deploy(home, fileA, 'staging', { SECRET_A: secret }, ['--env-var', 'SECRET_A']);
    const woke = toolAnswer((await callTool(`${a.url}/mcp`, 'configured')).text);
    const status = await api(state, 'GET', `/v1/deploy/${a.deployment_id}/status`);
    const pidA = (status.body?.data?.instances ?? []).find((i) => typeof i.pid === 'number')?.pid;

    const tool = (name, handler) => [
      `  - name: ${name}`,
      '    description: Reads the file it is given',
      '    inputSchema: { type: object, properties: { path: { type: string } }, required: [path] }',
      `    handler: ${handler}`,
    ];
    const fileB = writeServer(
      join(home, 'defs', 'b'),
      [
        'name: reader',
        'template: custom',
        'description: A server whose tools read any path',
        'tools:',
        ...tool('read_node', `{ type: exec, command: ${yamlList([process.execPath, '-e', NODE_READER])} }`),
        ...tool('read_shell', `{ type: exec, command: ${yamlList(['sh', '-c', SHELL_READER])} }`),
        ...tool('read_module', '{ type: module, module: tools.mjs, export: readPath }'),
      ],
      { 'tools.mjs': MODULE_READER },
    );
    const b = await deploy(home, fileB, 'staging');

    const defs = join(home, 'defs');
    const targets = [
      join(home, 'engine.json'),
      ...filesUnder(join(home, 'store')).filter((path) => path.includes('deployments')),
      ...filesUnder(home).filter((path) => !path.startsWith(defs) && path.endsWith('marker.txt')),
      ...(pidA === undefined ? [] : [`/proc/${pidA}/environ`]),
    ];
    const secrets = [secret, state.apiKey, marker];
    let reads = 0;
    let answered = 0;
    let gotFile = 0;
    const leaked = [];
    for (const path of targets) {
      for (const name of ['read_node', 'read_shell', 'read_module']) {
        const answer = toolAnswer((await callTool(`${b.url}/mcp`, name, { path })).text);
        reads += 1;
        if (answer.answered) answered += 1;
        if (answer.answered && !answer.isError && !answer.text.startsWith('unreadable') && answer.text !== '')
          gotFile += 1;
        if (secrets.some((s) => answer.text.includes(s)))
          leaked.push(`${name} ${path.startsWith(home) ? relative(home, path) : path}`);
      }
    }

    // the same tools read a file of their own deployment: they work, and find nothing else
    const ownReads = [];
    for (const name of ['read_node', 'read_shell', 'read_module']) {
      const answer = toolAnswer((await callTool(`${b.url}/mcp`, name, { path: 'tools.mjs' })).text);
      ownReads.push(
        answer.text.includes('export async function readPath')
          ? `${name} yes`
          : `${name} no (${answer.text.slice(0, 60)})`,
      );
    }
    const ownOk = ownReads.filter((r) => r.endsWith(' yes')).length;

    const logs = [
      await mcpctl(home, ['logs', a.deployment_id, '-n', '5000']),
      await mcpctl(home, ['logs', b.deployment_id, '-n', '5000']),
      await mcpctl(home, ['--json', 'logs', b.deployment_id, '-n', '5000']),
      await mcpctl(home, ['engine', 'logs', '-n', '5000']),
    ].flatMap((r) => [r.stdout, r.stderr]);
    for (const path of filesUnder(home))
      if (path.endsWith('.log') || path.includes('/logs/')) logs.push(readFileSync(path, 'utf8'));
    const logHits = logs.filter((text) => text.includes(secret) || text.includes(state.apiKey)).length;
    return {
      scenario:
        "cross-deployment reads: B's exec (node, sh) and module tools read the engine key, the store, A's bundle, A's /proc/PID/environ",
      result: `${leaked.length} of ${reads} reads returned a secret, ${logHits} log hits`,
      target: '0 reads, 0 log hits',
      met: leaked.length === 0 && logHits === 0 && answered === reads && ownOk === 3 && woke.text === 'set',
      notes: [
        `${targets.length} paths × 3 tools; ${answered} answered, ${gotFile} returned a file's content (redacted or not); their own tools.mjs: ${ownReads.join(', ')}`,
        ...(pidA === undefined ? ["A's instance pid unknown: /proc not tried"] : []),
        ...(woke.text === 'set' ? [] : [`A's tool answered ${JSON.stringify(woke.text.slice(0, 80))}`]),
        ...leaked.slice(0, 5),
      ],
    };
  } finally {
    await cleanHome(home);
  }
}

const ESC = '\x1b';
// writes the values of its arguments, decoded, on stderr and fails: they become the error and a log line
const ECHO =
  "let s='';process.stdin.on('data',(c)=>(s+=c)).on('end',()=>{process.stderr.write(Object.entries(JSON.parse(s)).flat().join(' '));process.exit(1)})";
// ESC, BEL and the one-byte CSI: what a terminal acts on
const CONTROL = new Set([0x1b, 0x07, 0x9b]);
const controlBytes = (text) => [...text].filter((c) => CONTROL.has(c.charCodeAt(0))).length;

/** Escape sequences sent anonymously in a tool name, arguments and headers; `mcpctl logs` must print them as text. */
export async function logInjection() {
  const home = newHome('injection');
  const word = `injected${randomBytes(6).toString('hex')}`;
  const clear = `${ESC}[2J${ESC}[H`;
  const title = `${ESC}]0;${word}\x07`;
  try {
    await startEngine(home);
    const file = writeServer(join(home, 'def'), [
      'name: target',
      'template: basic',
      'description: A server that writes its arguments to its log',
      'tools:',
      '  - name: echo',
      '    description: Writes its arguments on stderr and fails',
      '    inputSchema: { type: object }',
      '    handler:',
      '      type: exec',
      `      command: ${yamlList([process.execPath, '-e', ECHO])}`,
    ]);
    const deployment = await deploy(home, file, 'staging');
    const mcpUrl = `${deployment.url}/mcp`;
    await callTool(mcpUrl, 'echo', { text: `${clear}${title}${word}` });
    await callTool(mcpUrl, `${clear}${title}${word}`, {});
    await callTool(mcpUrl, 'echo', { [`${clear}${word}`]: `${ESC}[31m${word}` });
    // headers on a raw socket (an HTTP client refuses to send control bytes)
    const { host, port, pathname } = new URL(mcpUrl);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: word } },
    });
    for (const header of [
      `User-Agent: ${clear}${word}`,
      `X-MCP-User-Id: ${title}`,
      `Mcp-Session-Id: ${ESC}[31m${word}`,
    ]) {
      await rawExchange(
        port,
        `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n${header}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    const printed = [
      await mcpctl(home, ['logs', deployment.deployment_id, '-n', '5000']),
      await mcpctl(home, ['logs', deployment.deployment_id, '--since', '1h']),
    ];
    const text = printed.map((r) => r.stdout + r.stderr).join('');
    const raw = controlBytes(text);
    const shown = text.split(word).length - 1;
    return {
      scenario:
        'log injection: ESC sequences (clear screen, OSC title) in a tool name, arguments and headers, then `mcpctl logs`',
      result: `${raw} raw control bytes printed; the injected text shown ${shown} times`,
      target: '0 raw control bytes',
      met: raw === 0 && shown > 0,
      notes: printed.filter((r) => r.code !== 0).map((r) => `mcpctl logs exit ${r.code}: ${r.stderr.split('\n')[0]}`),
    };
  } finally {
    await cleanHome(home);
  }
}

export const adversaryScenarios = {
  isolation: crossDeploymentReads,
  ssrf,
  identity: spoofedIdentity,
  injection: logInjection,
  guessing: apiKeyGuessing,
  flooding: sessionFlooding,
};
