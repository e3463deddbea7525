import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/client.js';
import type { ServerRecord } from '../../src/engine/records.js';
import { runCli, type Sandbox } from '../support/cli.js';
import { contractDefinition } from '../support/contract-suite.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { startProxy, type Proxy } from '../support/proxy.js';
import { waitFor } from '../support/wait.js';

let t: TestEngine;
let server: Proxy;
let sandbox: Sandbox;
let env: Record<string, string>;
let client: ApiClient;
let mcpId: string;

beforeEach(async () => {
  t = await startTestEngine();
  server = await startProxy(t.engine.url);
  sandbox = t.sandbox;
  env = { ...t.env, MCPCTL_API_URL: server.url };
  client = t.client;
  mcpId = (await client.build(contractDefinition())).mcp_id;
});
afterEach(async () => {
  await server.close();
  await t.close();
});

/** A server whose instances start as `settings` say (test/fixtures/instance): slowly, or not at all. */
const fixture = (settings: Record<string, unknown>): Promise<ServerRecord> => t.addServer('contract-weather', settings);
/** Instances that take longer to start than a test runs: the deployment stays deploying. */
const HOLD = { listenDelayMs: 60_000 };

async function deployment(options: { async?: boolean; server?: ServerRecord } = {}): Promise<string> {
  const id = options.server?.server.mcp_id ?? mcpId;
  return (await client.deploy({ mcp_id: id, environment: 'staging' }, { async: options.async === true })).deployment
    .deployment_id;
}

const status = (args: string[], signal?: AbortSignal) =>
  runCli(['status', ...args], { env, cwd: sandbox.dir, ...(signal === undefined ? {} : { signal }) });

describe('mcpctl status', () => {
  it('shows a deployed deployment, exit 0', async () => {
    const id = await deployment();
    const result = await status([id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`✔ ${id} is deployed (staging)`);
    expect(result.stdout).toMatch(/instances\s+1\/1 healthy/);
    expect(server.requestsTo(/\/status$/)[0]!.query.get('wait')).toBeNull();
  });

  it('shows the notices the deploy said only with --verbose; --json has them always', async () => {
    const id = (await client.deploy({ mcp_id: mcpId, environment: 'production' })).deployment.deployment_id;
    const json = (await status([id, '--json'])).json();
    const notices = json.notices as string[];
    expect(notices.length).toBeGreaterThan(0);
    const plain = await status([id]);
    expect(plain.code).toBe(0);
    for (const notice of notices) expect(plain.stdout + plain.stderr).not.toContain(notice.slice(0, 40));
    const verbose = await status([id, '--verbose']);
    expect(verbose.code).toBe(0);
    for (const notice of notices) expect(verbose.stdout).toContain(`! ${notice.slice(0, 40)}`);
  });

  it('--json is the deployment; --quiet its state (the id was given)', async () => {
    const id = await deployment();
    const json = await status([id, '--json']);
    expect(json.json()).toMatchObject({ deployment_id: id, status: 'deployed' });
    const quiet = await status([id, '--quiet']);
    expect(quiet.stdout).toBe('deployed\n');
  });

  it('a deployment still deploying is exit 0 without --watch', async () => {
    const id = await deployment({ async: true, server: await fixture(HOLD) });
    const result = await status([id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/status\s+deploying/);
    expect(result.stdout).toMatch(/stage\s+starting instances 0\/1/);
    expect(result.stdout).toContain(`→ mcpctl status ${id} --watch`);
  });

  it('--watch follows until deployed', async () => {
    // a service that does not long-poll: it answers at once whatever `wait` says
    server.inject({ path: /\/status$/, fault: { type: 'ignore', query: ['wait'] } });
    const id = await deployment({ async: true, server: await fixture({ listenDelayMs: 300 }) });
    const result = await status([id, '--watch', '--json']);
    expect(result.code).toBe(0);
    expect(result.json().status).toBe('deployed');
    expect(result.stderr).toContain(`deploying ${id} to staging: starting instances 0/1 (0/1 healthy)`);
    expect(result.stderr).toContain(`ok: deployed ${id}`);
  });

  it('--watch long-polls with the ETag it just read, so a change in between is seen at once', async () => {
    const id = await deployment({ async: true, server: await fixture({ listenDelayMs: 1500 }) });
    // the deployment settles right after the first read: the first long-poll reaches the engine
    // only once it has, and without that read's ETag it would wait for a change that has already happened
    let release!: () => void;
    server.inject({
      path: /\/status$/,
      when: (r) => r.query.get('wait') !== null,
      times: 1,
      fault: { type: 'hold', until: new Promise<void>((resolve) => (release = resolve)) },
    });
    const watching = status([id, '--watch', '--timeout', '20', '--json']);
    await waitFor('the deployment to settle', async () =>
      (await client.status(id)).deployment?.status === 'deployed' ? true : undefined,
    );
    release();
    const result = await watching;
    expect(result.code).toBe(0);
    expect(result.json().status).toBe('deployed');
    const [read, ...polls] = server.requestsTo(/\/status$/);
    expect(read!.query.get('wait')).toBeNull();
    expect(polls.length).toBeGreaterThan(0);
    expect(polls[0]!.headers['if-none-match']).toBe(read!.response!.headers.etag);
    // no long-poll sat out its wait: each answered with a version newer than the one it named
    expect(polls.filter((p) => p.response?.headers.etag === p.headers['if-none-match'])).toEqual([]);
  });

  it('--watch that times out is exit 8', async () => {
    const id = await deployment({ async: true, server: await fixture(HOLD) });
    const result = await status([id, '--watch', '--timeout', '1', '--json']);
    expect(result.code).toBe(8);
    expect(result.json().status).toBe('deploying');
    expect(result.stderr).toContain(`it is safe to wait again: \`mcpctl status ${id} --watch\``);
  });

  it('Ctrl-C during --watch is exit 130', async () => {
    const id = await deployment({ async: true, server: await fixture(HOLD) });
    const controller = new AbortController();
    const watching = status([id, '--watch'], controller.signal);
    await waitFor('a second status request', () => server.requestsTo(/\/status$/)[1]);
    controller.abort();
    const result = await watching;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain(`stopped waiting; deployment ${id} goes on`);
  });

  it('a failed deployment is exit 6', async () => {
    const id = await deployment({ server: await fixture({ failStart: true }) });
    const result = await status([id]);
    expect(result.code).toBe(6);
    expect(result.stdout).toContain(`✖ ${id} failed (staging)`);
    expect(result.stderr).toContain(`mcpctl logs ${id}`);
  });

  it('a stopped deployment is exit 0', async () => {
    const id = await deployment();
    await client.stop(id);
    const result = await status([id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${id} is stopped`);
  });

  it('an unknown id is exit 2 (404); a malformed one is caught before asking', async () => {
    const unknown = await status(['deploy_doesnotexist', '--json']);
    expect(unknown.code).toBe(2);
    expect(unknown.json().error).toMatchObject({ code: 'not_found', exit_code: 2 });
    const before = server.requests.length;
    const malformed = await status([mcpId]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('that is a server id');
    expect(server.requests.length).toBe(before);
  });

  it('a service that cannot be reached is exit 4', async () => {
    const id = await deployment();
    await server.close();
    const result = await status([id]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('connection refused');
  });
});
