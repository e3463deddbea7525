/**
 * `mcpctl dev` on an address other machines reach: refused without --allow-remote, before any
 * socket is bound, since every tool would run with the developer's environment for the network.
 */
import { cp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDevHost, isLoopbackHost } from '../../src/cli/steps/dev-host.js';
import { startDev } from '../support/dev-session.js';
import { FIXTURES, makeTempDir } from '../support/runtime.js';

/** A port free on 127.0.0.1 right now (bound and released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** True when 127.0.0.1:port can be bound, so nothing (a wildcard bind included) holds it. */
async function canBind(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('mcpctl dev --host', () => {
  it('ATTACK: --host 0.0.0.0 without --allow-remote is refused with exit 2, and nothing listens', async () => {
    await using temp = await makeTempDir();
    await cp(join(FIXTURES, 'dev'), join(temp.path, 'dev'), { recursive: true });
    const port = await freePort();
    await using dev = startDev([join(temp.path, 'dev', 'server.yaml'), '--host', '0.0.0.0', '--port', String(port)]);
    await dev.waitFor(
      /error: --host 0\.0\.0\.0 would serve every tool of .*server\.yaml, running with your whole environment/,
      'stderr',
    );
    expect(await dev.stop()).toBe(2);
    expect(dev.stderr()).toContain('add --allow-remote');
    expect(dev.stdout()).not.toContain('is serving');
    expect(await canBind(port)).toBe(true);
  });

  it('knows loopback addresses from the rest', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of [
      '0.0.0.0',
      '::',
      '192.168.1.20',
      '10.0.0.1',
      'fe80::1',
      '::ffff:10.0.0.1',
      'my-laptop.local',
      'example.com',
    ]) {
      expect(isLoopbackHost(host)).toBe(false);
    }
  });

  it('with --allow-remote, a warning that says what is exposed', () => {
    expect(checkDevHost('127.0.0.1', false, 'server.yaml')).toBeUndefined();
    expect(() => checkDevHost('192.168.1.20', false, 'server.yaml')).toThrow(
      /--host 192\.168\.1\.20 would serve every tool of server\.yaml/,
    );
    expect(checkDevHost('0.0.0.0', true, 'server.yaml')).toMatch(
      /^--allow-remote: serving every tool of server\.yaml, running with your whole environment .* to anyone who can reach 0\.0\.0\.0/,
    );
  });
});
