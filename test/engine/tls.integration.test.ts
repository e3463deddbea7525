/**
 * HTTPS in the engine's gateway: certificates from a private CA (made with openssl), one per domain
 * chosen by SNI on one port, a wildcard one, the default one; the official MCP SDK client calls a
 * tool over HTTPS for two domains; deployments say which HTTPS applies and show their stable
 * URLs; a certificate replaced on disk is served to new connections while open ones stay; a bad
 * certificate or key stops the start with a message that names the file.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { Agent as HttpsAgent } from 'node:https';
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import type { LookupFunction } from 'node:net';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import type { BuildRequestInput, Deployment } from '../../src/api/contract.js';
import { EngineConfigError, type RunningEngine } from '../../src/engine/engine.js';
import { createTestCa, type TestCa } from '../support/certificates.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';
import { startRealEngine } from '../support/engine.js';
import { waitFor } from '../support/wait.js';

const API_KEY = 'tls-test-key-0123456789abcdefghij';

const definition = (name: string): BuildRequestInput => ({
  name,
  template: 'basic',
  // routed by a domain: public on purpose
  auth: { type: 'none' },
  tools: [
    {
      name: 'greet',
      description: 'Greets someone by name',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      handler: { type: 'static', content: [{ type: 'text', text: `${name} says hello to {{args.name}}` }] },
    },
  ],
});

let sandbox: Sandbox;
let ca: TestCa;
let engine: RunningEngine;
let api: ApiClient;
let alpha: Deployment;
let beta: Deployment;
let certsDir: string;
/** every name resolves to the engine on loopback; the CA is the test's own */
let dispatcher: Agent;

beforeAll(async () => {
  sandbox = await createSandbox();
  const home = sandbox.env.MCPCTL_HOME!;
  ca = await createTestCa(sandbox.dir);
  // the home's certificates folder: a pair of files, and a certbot-like sub-folder with a wildcard
  certsDir = join(home, 'certs');
  await mkdir(join(certsDir, 'beta'), { recursive: true });
  await ca.issue('alpha', ['alpha.example.test'], { dir: certsDir });
  const wildcard = await ca.issue('beta-wildcard', ['*.beta.example.test']);
  await rename(wildcard.cert, join(certsDir, 'beta', 'fullchain.pem'));
  await rename(wildcard.key, join(certsDir, 'beta', 'privkey.pem'));
  // the default certificate: the engine's loopback names
  const fallback = await ca.issue('default', ['*.production.localhost', 'localhost']);
  engine = await startRealEngine(home, { apiKey: API_KEY, tls: { cert: fallback.cert, key: fallback.key, port: 0 } });
  api = new ApiClient({ baseUrl: engine.url, apiKey: API_KEY });
  dispatcher = new Agent({ connect: { ca: ca.ca, lookup: toLoopback } });
  const [a, b] = await Promise.all([api.build(definition('alpha')), api.build(definition('beta'))]);
  [alpha, beta] = await Promise.all([
    api
      .deploy({ mcp_id: a.mcp_id, environment: 'development', config: { domain: 'alpha.example.test' } })
      .then((answer) => answer.deployment),
    api
      .deploy({ mcp_id: b.mcp_id, environment: 'development', config: { domain: 'mcp.beta.example.test' } })
      .then((answer) => answer.deployment),
  ]);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await dispatcher?.close();
  await engine?.close(1000);
  await sandbox?.cleanup();
});

/** A DNS lookup that answers loopback for every name. */
const toLoopback = ((
  _host: string,
  options: { all?: boolean },
  callback: (error: null, address: unknown, family?: number) => void,
) => {
  if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}) as unknown as LookupFunction;

/** The certificate a client asking for `servername` gets on the HTTPS port (whether it covers that name or not). */
function peerCertificate(servername: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: '127.0.0.1', port: engine.tls!.port, servername, ca: ca.ca, checkServerIdentity: () => undefined },
      () => {
        const certificate = socket.getPeerCertificate();
        socket.end();
        resolve(certificate);
      },
    );
    socket.once('error', reject);
  });
}

async function greetOverHttps(url: string, name: string): Promise<string | undefined> {
  // on a busy machine an instance may miss a health check; the call is about HTTPS, not that
  const health = url.replace(/\/mcp$/, '/health');
  await waitFor(`${health} to be healthy`, async () =>
    (await undiciFetch(health, { dispatcher })).status === 200 ? true : undefined,
  );
  const client = new Client({ name: 'tls-test', version: '1.0.0' });
  const fetchWithCa = (input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithCa }));
  try {
    const result = await client.callTool({ name: 'greet', arguments: { name } });
    return (result.content as Array<{ text?: string }>)[0]?.text;
  } finally {
    await client.close();
  }
}

// generous: real runtimes on a machine that may be busy
describe('HTTPS in the gateway', { timeout: 120_000 }, () => {
  it('serves each domain its own certificate on one port (SNI), wildcards included, and the default for other names', async () => {
    expect(engine.tls?.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await peerCertificate('alpha.example.test')).subject.CN).toBe('alpha.example.test');
    expect((await peerCertificate('mcp.beta.example.test')).subject.CN).toBe('*.beta.example.test');
    // a wildcard covers one label only: a deeper name gets the default
    expect((await peerCertificate('a.mcp.beta.example.test')).subject.CN).toBe('*.production.localhost');
    expect((await peerCertificate('nothing.example.test')).subject.CN).toBe('*.production.localhost');
  });

  it('answers tools/call over HTTPS for two domains with the official MCP client', async () => {
    const port = engine.tls!.port;
    expect(await greetOverHttps(`https://alpha.example.test:${port}/mcp`, 'Ada')).toBe('alpha says hello to Ada');
    expect(await greetOverHttps(`https://mcp.beta.example.test:${port}/mcp`, 'Bob')).toBe('beta says hello to Bob');
    // the /v1 API answers over HTTPS too
    const agent = new HttpsAgent({ ca: ca.ca, lookup: toLoopback });
    const overHttps = new ApiClient({ baseUrl: `https://localhost:${port}`, apiKey: API_KEY, agent });
    try {
      expect((await overHttps.status(alpha.deployment_id)).deployment?.status).toBe('deployed');
    } finally {
      await overHttps.close();
      agent.destroy();
    }
  });

  it('shows the stable URLs and which HTTPS applies in each deployment answer', async () => {
    const port = engine.tls!.port;
    const httpPort = engine.port;
    expect(alpha.stable_urls).toEqual([
      `https://alpha.example.test:${port}/mcp`,
      `http://alpha.development.localhost:${httpPort}/mcp`,
      `${engine.url}/d/alpha.development/mcp`,
    ]);
    expect(alpha.notices).toContain(
      `HTTPS: served by this engine’s gateway with the certificate for alpha.example.test (port ${port}); DNS for alpha.example.test is yours to set up`,
    );
    expect((await api.status(beta.deployment_id)).deployment?.stable_urls?.[0]).toBe(
      `https://mcp.beta.example.test:${port}/mcp`,
    );

    // no certificate covers this domain: plain HTTP, and the notice says how to get HTTPS
    // (the answers given while deploying carry them already)
    const gamma = (
      await api.deploy(
        { mcp_id: alpha.mcp_id!, environment: 'staging', config: { domain: 'gamma.example.org' } },
        { async: true },
      )
    ).deployment;
    expect(gamma.stable_urls?.[0]).toBe(`http://gamma.example.org:${httpPort}/mcp`);
    expect(gamma.notices!.join('\n')).toMatch(
      /no certificate for gamma\.example\.org: it is served over plain HTTP only; give the engine a certificate and key \(`mcpctl serve --tls-cert/,
    );

    // production without a domain: the default certificate covers <server>.production.localhost
    const prod = (await api.deploy({ mcp_id: alpha.mcp_id!, environment: 'production' }, { async: true })).deployment;
    expect(prod.stable_urls).toEqual([
      `https://alpha.production.localhost:${port}/mcp`,
      `http://alpha.production.localhost:${httpPort}/mcp`,
      `${engine.url}/d/alpha.production/mcp`,
    ]);
    expect(prod.notices!.join('\n')).toContain(`HTTPS: served by this engine’s gateway on port ${port}`);
  });

  it('works from the CLI: ls and status against an engine that serves HTTPS', async () => {
    const env = { ...sandbox.env, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: API_KEY };
    const ls = await runCli(['ls', '--deployments', '--json'], { env, cwd: sandbox.dir });
    expect(ls.code, ls.stderr).toBe(0);
    const listed = ls.json().deployments.find((d: Deployment) => d.deployment_id === alpha.deployment_id);
    expect(listed.stable_urls[0]).toBe(`https://alpha.example.test:${engine.tls!.port}/mcp`);
    const status = await runCli(['status', alpha.deployment_id], { env, cwd: sandbox.dir });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(`domain URL\\s+https://alpha\\.example\\.test:${engine.tls!.port}/mcp\\n`),
    );
  });

  it('serves a renewed certificate to new connections and keeps the open ones', async () => {
    const open = await new Promise<TLSSocket>((resolve, reject) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port: engine.tls!.port, servername: 'alpha.example.test', ca: ca.ca },
        () => resolve(socket),
      );
      socket.once('error', reject);
    });
    const before = open.getPeerCertificate().serialNumber;
    // renewal as certbot does it: new files in place
    await ca.issue('alpha', ['alpha.example.test'], { dir: certsDir });
    expect(await engine.tls!.listener.reload('test')).toBe(true);
    const after = await peerCertificate('alpha.example.test');
    expect(after.serialNumber).not.toBe(before);
    // the connection opened before the renewal still carries requests
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      open.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\r\n\r\n')) resolve(text);
      });
      open.once('error', reject);
      open.write('GET /health HTTP/1.1\r\nHost: alpha.example.test\r\nConnection: close\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    open.destroy();
    // a broken file is not taken: the served certificates stay
    await writeFile(join(certsDir, 'alpha.pem'), 'not a certificate');
    expect(await engine.tls!.listener.reload('test')).toBe(false);
    expect((await peerCertificate('alpha.example.test')).serialNumber).toBe(after.serialNumber);
    await ca.issue('alpha', ['alpha.example.test'], { dir: certsDir });
    // the file watcher reloads by itself
    await waitFor('the watcher to reload', async () =>
      (await peerCertificate('alpha.example.test')).serialNumber !== after.serialNumber ? true : undefined,
    );
  });
});

describe('HTTPS settings that cannot work', () => {
  it('stops the start with the file, what is wrong and what to do', async () => {
    const box = await createSandbox();
    try {
      const one = await ca.issue('one', ['one.example.test'], { dir: box.dir });
      const two = await ca.issue('two', ['two.example.test'], { dir: box.dir });
      const start = (tls: { cert: string; key: string }) =>
        startRealEngine(box.env.MCPCTL_HOME!, { apiKey: API_KEY, tls: { ...tls, port: 0 } });

      const mismatch = await start({ cert: one.cert, key: two.key }).catch((error: unknown) => error);
      expect(mismatch).toBeInstanceOf(EngineConfigError);
      expect((mismatch as Error).message).toBe(
        `HTTPS cannot start: the TLS key ${two.key} does not belong to the certificate ${one.cert} (CN=one.example.test; --tls-cert and --tls-key): give the key the certificate was issued for`,
      );
      const missing = await start({ cert: join(box.dir, 'nope.pem'), key: one.key }).catch((error: unknown) => error);
      expect((missing as Error).message).toBe(
        `HTTPS cannot start: the TLS certificate file ${join(box.dir, 'nope.pem')} (--tls-cert and --tls-key) does not exist: give the path of a readable PEM certificate file`,
      );
      await writeFile(join(box.dir, 'garbage.key'), 'hello');
      const garbage = await start({ cert: one.cert, key: join(box.dir, 'garbage.key') }).catch(
        (error: unknown) => error,
      );
      expect((garbage as Error).message).toMatch(
        /the TLS key .*garbage\.key \(--tls-cert and --tls-key\) is not a PEM private key/,
      );

      // engine-settings.json: a certificate without its key
      await mkdir(box.env.MCPCTL_HOME!, { recursive: true });
      await writeFile(join(box.env.MCPCTL_HOME!, 'engine-settings.json'), JSON.stringify({ tls: { cert: one.cert } }));
      const half = await startRealEngine(box.env.MCPCTL_HOME!, { apiKey: API_KEY }).catch((error: unknown) => error);
      expect((half as Error).message).toMatch(
        /"tls\.cert" in .*engine-settings\.json is set but --tls-key \(MCPCTL_TLS_KEY\) is not/,
      );
    } finally {
      await box.cleanup();
    }
  });
});
