import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/client.js';
import type { Deployment } from '../../src/api/operations.js';
import { UserError } from '../../src/shared/errors.js';
import { candidatesFor, normalizeName, resolveDeployment } from '../../src/cli/steps/deployment-target.js';

const BASE = 'http://127.0.0.1:7070';

function deployment(
  id: string,
  server: string,
  environment: Deployment['environment'],
  status: Deployment['status'],
  extra: Partial<Deployment> = {},
): Deployment {
  const stable = `${server}.${environment}`;
  return {
    deployment_id: id,
    status,
    url: `${BASE}/d/${id}`,
    health_check: `${BASE}/d/${id}/health`,
    deploy_time: 1,
    mcp_id: `mcp_${server}`,
    environment,
    stable_urls: [`http://${stable}.localhost:7070/mcp`, `${BASE}/d/${stable}/mcp`],
    ...extra,
  };
}

// newest first, as the service lists them
const LIST = [
  deployment('deploy_new', 'notes', 'production', 'stopped'),
  deployment('deploy_stg', 'notes', 'staging', 'deployed', { url: `${BASE}/d/stg-wymgdmye` }),
  deployment('deploy_run', 'notes', 'production', 'deployed'),
  deployment('deploy_old', 'notes', 'production', 'stopped'),
  deployment('deploy_wx', 'weather', 'development', 'deployed'),
];

function fakeClient(list: Deployment[] = LIST): ApiClient {
  return {
    listDeployments: async () => list,
    listServers: async () => [],
    status: async (id: string) => ({ deployment: list.find((d) => d.deployment_id === id) }),
  } as unknown as ApiClient;
}

describe('normalizeName', () => {
  it.each([
    ['notes.prod', 'notes.production'],
    ['Notes.Production', 'notes.production'],
    ['notes.STG', 'notes.staging'],
    ['notes.dev', 'notes.development'],
    ['notes.production.localhost', 'notes.production'],
    ['http://127.0.0.1:7070/d/notes.production/mcp', 'notes.production'],
    ['stg-wymgdmye', 'stg-wymgdmye'],
    ['my.server.prod', 'my.server.production'],
  ])('%s → %s', (typed, name) => {
    expect(normalizeName(typed)).toBe(name);
  });
});

describe('candidatesFor', () => {
  it('prefers the running deployment of a stable name over newer stopped ones', () => {
    const found = candidatesFor(LIST, 'notes.production');
    expect(found.map((c) => [c.name, c.deployment.deployment_id])).toEqual([['notes.production', 'deploy_run']]);
  });

  it('finds a staging deployment by the name of its URL', () => {
    expect(candidatesFor(LIST, 'stg-wymgdmye').map((c) => c.deployment.deployment_id)).toEqual(['deploy_stg']);
  });

  it('a server name alone means one deployment per environment', () => {
    expect(candidatesFor(LIST, 'notes').map((c) => c.name)).toEqual(['notes.production', 'notes.staging']);
  });

  it('names servers from the list of servers when the service gives no stable URLs', () => {
    const bare = [deployment('deploy_a', 'x', 'production', 'deployed', { stable_urls: undefined, mcp_id: 'mcp_a' })];
    expect(candidatesFor(bare, 'notes.production', new Map([['mcp_a', 'Notes']])).length).toBe(1);
  });
});

describe('resolveDeployment', () => {
  it('takes an id as it is', async () => {
    const found = await resolveDeployment(fakeClient(), 'deploy_old', { interactive: false });
    expect(found.deployment_id).toBe('deploy_old');
  });

  it('lists the candidates as commands when it cannot ask (CI), exit 2', async () => {
    const error = await resolveDeployment(fakeClient(), 'notes', { interactive: false, command: 'logs' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    expect((error as UserError).problems.map((p) => p.message)).toEqual([
      'mcpctl logs notes.production   (deploy_run, deployed)',
      'mcpctl logs notes.staging   (deploy_stg, deployed)',
    ]);
  });

  it('lets a person pick on a terminal', async () => {
    const picked = await resolveDeployment(fakeClient(), 'notes', {
      interactive: true,
      choose: async (candidates) => candidates[1]!.deployment,
    });
    expect(picked.deployment_id).toBe('deploy_stg');
  });

  it('says what was looked for and where to look when nothing matches', async () => {
    await expect(resolveDeployment(fakeClient(), 'nothing.prod', { interactive: false })).rejects.toThrow(
      'no deployment is named nothing.production',
    );
  });

  describe('with no value: the server.yaml of the folder', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'mcpctl-target-'));
      await writeFile(
        join(dir, 'server.yaml'),
        [
          'name: notes',
          'version: 1.0.0',
          'description: Keeps notes.',
          'template: basic',
          'tools:',
          '  - name: echo',
          '    description: Says back the text it is given, to check the server answers.',
          '    inputSchema: { type: object }',
          '    handler: { type: static, content: [{ type: text, text: ok }] }',
          'deploy:',
          '  environment: staging',
          '',
        ].join('\n'),
      );
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it("picks the server's deployment in the file's default environment", async () => {
      const notes: string[] = [];
      const found = await resolveDeployment(fakeClient(), undefined, {
        interactive: false,
        cwd: dir,
        note: (text) => notes.push(text),
      });
      expect(found.deployment_id).toBe('deploy_stg');
      expect(notes).toEqual(['the deployment of notes, as server.yaml names it']);
    });

    it('a folder without a server.yaml is an error that says what to do', async () => {
      await expect(resolveDeployment(fakeClient(), undefined, { interactive: false, cwd: tmpdir() })).rejects.toThrow(
        /there is no server\.yaml in this folder to name the deployment/,
      );
    });
  });
});
