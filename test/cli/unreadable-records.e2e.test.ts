/**
 * A store record the engine cannot read is moved aside, and said so: with the real binary and a
 * background engine in a temp MCPCTL_HOME, a damaged deployment record is listed by `engine status`
 * (with where it goes back) and flagged under `ls`; restoring it as `engine status` says (the file
 * fixed and moved back, the engine restarted) brings the deployment back.
 */
import { cp, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, runBin, type BinResult, type Sandbox } from '../support/cli.js';
import { BIN, killEngineOf, requireBuilt, ROOT } from '../support/app.js';

let box: Sandbox;
let deploymentId: string;

const mcpctl = (args: string[]): Promise<BinResult> =>
  runBin(BIN, args, { env: { ...box.env, CI: 'true' }, cwd: box.dir });

beforeAll(async () => {
  requireBuilt();
  box = await createSandbox();
  await cp(join(ROOT, 'test', 'fixtures', 'definitions', 'notes.yaml'), join(box.dir, 'server.yaml'));
}, 60_000);

afterAll(async () => {
  killEngineOf(box.env.MCPCTL_HOME!);
  await box.cleanup();
});

describe('records moved aside', () => {
  it('are listed by engine status, flagged by ls, and come back when restored as told', async () => {
    const deploy = await mcpctl(['deploy', 'server.yaml', '-e', 'dev', '--json']);
    expect(deploy.code, deploy.stderr).toBe(0);
    deploymentId = JSON.parse(deploy.stdout).deployment_id as string;
    expect((await mcpctl(['engine', 'stop'])).code).toBe(0);

    // a record cut short, as a full disk or a bad copy leaves it
    const record = join(box.env.MCPCTL_HOME!, 'store', 'deployments', `${deploymentId}.json`);
    const good = await readFile(record, 'utf8');
    await writeFile(record, good.slice(0, 40));

    const ls = await mcpctl(['ls']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).not.toContain(deploymentId);
    expect(ls.stdout).toContain('! 1 record could not be read and was moved aside: mcpctl engine status\n');
    const lsJson = JSON.parse((await mcpctl(['ls', '--json'])).stdout);
    expect(lsJson.unreadable_records).toEqual([expect.objectContaining({ kind: 'deployment', restore_to: record })]);

    const status = await mcpctl(['engine', 'status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const [aside] = JSON.parse(status.stdout).unreadable_records;
    expect(aside).toMatchObject({ kind: 'deployment', restore_to: record });
    expect(aside.file).toMatch(new RegExp(`/store/unreadable/deployments-\\d+-${deploymentId}\\.json$`));
    expect(aside.reason).toMatch(/JSON/);
    expect(Date.parse(aside.moved_at)).toBeGreaterThan(Date.now() - 120_000);
    const human = (await mcpctl(['engine', 'status'])).stdout;
    expect(human).toContain('! 1 record could not be read and was moved aside:');
    expect(human).toContain(`goes back to: ${record}`);
    expect(human).toContain('move it back where it goes, and restart the engine');

    // restored as told: fixed, moved back, the engine restarted
    await writeFile(aside.file as string, good);
    await rename(aside.file as string, record);
    expect((await mcpctl(['engine', 'stop'])).code).toBe(0);
    const back = await mcpctl(['ls', '--json']);
    expect(back.code, back.stderr).toBe(0);
    const json = JSON.parse(back.stdout);
    expect(json.deployments.map((d: { deployment_id: string }) => d.deployment_id)).toContain(deploymentId);
    expect(json.unreadable_records).toBeUndefined();
    expect(await readdir(join(box.env.MCPCTL_HOME!, 'store', 'unreadable'))).toEqual([]);
    expect((await mcpctl(['ls'])).stdout).not.toContain('moved aside');
  }, 180_000);
});
