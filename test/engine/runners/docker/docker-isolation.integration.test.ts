/**
 * Secrets and isolation on the Docker runner, against a real Docker daemon (test/support/docker.ts:
 * DOCKER_HOST, or a dockerd of this file's own; skipped with the reason outside CI when neither can
 * be had). The engine runs in-process with the docker runner. A module error quoting a deployment's
 * value reaches the MCP client and the deployment's log as [redacted]; `docker inspect` of its
 * container shows the value nowhere (it came as a file the runtime deleted); each deployment's
 * containers are on a network of their own, never the default bridge, removed with the deployment.
 * Needs the built package (dist/): the image holds it.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../../src/api/client.js';
import type { BuildRequestInput } from '../../../../src/api/contract.js';
import type { DockerClient } from '../../../../src/engine/runners/docker/engine-api.js';
import { NETWORK_LABELS } from '../../../../src/engine/runners/docker/networks.js';
import type { RunningEngine } from '../../../../src/engine/engine.js';
import { CONTAINER_LABELS } from '../../../../src/engine/runners/docker/docker-runner.js';
import { DOCKER_ENV_FILE } from '../../../../src/packaging/image.js';
import { requireBuilt, tempHome } from '../../../support/app.js';
import {
  dockerSkipReason,
  ensureNodeBaseImage,
  removeContainers,
  startTestDocker,
  type TestDocker,
} from '../../../support/docker.js';
import { startRealEngine } from '../../../support/engine.js';
import type { TempDir } from '../../../support/temp.js';
import { waitFor } from '../../../support/wait.js';

const API_KEY = 'docker-isolation-key-0123456789abcdef0123';
const DATABASE_URL = 'postgres://app:pw-7f3a9c1e5b@db.internal:5432/app';
const OTHER_VALUE = 'other-deployment-value-4d2e8a';

/** A module that fails quoting its database URL, and a tool that answers (for the second deployment). */
const LEAKER: BuildRequestInput = {
  name: 'leaker',
  template: 'custom',
  tools: [
    {
      name: 'connect',
      description: 'Fails quoting its database URL',
      inputSchema: { type: 'object' },
      handler: { type: 'module', module: 'tools.mjs' },
    },
    {
      name: 'hello',
      description: 'Answers',
      inputSchema: { type: 'object' },
      handler: { type: 'module', module: 'tools.mjs' },
    },
  ],
  files: {
    'tools.mjs': {
      encoding: 'utf8',
      content:
        "export function connect() { throw new Error('cannot connect to ' + process.env.DATABASE_URL); }\nexport const hello = () => 'hello';\n",
    },
  },
};

interface ContainerDetails {
  Id: string;
  Config: { Env: string[]; Cmd: string[] };
  HostConfig: { NetworkMode: string };
  NetworkSettings: { Networks: Record<string, unknown> };
}

describe.skipIf(dockerSkipReason !== undefined)(
  `secrets and networks on the Docker runner${dockerSkipReason === undefined ? '' : ` (skipped: ${dockerSkipReason})`}`,
  () => {
    let docker: TestDocker;
    let client: DockerClient;
    let temp: TempDir;
    let engine: RunningEngine | undefined;

    beforeAll(async () => {
      requireBuilt();
      docker = await startTestDocker();
      client = docker.client;
      const baseImage = await ensureNodeBaseImage(client);
      temp = await tempHome('mcpctl-docker-isolation-');
      engine = await startRealEngine(temp.dir, {
        apiKey: API_KEY,
        fast: false,
        env: { MCPCTL_RUNNER: 'docker', MCPCTL_DOCKER_BASE_IMAGE: baseImage, PATH: process.env.PATH!, ...docker.env },
      });
    }, 180_000);

    afterAll(async () => {
      await engine?.close(5_000);
      if (client !== undefined) {
        await removeContainers(client, `${CONTAINER_LABELS.engine}=${temp.dir}`).catch(() => undefined);
        const left = await client.json<{ Id: string }[]>('GET', '/networks', {
          query: { filters: JSON.stringify({ label: [`${NETWORK_LABELS.engine}=${temp.dir}`] }) },
        });
        for (const network of left) await client.json('DELETE', `/networks/${network.Id}`).catch(() => undefined);
      }
      await temp?.cleanup();
      await docker?.stop();
    }, 120_000);

    const containersOf = (deploymentId: string) =>
      client.json<{ Id: string }[]>('GET', '/containers/json', {
        query: { filters: JSON.stringify({ label: [`${CONTAINER_LABELS.deployment}=${deploymentId}`] }) },
      });
    const inspect = async (deploymentId: string): Promise<ContainerDetails & { raw: string }> => {
      const [found] = await containersOf(deploymentId);
      const raw = await client.json<ContainerDetails>('GET', `/containers/${found!.Id}/json`);
      return { ...raw, raw: JSON.stringify(raw) };
    };

    it('hides a value a module error quotes from the client and the log, and docker inspect shows it nowhere (ATTACK)', async () => {
      const api = new ApiClient({ baseUrl: engine!.url, apiKey: API_KEY });
      const server = await api.build(LEAKER);
      const { deployment } = await api.deploy({
        mcp_id: server.mcp_id,
        environment: 'staging',
        config: { env_vars: { DATABASE_URL } },
      });
      expect(deployment.status, deployment.reason).toBe('deployed');

      const mcp = new Client({ name: 'docker-secrets-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${deployment.url}/mcp`)));
      const failed = await mcp.callTool({ name: 'connect', arguments: {} });
      await mcp.close();
      expect(failed.isError).toBe(true);
      expect(JSON.stringify(failed)).toContain('cannot connect to [redacted]');
      expect(JSON.stringify(failed)).not.toContain(DATABASE_URL);

      const lines = await waitFor('the error in the log', async () => {
        const found = await api.logs(deployment.deployment_id, { limit: 1000 });
        return found.some((line) => line.message.includes('cannot connect to')) ? found : undefined;
      });
      expect(JSON.stringify(lines)).toContain('cannot connect to [redacted]');
      expect(JSON.stringify(lines)).not.toContain(DATABASE_URL);

      const details = await inspect(deployment.deployment_id);
      expect(details.raw).not.toContain(DATABASE_URL);
      expect(details.Config.Env.some((item) => item.startsWith('DATABASE_URL'))).toBe(false);
      expect(details.Config.Cmd).toContain('--env-is-secret');
      // the file it came in is gone once the runtime read it
      await expect(
        client.json('HEAD', `/containers/${details.Id}/archive`, { query: { path: DOCKER_ENV_FILE } }),
      ).rejects.toMatchObject({ status: 404 });
      await api.close();
    }, 300_000);

    it("puts each deployment's containers on a network of its own, off the default bridge, removed with the deployment", async () => {
      const api = new ApiClient({ baseUrl: engine!.url, apiKey: API_KEY });
      const server = await api.build(LEAKER);
      const a = (
        await api.deploy({ mcp_id: server.mcp_id, environment: 'staging', config: { env_vars: { DATABASE_URL } } })
      ).deployment;
      const b = (
        await api.deploy({
          mcp_id: server.mcp_id,
          environment: 'development',
          config: { env_vars: { OTHER: OTHER_VALUE } },
        })
      ).deployment;
      expect([a.status, b.status]).toEqual(['deployed', 'deployed']);
      const [ofA, ofB] = [await inspect(a.deployment_id), await inspect(b.deployment_id)];
      const [netA, netB] = [Object.keys(ofA.NetworkSettings.Networks), Object.keys(ofB.NetworkSettings.Networks)];
      expect(netA).toHaveLength(1);
      expect(netB).toHaveLength(1);
      expect(netA[0]).not.toBe(netB[0]);
      expect([...netA, ...netB]).not.toContain('bridge');
      const network = await client.json<{ Labels: Record<string, string>; Options: Record<string, string> }>(
        'GET',
        `/networks/${netA[0]}`,
      );
      expect(network.Labels[NETWORK_LABELS.deployment]).toBe(a.deployment_id);
      expect(network.Options['com.docker.network.bridge.enable_icc']).toBe('false');
      // and the engine still reaches them: through the gateway
      const mcp = new Client({ name: 'docker-network-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${b.url}/mcp`)));
      expect(JSON.stringify(await mcp.callTool({ name: 'hello', arguments: {} }))).toContain('hello');
      await mcp.close();

      await api.stop(b.deployment_id);
      await waitFor('the stopped deployment to lose its network', async () => {
        const left = await client.json<unknown[]>('GET', '/networks', {
          query: { filters: JSON.stringify({ label: [`${NETWORK_LABELS.deployment}=${b.deployment_id}`] }) },
        });
        return left.length === 0 ? true : undefined;
      });
      await api.close();
    }, 300_000);
  },
);
