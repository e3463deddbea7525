/**
 * The tour `init` suggests for the advanced template, with the real binary and a real local
 * engine: build, then deploy the built id to staging with OAUTH_ISSUER exported. A deploy by
 * id knows nothing of the file's deploy.env_vars: it must be refused before anything starts,
 * naming the variable and the flag that passes it, and succeed with that flag.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, runBin, type Sandbox } from '../support/cli.js';
import { BIN, killEngineOf, requireBuilt } from '../support/app.js';

beforeAll(() => requireBuilt());

let box: Sandbox | undefined;
afterEach(async () => {
  if (box === undefined) return;
  killEngineOf(box.env.MCPCTL_HOME!);
  await box.cleanup();
  box = undefined;
});

describe('the advanced template tour', () => {
  it('deploying the built id without --env-var OAUTH_ISSUER is refused before anything starts, and works with it', async () => {
    box = await createSandbox({ OAUTH_ISSUER: 'https://auth.example.com/' });
    const sandbox = box;
    const mcpctl = (...args: string[]) => runBin(BIN, args, { env: sandbox.env, cwd: sandbox.dir });

    expect((await mcpctl('init', 'notes', '--template', 'advanced', '--yes')).code).toBe(0);
    const build = await mcpctl('build', 'notes/server.yaml');
    expect(build.code, build.stderr).toBe(0);
    const mcpId = /mcp_[A-Za-z0-9]+/.exec(build.stdout)![0];
    // the next step it suggests passes what the server needs
    expect(build.stdout).toContain(`→ mcpctl deploy ${mcpId} --env development --env-var OAUTH_ISSUER`);

    const refused = await mcpctl('deploy', mcpId, '--env', 'staging', '--json');
    expect(refused.code, refused.stderr).toBe(2);
    const { error } = JSON.parse(refused.stdout);
    expect(error.code).toBe('validation_failed');
    expect(error.message).toContain('needs OAUTH_ISSUER when it starts');
    expect(error.problems).toEqual([
      { path: 'config.env_vars.OAUTH_ISSUER', message: 'required by auth.issuer (no default); pass its value' },
    ]);
    expect(error.hint).toBe('pass it with --env-var OAUTH_ISSUER (its value comes from your environment)');
    const listed = await mcpctl('ls', '--deployments', '--json');
    expect(JSON.parse(listed.stdout).deployments).toEqual([]);

    const deployed = await mcpctl('deploy', mcpId, '--env', 'staging', '--env-var', 'OAUTH_ISSUER', '--json');
    expect(deployed.code, deployed.stderr).toBe(0);
    expect(JSON.parse(deployed.stdout)).toMatchObject({ status: 'deployed', environment: 'staging', mcp_id: mcpId });

    expect((await mcpctl('engine', 'stop')).code).toBe(0);
  }, 180_000);
});
