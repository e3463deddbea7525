/**
 * One deployment cannot read the engine or another deployment: on the process runner, an exec
 * tool and a module tool of deployment B try to read the engine's key file and store (with A's
 * env_vars), A's bundle, A's process environment and the engine's own, and get nothing; with the
 * sandbox turned off (MCPCTL_SANDBOX=off) the same reads succeed, which is what the sandbox is for.
 * Real engine and runtime (from dist/), bubblewrap from the system; skipped where it is missing.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../../src/api/client.js';
import type { BuildRequestInput } from '../../../../src/api/contract.js';
import type { RunningEngine } from '../../../../src/engine/engine.js';
import { findSandbox } from '../../../../src/runtime/host/sandbox.js';
import { requireBuilt } from '../../../support/app.js';
import { realEnginePerTest } from '../../../support/engine.js';

beforeAll(() => requireBuilt());

const API_KEY = 'sandbox-test-key-0123456789abcdef0123';
const SECRET_A = 'secret-a-7f3e9c1d5b2a4e6f';
const PRIVATE_DATA = 'private-data-of-a-91c2d3e4';
const hasBubblewrap = findSandbox('auto', { home: '/nonexistent' }).sandbox !== undefined;

/** A holds a secret value and a private file of its bundle. */
const HOLDER: BuildRequestInput = {
  name: 'holder',
  template: 'custom',
  tools: [
    {
      name: 'noop',
      description: 'Does nothing',
      inputSchema: { type: 'object' },
      handler: { type: 'module', module: 'tool.mjs', export: 'noop' },
    },
  ],
  files: {
    'tool.mjs': { encoding: 'utf8', content: "export const noop = () => 'ok';\n" },
    'private.txt': { encoding: 'utf8', content: `${PRIVATE_DATA}\n` },
  },
};

const READ_SCRIPT =
  "let t='';process.stdin.on('data',c=>t+=c).on('end',()=>{const p=JSON.parse(t).path;try{process.stdout.write('read:'+require('fs').readFileSync(p,'utf8'))}catch(e){process.stdout.write('refused:'+e.code)}})";

/** B reads any path it is given, with an exec tool and with a module tool. */
const READER: BuildRequestInput = {
  name: 'reader',
  template: 'custom',
  tools: [
    {
      name: 'exec_read',
      description: 'Reads a file with a program',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      handler: { type: 'exec', command: [process.execPath, '-e', READ_SCRIPT] },
    },
    {
      name: 'module_read',
      description: 'Reads a file in the server process',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      handler: { type: 'module', module: 'read.mjs', export: 'read' },
    },
  ],
  files: {
    'read.mjs': {
      encoding: 'utf8',
      content:
        "import { readFileSync } from 'node:fs';\nexport const read = ({ path }) => { try { return 'read:' + readFileSync(path, 'utf8'); } catch (e) { return 'refused:' + e.code; } };\n",
    },
  },
};

const engines = realEnginePerTest(API_KEY);

/** The pid of the process whose environment holds `value` (A's instance), seen from here. */
async function pidHolding(value: string): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
    if (environ.includes(value)) return pid;
  }
  return undefined;
}

/** Deploys A and B, and has B read every place that holds A's values or the engine's: what each read returned. */
async function attack(
  env: Record<string, string>,
): Promise<{ answers: string[]; logs: string; engine: RunningEngine }> {
  const { engine, home } = await engines.start(env);
  // the daemon's key file, as `mcpctl engine start` writes it
  await writeFile(join(home, 'engine.json'), JSON.stringify({ api_key: API_KEY }), { mode: 0o600 });
  const api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  try {
    const a = await api.deploy({
      mcp_id: (await api.build(HOLDER)).mcp_id,
      environment: 'staging',
      config: { env_vars: { SECRET_A } },
    });
    expect(a.deployment.status).toBe('deployed');
    const b = await api.deploy({ mcp_id: (await api.build(READER)).mcp_id, environment: 'development' });
    expect(b.deployment.status).toBe('deployed');

    const storeDir = join(home, 'store', 'deployments');
    const bundles = join(home, 'bundles');
    const aPid = await pidHolding(SECRET_A);
    const targets = [
      join(home, 'engine.json'),
      ...(await readdir(storeDir)).map((name) => join(storeDir, name)),
      ...(await readdir(bundles)).map((name) => join(bundles, name, 'private.txt')),
      ...(aPid === undefined ? [] : [`/proc/${aPid}/environ`, `/proc/${aPid}/root${home}/engine.json`]),
      `/proc/${process.pid}/environ`,
      `/proc/${process.pid}/root${home}/engine.json`,
    ];
    const answers: string[] = [];
    const client = new Client({ name: 'sandbox-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${b.deployment.url}/mcp`)));
    for (const path of targets) {
      for (const tool of ['exec_read', 'module_read']) {
        const answer = await client.callTool({ name: tool, arguments: { path } });
        answers.push((answer.content as Array<{ text?: string }>).map((part) => part.text ?? '').join(''));
      }
    }
    await client.close();
    const logs = JSON.stringify(await engine.deployments!.logs(b.deployment.deployment_id, { limit: 5000 }));
    return { answers, logs, engine };
  } finally {
    await api.close();
  }
}

const leaked = (text: string) => [SECRET_A, PRIVATE_DATA, API_KEY].some((value) => text.includes(value));

describe.skipIf(!hasBubblewrap)('the process runner’s sandbox', () => {
  it('keeps a deployment from reading the engine’s key and store, another deployment’s bundle and either process', async () => {
    const { answers, logs, engine } = await attack({});
    expect(answers.length).toBeGreaterThanOrEqual(12);
    expect(answers.filter(leaked)).toEqual([]);
    expect(answers.every((answer) => answer.startsWith('refused:'))).toBe(true);
    expect(leaked(logs)).toBe(false);
    const health = (await (
      await fetch(`${engine.url}/v1/health`, { headers: { authorization: `Bearer ${API_KEY}` } })
    ).json()) as {
      data: { isolation?: { sandbox: string } };
    };
    expect(health.data.isolation?.sandbox).toBe('bubblewrap');
  });

  it('is what stops it: without the sandbox the same reads return the secrets', async () => {
    const { answers } = await attack({ MCPCTL_SANDBOX: 'off' });
    expect(answers.filter(leaked).length).toBeGreaterThan(0);
  });
});
