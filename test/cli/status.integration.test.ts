import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { startContractServer, type ContractServer } from '../support/contract-server.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';
import { contractDefinition } from '../support/contract-suite.js';

let server: ContractServer;
let sandbox: Sandbox;
let env: Record<string, string>;
let client: ApiClient;
let mcpId: string;

beforeEach(async () => {
  server = await startContractServer({ stepMs: 30 });
  sandbox = await createSandbox();
  env = { ...sandbox.env, MCPCTL_API_URL: server.url, MCPCTL_API_KEY: server.apiKey };
  client = new ApiClient({ baseUrl: server.url, apiKey: server.apiKey });
  mcpId = (await client.build(contractDefinition())).mcp_id;
});
afterEach(async () => {
  await client.close();
  await server.close();
  await sandbox.cleanup();
});

async function deployment(options: { async?: boolean } = {}): Promise<string> {
  return (await client.deploy({ mcp_id: mcpId, environment: 'staging' }, { async: options.async === true })).deployment.deployment_id;
}

const status = (args: string[], signal?: AbortSignal) => runCli(['status', ...args], { env, cwd: sandbox.dir, ...(signal === undefined ? {} : { signal }) });

describe('mcpctl status', () => {
  it('shows a deployed deployment, exit 0', async () => {
    const id = await deployment();
    const result = await status([id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`✔ ${id} is deployed (staging)`);
    expect(result.stdout).toMatch(/instances\s+1\/1 healthy/);
    expect(server.requestsTo(/\/status$/)[0]!.query.get('wait')).toBeNull();
  });

  it('--json is the deployment; --quiet its state (the id was given)', async () => {
    const id = await deployment();
    const json = await status([id, '--json']);
    expect(json.json()).toMatchObject({ deployment_id: id, status: 'deployed' });
    const quiet = await status([id, '--quiet']);
    expect(quiet.stdout).toBe('deployed\n');
  });

  it('a deployment still deploying is exit 0 without --watch', async () => {
    server.options.progress = 'hold';
    const id = await deployment({ async: true });
    const result = await status([id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/status\s+deploying/);
    expect(result.stdout).toMatch(/stage\s+starting instances 0\/1/);
    expect(result.stdout).toContain(`→ mcpctl status ${id} --watch`);
  });

  it('--watch follows until deployed', async () => {
    server.options.progress = 'polls';
    const id = await deployment({ async: true });
    const result = await status([id, '--watch', '--json']);
    expect(result.code).toBe(0);
    expect(result.json().status).toBe('deployed');
    expect(result.stderr).toContain(`deploying ${id} to staging: health checks (1/1 healthy)`);
    expect(result.stderr).toContain(`ok: deployed ${id}`);
  });

  it('--watch long-polls with the ETag it just read, so a change in between is seen at once', async () => {
    server.options.progress = 'hold';
    const id = await deployment({ async: true });
    // the deployment settles right after the first read: a long-poll without that read's ETag
    // would wait for a change that has already happened
    server.options.settleAfterRead = true;
    const result = await status([id, '--watch', '--timeout', '20', '--json']);
    expect(result.code).toBe(0);
    expect(result.json().status).toBe('deployed');
    const [read, ...polls] = server.requestsTo(/\/status$/);
    expect(read!.query.get('wait')).toBeNull();
    expect(polls.length).toBeGreaterThan(0);
    expect(polls[0]!.headers['if-none-match']).toBe('"1"');
    expect(server.expiredWaits).toBe(0);
  });

  it('--watch that times out is exit 8', async () => {
    server.options.progress = 'hold';
    const id = await deployment({ async: true });
    const result = await status([id, '--watch', '--timeout', '1', '--json']);
    expect(result.code).toBe(8);
    expect(result.json().status).toBe('deploying');
    expect(result.stderr).toContain(`it is safe to wait again: \`mcpctl status ${id} --watch\``);
  });

  it('Ctrl-C during --watch is exit 130', async () => {
    server.options.progress = 'hold';
    const id = await deployment({ async: true });
    const controller = new AbortController();
    const watching = status([id, '--watch'], controller.signal);
    for (let i = 0; i < 200 && server.requestsTo(/\/status$/).length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    const result = await watching;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain(`stopped waiting; deployment ${id} goes on`);
  });

  it('a failed deployment is exit 6', async () => {
    server.options.outcome = 'failed';
    const id = await deployment();
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
