import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyDeployFlags, configFromDefinition, parseEnvFile } from '../../src/cli/steps/deploy-config.js';
import { UserError } from '../../src/shared/errors.js';
import type { Deployment } from '../../src/api/contract.js';
import { runCli, WEATHER_YAML, type Sandbox } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';
import { startProxy, type Proxy } from '../support/proxy.js';
import { waitFor } from '../support/wait.js';

let t: TestEngine;
let server: Proxy;
let sandbox: Sandbox;
let env: Record<string, string>;
let mcpId: string;

async function buildOnce(): Promise<string> {
  const result = await runCli(['build', 'weather.yaml', '--quiet'], { env, cwd: sandbox.dir });
  expect(result.code).toBe(0);
  return result.stdout.trim();
}

/** An engine per case, behind a recording proxy, with weather.yaml built once: for the cases that deploy. */
function withBuiltServer(): void {
  beforeEach(async () => {
    t = await startTestEngine();
    server = await startProxy(t.engine.url);
    sandbox = t.sandbox;
    env = { ...t.env, MCPCTL_API_URL: server.url, WEATHER_TOKEN: 'tok-123' };
    await writeFile(join(sandbox.dir, 'weather.yaml'), WEATHER_YAML);
    mcpId = await buildOnce();
    server.requests.length = 0;
  });
  afterEach(async () => {
    await server.close();
    await t.close();
  });
}

/** A built server whose instances start as `settings` say (test/fixtures/instance): slowly, or not at all. */
async function fixture(settings: Record<string, unknown>): Promise<string> {
  return (await t.addServer('weather', settings)).server.mcp_id;
}
/** Instances that take longer to start than a test runs: the deployment stays deploying. */
const HOLD = { listenDelayMs: 60_000 };

/** The deployments the engine holds, newest first. */
const deployments = (): Promise<Deployment[]> => t.client.listDeployments();

const deploy = (args: string[], options: { env?: Record<string, string>; signal?: AbortSignal } = {}) =>
  runCli(['deploy', ...args], {
    env: { ...env, ...options.env },
    cwd: sandbox.dir,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });

function deployBody(): unknown {
  return server.requestsTo('/v1/deploy', 'POST')[0]!.body;
}

describe('mcpctl deploy', () => {
  withBuiltServer();

  it('deploys an id asynchronously and follows the status to deployed', async () => {
    const result = await deploy([mcpId, '--env', 'production']);
    expect(result.code).toBe(0);
    const [d] = await deployments();
    const id = d!.deployment_id;
    expect(result.stdout).toContain('✔ Deployed');
    expect(result.stdout).toMatch(new RegExp(`deployment\\s+${id}`));
    expect(result.stdout).toMatch(/environment\s+production/);
    // the URL to connect to follows redeploys: the path form of the stable URLs
    expect(result.stdout).toMatch(new RegExp(`mcp endpoint\\s+${t.engine.url}/d/weather\\.production/mcp\n`));
    expect(result.stdout).toContain(`→ connect an MCP client to ${t.engine.url}/d/weather.production/mcp`);
    expect(result.stdout).toMatch(new RegExp(`health\\s+${d!.health_check}`));
    expect(result.stdout).toMatch(/instances\s+2\/2 healthy/);
    expect(result.stdout).toMatch(/deploy time\s+\d+(\.\d+)? s/);
    expect(result.stdout).toContain('! single machine');
    // *.localhost names are left out: Node's resolver (and many others) does not resolve them
    expect(result.stdout).not.toContain('.localhost');
    expect(result.stdout).toContain(
      '! no HTTPS: the URLs are plain HTTP on this host; give the engine a certificate and key',
    );
    expect(result.stderr).toMatch(/ok: deployed deploy_\w+ in \d+(\.\d+)? s/);
    expect(server.requestsTo('/v1/deploy')[0]!.headers.prefer).toBe('respond-async');
    const polls = server.requestsTo(/\/status$/);
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((p) => p.query.get('wait') !== null)).toBe(true);
    expect(deployBody()).toEqual({ mcp_id: mcpId, environment: 'production' });
  });

  it('--json prints the settled deployment as the one document; --quiet only the id', async () => {
    const json = await deploy([mcpId, '--json']);
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({ status: 'deployed', environment: 'development', mcp_id: mcpId });
    expect(json.json().stable_urls).toEqual([
      `http://weather.development.localhost:${new URL(t.engine.url).port}/mcp`,
      `${t.engine.url}/d/weather.development/mcp`,
    ]);
    const quiet = await deploy([mcpId, '--quiet']);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/^deploy_[a-z0-9]+\n$/);
  });

  it('builds a file first, takes the environment and env_vars from its deploy section', async () => {
    const result = await deploy(['weather.yaml', '--json']);
    expect(result.code).toBe(0);
    expect(server.requestsTo('/v1/build')).toHaveLength(1);
    expect(deployBody()).toEqual({
      mcp_id: mcpId,
      environment: 'staging',
      config: { env_vars: { API_TOKEN: 'tok-123' } },
    });
  });

  it('merges environments.<env> over the top level, then flags over the file', async () => {
    // a domain exposes it: the definition says who may call it (auth: none, public on purpose)
    await writeFile(join(sandbox.dir, 'weather.yaml'), `${WEATHER_YAML}auth: { type: none }\n`);
    await writeFile(join(sandbox.dir, 'extra.env'), '# extra\nexport MODE="fast lane"\nLEVEL=3 # comment\n');
    const result = await deploy(
      [
        'weather.yaml',
        '--env',
        'production',
        '--max-instances',
        '6',
        '--domain',
        'weather.example.com',
        '--env-file',
        'extra.env',
        '--env-var',
        'SHELL_ONLY',
      ],
      { env: { SHELL_ONLY: 'from-shell' } },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(deployBody()).toEqual({
      mcp_id: expect.stringMatching(/^mcp_/),
      environment: 'production',
      config: {
        domain: 'weather.example.com',
        scaling: { min_instances: 2, max_instances: 6 },
        env_vars: { API_TOKEN: 'tok-123', REGION: 'eu', MODE: 'fast lane', LEVEL: '3', SHELL_ONLY: 'from-shell' },
      },
    });
  });

  it('a ${VAR} of the file that is not set is a configuration error (exit 3) naming it, and nothing is sent', async () => {
    const { WEATHER_TOKEN: _unset, ...without } = env;
    const result = await runCli(['deploy', 'weather.yaml'], { env: without, cwd: sandbox.dir });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('WEATHER_TOKEN is not set');
    expect(result.stderr).toContain('deploy.env_vars.API_TOKEN');
    expect(server.requests).toHaveLength(0);
  });

  it('--env-var of an unset variable is a configuration error (exit 3) naming it', async () => {
    const result = await deploy([mcpId, '--env-var', 'NOT_THERE']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('--env-var: NOT_THERE is not set in this environment');
    expect(server.requests).toHaveLength(0);
  });

  it('a domain for a definition without auth is exit 2 naming auth, and nothing runs', async () => {
    const result = await deploy(['weather.yaml', '--env', 'production', '--domain', 'weather.example.com']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('would be reachable beyond this machine');
    expect(result.stderr).toMatch(/auth\s+add auth to the definition/);
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(await deployments()).toEqual([]);
  });

  it('a variable the server needs that the file does not pass is refused before anything is built', async () => {
    await writeFile(
      join(sandbox.dir, 'secured.yaml'),
      `name: secured
template: basic
auth: { type: bearer, token: "\${MCP_AUTH_TOKEN}" }
tools:
  - name: ping
    description: Answers pong
    inputSchema: { type: object }
    handler: { type: static, content: [{ type: text, text: pong }] }
`,
    );
    const result = await runCli(['deploy', 'secured.yaml', '--json'], {
      env: { ...env, MCP_AUTH_TOKEN: 's3cret' },
      cwd: sandbox.dir,
    });
    expect(result.code).toBe(2);
    expect(result.json().error).toEqual({
      code: 'missing_env_var',
      message: 'secured needs MCP_AUTH_TOKEN when it starts, and this deployment does not pass it',
      exit_code: 2,
      problems: [
        { where: 'secured.yaml:3:30', path: 'auth.token', message: 'uses ${MCP_AUTH_TOKEN} without a default' },
      ],
      hint: 'pass it with --env-var MCP_AUTH_TOKEN (its value comes from your environment), or list it under deploy.env_vars in secured.yaml',
    });
    expect(server.requests).toHaveLength(0);
    const passed = await runCli(['deploy', 'secured.yaml', '--env-var', 'MCP_AUTH_TOKEN', '--json'], {
      env: { ...env, MCP_AUTH_TOKEN: 's3cret' },
      cwd: sandbox.dir,
    });
    expect(passed.code).toBe(0);
    expect(deployBody()).toMatchObject({ config: { env_vars: { MCP_AUTH_TOKEN: 's3cret' } } });
  });

  it('a bad --env-file line is exit 2 with file:line', async () => {
    await writeFile(join(sandbox.dir, 'bad.env'), 'GOOD=1\nthis is not an assignment\n');
    const result = await deploy([mcpId, '--env-file', 'bad.env']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bad.env:2  expected NAME=value');
  });

  it('--no-wait prints the id and status and does not poll', async () => {
    const result = await deploy([mcpId, '--no-wait']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Deployment deploy_\w+ of mcp_\w+ accepted \(deploying\)/);
    expect(result.stdout).toMatch(/status\s+deploying/);
    expect(result.stdout).toMatch(/→ mcpctl status deploy_\w+ --watch/);
    expect(server.requestsTo(/\/status$/)).toHaveLength(0);
  });

  it('handles a service that answers synchronously', async () => {
    server.inject({ path: '/v1/deploy', fault: { type: 'ignore', headers: ['prefer'] } });
    const result = await deploy([mcpId, '--json']);
    expect(result.code).toBe(0);
    expect(result.json().status).toBe('deployed');
    expect(server.requestsTo(/\/status$/)).toHaveLength(0);
  });

  it('falls back to polling when the service ignores wait, showing each stage', async () => {
    server.inject({ path: /\/status$/, fault: { type: 'ignore', query: ['wait'] } });
    const result = await deploy([await fixture({ listenDelayMs: 300 }), '--env', 'production', '--json']);
    expect(result.code).toBe(0);
    expect(result.json().status).toBe('deployed');
    expect(server.requestsTo(/\/status$/).length).toBeGreaterThan(1);
    expect(result.stderr).toContain('deploying deploy_');
    expect(result.stderr).toContain('to production: starting instances 0/2 (0/2 healthy)');
  });

  it('a failed deployment is exit 6 with the reason and the logs command', async () => {
    const result = await deploy([await fixture({ failStart: true })]);
    expect(result.code).toBe(6);
    expect(result.stderr).toMatch(/error: deployment deploy_\w+ failed: instances did not start: .*exited with code 3/);
    expect(result.stderr).toMatch(/→ read its logs: `mcpctl logs deploy_\w+`/);
    // the progress line ends with the reason, not with the stage it was at (`queued (0/1 healthy)`)
    expect(result.stderr).toMatch(/\] failed: deploy_\w+ failed: instances did not start/);
    expect(result.stderr).not.toMatch(/\] failed: deploying/);
    expect(result.stdout).toMatch(/reason\s+instances did not start/);
  });

  it('a failed synchronous deployment (422 deploy_failed) is exit 6 too, with the deployment as JSON', async () => {
    server.inject({ path: '/v1/deploy', fault: { type: 'ignore', headers: ['prefer'] } });
    const result = await deploy([await fixture({ failStart: true }), '--json']);
    expect(result.code).toBe(6);
    expect(result.json()).toMatchObject({ status: 'failed', reason: expect.stringContaining('exited') });
  });

  it('--timeout while still deploying is exit 8 with the command to keep waiting', async () => {
    const result = await deploy([await fixture(HOLD), '--timeout', '1']);
    expect(result.code).toBe(8);
    expect(result.stderr).toMatch(/error: deployment deploy_\w+ is still deploying after 1 s/);
    expect(result.stderr).toMatch(/mcpctl status deploy_\w+ --watch/);
  });

  it('Ctrl-C while the deploy request is on its way still names the deployment it created', async () => {
    const held = await fixture(HOLD);
    // the service creates the deployment at once but its answer is slow to come back
    server.inject({ method: 'POST', path: '/v1/deploy', times: 1, fault: { type: 'late', ms: 400 } });
    const controller = new AbortController();
    const waiting = deploy([held, '--json'], { signal: controller.signal });
    await waitFor('the deployment to be created', async () => ((await deployments()).length > 0 ? true : undefined));
    controller.abort();
    const result = await waiting;
    const [created] = (await deployments()).map((d) => d.deployment_id);
    expect(created).toMatch(/^deploy_/);
    expect(result.code).toBe(130);
    expect(result.json()).toMatchObject({ deployment_id: created, status: 'deploying' });
    expect(result.stderr).toContain(`stopped waiting; deployment ${created} goes on (deploying)`);
  });

  it('Ctrl-C while waiting stops waiting, says the deployment goes on, exit 130', async () => {
    const held = await fixture(HOLD);
    const controller = new AbortController();
    const waiting = deploy([held], { signal: controller.signal });
    await waitFor('the first status request', () => server.requestsTo(/\/status$/)[0]);
    controller.abort();
    const result = await waiting;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/stopped waiting; deployment deploy_\w+ goes on \(deploying\)/);
    expect(result.stderr).toMatch(/mcpctl status deploy_\w+ --watch/);
  });

  it('an unknown server is exit 2 (404)', async () => {
    const result = await deploy(['mcp_doesnotexist']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no server mcp_doesnotexist');
    expect(result.stderr).toMatch(/request id: req_/);
  });

  it('scaling out of bounds is exit 2 with the field path (422)', async () => {
    const result = await deploy([mcpId, '--env', 'production', '--max-instances', '9', '--json']);
    expect(result.code).toBe(2);
    expect(result.json().error.problems).toContainEqual({
      path: 'config.scaling.max_instances',
      message: 'must be from 2 to 8 in production (got 9)',
    });
  });

  it('production --min-instances 0 is a scale to zero: sent as such, one instance while awake; 1 is refused', async () => {
    const result = await deploy([
      mcpId,
      '--env',
      'production',
      '--min-instances',
      '0',
      '--idle-seconds',
      '60',
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(deployBody()).toEqual({
      mcp_id: mcpId,
      environment: 'production',
      config: { scaling: { min_instances: 0, idle_seconds: 60 } },
    });
    expect(result.json()).toMatchObject({ status: 'deployed', desired_instances: 1 });
    const one = await deploy([mcpId, '--env', 'production', '--min-instances', '1', '--json']);
    expect(one.code).toBe(2);
    expect(one.json().error.problems).toContainEqual({
      path: 'config.scaling.min_instances',
      message: 'must be 0 (scale to zero when idle) or from 2 to 8 in production (got 1)',
    });
  });

  it('a bound the file sets is shown at its line in the file; one a flag sets is not', async () => {
    const yaml = WEATHER_YAML.replace('max_instances: 4', 'max_instances: 9');
    expect(yaml).not.toBe(WEATHER_YAML);
    await writeFile(join(sandbox.dir, 'weather.yaml'), yaml);
    const fromFile = await deploy(['weather.yaml', '--env', 'production', '--json']);
    expect(fromFile.code).toBe(2);
    const line = yaml.split('\n').findIndex((l) => l.includes('max_instances: 9')) + 1;
    expect(fromFile.json().error.problems).toContainEqual({
      where: `weather.yaml:${line}:24`,
      path: 'config.scaling.max_instances',
      message: 'must be from 2 to 8 in production (got 9)',
    });
    const fromFlag = await deploy(['weather.yaml', '--env', 'production', '--max-instances', '10', '--json']);
    expect(fromFlag.code).toBe(2);
    expect(fromFlag.json().error.problems).toContainEqual({
      path: 'config.scaling.max_instances',
      message: 'must be from 2 to 8 in production (got 10)',
    });
  });

  it('min > max is caught before sending', async () => {
    const result = await deploy([mcpId, '--min-instances', '3', '--max-instances', '2']);
    expect(result.code).toBe(2);
    expect(server.requests).toHaveLength(0);
  });

  it('a dropped connection on deploy is retried with the same idempotency key', async () => {
    server.inject({ method: 'POST', path: '/v1/deploy', times: 1, fault: { type: 'drop' } });
    const result = await deploy([mcpId, '--idempotency-key', 'job-7']);
    expect(result.code).toBe(0);
    const posts = server.requestsTo('/v1/deploy', 'POST');
    expect(posts.map((p) => p.headers['idempotency-key'])).toEqual(['job-7', 'job-7']);
  });

  it('--idempotency-key with a file gives the build its own derived key', async () => {
    await deploy(['weather.yaml', '--idempotency-key', 'job-8']);
    expect(server.requestsTo('/v1/build')[0]!.headers['idempotency-key']).toBe('job-8.build');
    expect(server.requestsTo('/v1/deploy')[0]!.headers['idempotency-key']).toBe('job-8');
  });

  it('an env file or --env-var that sets a variable of deploy.env_vars makes its ${VAR} unneeded', async () => {
    // WEATHER_YAML's deploy.env_vars has API_TOKEN: ${WEATHER_TOKEN}; the environment here lacks it
    const { WEATHER_TOKEN: _unset, ...without } = env;
    await writeFile(join(sandbox.dir, 'secrets.env'), 'API_TOKEN=from-the-file\n');
    const fromFile = await runCli(['deploy', 'weather.yaml', '--env-file', 'secrets.env', '--no-wait', '--json'], {
      env: without,
      cwd: sandbox.dir,
    });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(deployBody()).toMatchObject({ config: { env_vars: { API_TOKEN: 'from-the-file' } } });

    const fromFlag = await runCli(['deploy', 'weather.yaml', '--env-var', 'API_TOKEN', '--no-wait', '--json'], {
      env: { ...without, API_TOKEN: 'from-env' },
      cwd: sandbox.dir,
    });
    expect(fromFlag.code, fromFlag.stderr).toBe(0);
    expect(server.requestsTo('/v1/deploy', 'POST')[1]!.body).toMatchObject({
      config: { env_vars: { API_TOKEN: 'from-env' } },
    });
  });
});

describe('deploy config', () => {
  it('parses env files: comments, export, quotes, escapes', () => {
    const text = [
      '# comment',
      '',
      'export A=1',
      'B = two words ',
      "C='single # kept'",
      'D="line\\nbreak \\"q\\""',
      'E=',
      'F=x # trailing',
    ].join('\n');
    expect(parseEnvFile(text, 'x.env')).toEqual({
      A: '1',
      B: 'two words',
      C: 'single # kept',
      D: 'line\nbreak "q"',
      E: '',
      F: 'x',
    });
  });

  it('reports every bad env file line', () => {
    try {
      parseEnvFile('1BAD=x\nOK=1\nQ="open\nnothing', 'x.env');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).problems.map((p) => p.where)).toEqual(['x.env:1', 'x.env:3', 'x.env:4']);
    }
  });

  it('resolves only the chosen environment’s overrides', async () => {
    const defaults = {
      env_vars: { A: '${A}' },
      environments: { production: { env_vars: { P: '${ONLY_IN_PROD}' } }, staging: { domain: 'stg.example.com' } },
    };
    expect(await configFromDefinition(defaults, 'staging', { A: 'a' })).toEqual({
      domain: 'stg.example.com',
      env_vars: { A: 'a' },
    });
    await expect(configFromDefinition(defaults, 'production', { A: 'a' })).rejects.toThrow(/ONLY_IN_PROD/);
  });

  it('flags win over the file', async () => {
    const config = await applyDeployFlags(
      { domain: 'a.example.com', scaling: { min_instances: 2, max_instances: 4 }, env_vars: { X: '1' } },
      { domain: 'b.example.com', minInstances: 3, envVar: ['X'] },
      { env: { X: '2' }, cwd: '/' },
    );
    expect(config).toEqual({
      domain: 'b.example.com',
      scaling: { min_instances: 3, max_instances: 4 },
      env_vars: { X: '2' },
    });
  });
});
