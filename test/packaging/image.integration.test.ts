/**
 * The image contract's command starts the real runtime (from dist/, so `npx tsc -p
 * tsconfig.build.json` first): the paths of the image are mapped onto this checkout and a bundle in a
 * temp folder, and the address onto loopback; every other argument is the contract's own.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { BUNDLE_DIR, bundleDigest, imageContract, RUNTIME_DIR } from '../../src/packaging/image.js';
import { writeBundle } from '../../src/runtime/host/bundle.js';
import { requireBuilt, ROOT } from '../support/app.js';

const REQUEST = {
  name: 'contract-check',
  template: 'basic' as const,
  tools: [
    {
      name: 'ping',
      description: 'Answers pong',
      inputSchema: { type: 'object' as const, properties: {} },
      handler: { type: 'static' as const, content: [{ type: 'text' as const, text: 'pong' }] },
    },
  ],
};

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the image contract', () => {
  it('its command starts the runtime on its port, /health answers, and SIGTERM stops it cleanly', async () => {
    requireBuilt();
    dir = await mkdtemp(join(tmpdir(), 'mcpctl-image-'));
    const bundle = await writeBundle(REQUEST, join(dir, 'bundles'));
    expect(bundleDigest(REQUEST)).toBe(bundle.digest);
    const contract = imageContract(bundle.digest);
    const [node, ...args] = contract.command;
    expect(node).toBe('node');
    const local = args.map((arg, i) => {
      if (arg.startsWith(`${RUNTIME_DIR}/`)) return join(ROOT, arg.slice(RUNTIME_DIR.length + 1));
      if (arg === BUNDLE_DIR) return bundle.dir;
      if (args[i - 1] === '--host') return '127.0.0.1';
      if (args[i - 1] === '--port') return '0';
      return arg;
    });
    expect(args[args.indexOf('--port') + 1]).toBe(String(contract.port));
    const child = spawn(process.execPath, local, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', ...contract.env },
    });
    try {
      const lines = createInterface({ input: child.stdout });
      const [first] = (await once(lines, 'line')) as [string];
      const listening = JSON.parse(first) as { event: string; url: string; name: string };
      expect(listening).toMatchObject({ event: 'listening', name: 'contract-check' });
      const health = await fetch(`${listening.url}${contract.healthPath}`);
      expect(health.status).toBe(200);
      await health.body?.cancel();
      const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
