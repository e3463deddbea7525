#!/usr/bin/env node
// Would one shared process for declarative servers pay? N one-tool declarative servers (no module
// code) served by one process (bench/shared-host.js: a runtime, an HTTP server and a port each)
// against N instances as the engine runs them (a warm pool process each, handed its bundle), both
// idle 45 s after start (V8's memory reducer has run), each answering a tools/call first.
// Usage: node bench/shared-runtime.js [--servers 20] [--json]   (needs `npm run build` first)
// Every process started here is stopped here; requests go to 127.0.0.1 only.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { report, rssMb, startProcess, toolCall } from './load.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const servers = args.includes('--servers') ? Number(args[args.indexOf('--servers') + 1]) : 20;
const asJson = args.includes('--json');
const IDLE_MS = 45_000;

const temp = mkdtempSync(join(tmpdir(), 'mcpctl-bench-shared-'));
const stops = [];
try {
  const { writeBundle } = await import(join(root, 'dist', 'runtime', 'host', 'bundle.js'));
  const { spawnWarmRuntimeProcess } = await import(join(root, 'dist', 'runtime', 'host', 'process.js'));
  const dirs = [];
  for (let i = 0; i < servers; i++) {
    const { dir } = await writeBundle(
      {
        name: `shared-${i}`,
        template: 'basic',
        tools: [
          {
            name: 'echo',
            description: 'echo',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
            handler: { type: 'static', content: [{ type: 'text', text: `${i}: {{args.text}}` }] },
          },
        ],
      },
      temp,
    );
    dirs.push(dir);
  }
  const shared = await startProcess([join(root, 'bench', 'shared-host.js'), ...dirs], { cwd: root });
  stops.push(shared.stop);
  const own = [];
  for (const dir of dirs) {
    const instance = await spawnWarmRuntimeProcess().serve({ bundleDir: dir });
    stops.push(() => instance.stop());
    own.push(instance);
  }
  const sharedPorts = shared.listening.ports;
  for (let i = 0; i < servers; i++) {
    await answers(sharedPorts[i], i);
    await answers(own[i].port, i);
  }
  await sleep(IDLE_MS);
  const sharedMb = rssMb(shared.pid);
  const ownMb = own.reduce((sum, instance) => sum + rssMb(instance.pid), 0);
  report(
    {
      name: `RSS of ${servers} declarative servers in one shared process`,
      value: sharedMb,
      unit: 'MB',
      reference: ownMb,
      referenceName: `${servers} instances, one process each`,
    },
    asJson,
  );
  report(
    {
      name: 'RSS each server adds to a shared process',
      value: (sharedMb - ownMb / servers) / (servers - 1),
      unit: 'MB',
      reference: ownMb / servers,
      referenceName: 'an instance of its own',
    },
    asJson,
  );
} finally {
  for (const stop of stops) await stop();
  rmSync(temp, { recursive: true, force: true });
}

/** Fails unless server `i` on `port` answers its tools/call. */
async function answers(port, i) {
  const { body, headers } = toolCall('2026', 'echo', { text: 'hi' });
  const response = await globalThis.fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  });
  const text = await response.text();
  if (!text.includes(`${i}: hi`)) throw new Error(`server ${i} on port ${port} answered ${response.status}: ${text}`);
}
