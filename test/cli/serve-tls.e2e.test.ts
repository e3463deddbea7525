/**
 * `mcpctl serve --tls-cert --tls-key` with the real binary: HTTPS beside HTTP, the CLI on another
 * process trusting the private CA through NODE_EXTRA_CA_CERTS, and a key that is not the
 * certificate's refused at start with a message and the configuration exit code (no stack trace).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/shared/errors.js';
import { BIN, requireBuilt } from '../support/app.js';
import { createTestCa } from '../support/certificates.js';
import { createSandbox, runBin, type Sandbox } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

beforeAll(() => requireBuilt());

const API_KEY = 'serve-tls-test-key-0123456789abcdef';
const sandboxes: Sandbox[] = [];
const servers: ChildProcess[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    if (server.exitCode !== null || server.signalCode !== null) continue;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  for (const box of sandboxes.splice(0)) await box.cleanup();
});

/** Starts `mcpctl serve` and resolves with the line that says where it listens. */
function serve(box: Sandbox, args: string[], env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env: { ...box.env, MCPCTL_API_KEY: API_KEY, ...env },
    cwd: box.dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  servers.push(child);
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const line = /mcpctl engine listening on [^\n]*/.exec(stderr)?.[0];
      if (line !== undefined) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`mcpctl serve exited with ${String(code)}: ${stderr}`)));
  });
}

describe('mcpctl serve with HTTPS', () => {
  it('serves HTTPS beside HTTP, and the CLI uses it trusting a private CA', async () => {
    const box = await createSandbox();
    sandboxes.push(box);
    const ca = await createTestCa(box.dir);
    const { cert, key } = await ca.issue('engine', ['localhost']);
    const line = await serve(box, ['--tls-cert', cert, '--tls-key', key, '--tls-port', '0']);
    const [, http, https] = /listening on (http:\/\/\S+) and (https:\/\/\S+)/.exec(line) ?? [];
    expect(https).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const httpsUrl = https!.replace('127.0.0.1', 'localhost');

    const env = { ...box.env, MCPCTL_API_KEY: API_KEY, NODE_EXTRA_CA_CERTS: ca.caFile };
    const overHttps = await runBin(BIN, ['ls', '--json', '--api-url', httpsUrl], { env, cwd: box.dir });
    expect(overHttps.code, overHttps.stderr).toBe(0);
    expect(JSON.parse(overHttps.stdout)).toEqual({ servers: [], deployments: [] });
    const missing = await runBin(BIN, ['status', 'deploy_nothing', '--api-url', httpsUrl], { env, cwd: box.dir });
    expect(missing.stderr).toContain('no deployment deploy_nothing');
    // plain HTTP stays on: what the CLI on this machine uses by default
    const overHttp = await runBin(BIN, ['ls', '--json', '--api-url', http!], { env, cwd: box.dir });
    expect(overHttp.code, overHttp.stderr).toBe(0);
    // the engine's state says where HTTPS is
    const status = await runBin(BIN, ['engine', 'status', '--json'], { env, cwd: box.dir });
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, url: http, https_url: https });
    // without the CA the certificate is refused
    const untrusted = await runBin(BIN, ['ls', '--api-url', httpsUrl], {
      env: { ...env, NODE_EXTRA_CA_CERTS: '' },
      cwd: box.dir,
    });
    expect(untrusted.code).not.toBe(0);
  }, 60_000);

  it('reads renewed certificates on SIGHUP, for new connections', async () => {
    const box = await createSandbox();
    sandboxes.push(box);
    const ca = await createTestCa(box.dir);
    const { cert, key } = await ca.issue('engine', ['localhost']);
    // no polling of the files: only the signal can make it read them again
    const line = await serve(box, ['--tls-cert', cert, '--tls-key', key], { MCPCTL_TLS_WATCH_SECONDS: '0' });
    const port = Number(/https:\/\/127\.0\.0\.1:(\d+)/.exec(line)![1]);
    const serial = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: ca.ca }, () => {
          resolve(socket.getPeerCertificate().serialNumber);
          socket.end();
        });
        socket.once('error', reject);
      });
    const before = await serial();
    await ca.issue('engine', ['localhost']);
    servers[0]!.kill('SIGHUP');
    await waitFor('the renewed certificate', async () => ((await serial()) !== before ? true : undefined));
    // the engine is still up
    expect(servers[0]!.exitCode).toBeNull();
  }, 60_000);

  it('refuses a key that is not the certificate’s, saying which files and what to do', async () => {
    const box = await createSandbox();
    sandboxes.push(box);
    const ca = await createTestCa(box.dir);
    const one = await ca.issue('one', ['localhost']);
    const two = await ca.issue('two', ['localhost']);
    const result = await runBin(BIN, ['serve', '--port', '0', '--tls-cert', one.cert, '--tls-key', two.key], {
      env: { ...box.env, MCPCTL_API_KEY: API_KEY },
      cwd: box.dir,
    });
    expect(result.code).toBe(EXIT.config);
    expect(result.stderr).toContain(`the TLS key ${two.key} does not belong to the certificate ${one.cert}`);
    expect(result.stderr).toContain('give the key the certificate was issued for');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
