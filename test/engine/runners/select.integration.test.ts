/** An engine told to use the Docker or the kubernetes runner where it cannot does not start, and says why. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EngineConfigError, startEngine } from '../../../src/engine/engine.js';
import { silentLogger } from '../../../src/engine/engine-log.js';
import { TEST_KEY } from '../../support/app.js';
import { tempDir } from '../../support/temp.js';

describe('the Docker runner without a daemon', () => {
  it('stops the engine start with what to do', async () => {
    await using home = await tempDir();
    const start = startEngine({
      home: home.dir,
      host: '127.0.0.1',
      port: 0,
      apiKey: TEST_KEY,
      version: '0.0.0-test',
      logger: silentLogger,
      env: { DOCKER_HOST: `unix://${home.dir}/no-docker.sock` },
      runner: 'docker',
    });
    await expect(start).rejects.toThrow(EngineConfigError);
    await expect(start).rejects.toThrow(
      /the docker runner needs a Docker daemon: cannot reach the Docker daemon at unix:\/\/.*no-docker\.sock .*point DOCKER_HOST at it/,
    );
  });
});

describe('the kubernetes runner without a cluster', () => {
  const start = (home: string, env: Record<string, string>) =>
    startEngine({
      home,
      host: '127.0.0.1',
      port: 0,
      apiKey: TEST_KEY,
      version: '0.0.0-test',
      logger: silentLogger,
      env,
      runner: 'kubernetes',
    });

  it('stops the engine start when the API server does not answer, naming it and where the kubeconfig comes from', async () => {
    await using home = await tempDir();
    // a real kubeconfig whose API server is a loopback port nothing listens on
    const kubeconfig = join(home.dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u, namespace: mcp } }]',
        'current-context: x',
      ].join('\n'),
    );
    const engine = start(home.dir, { KUBECONFIG: kubeconfig });
    await expect(engine).rejects.toThrow(EngineConfigError);
    await expect(engine).rejects.toThrow(
      /the kubernetes runner cannot start: the Kubernetes API server at https:\/\/127\.0\.0\.1:1 does not answer \(.+\); the kubeconfig comes from KUBECONFIG/,
    );
  });

  it('names a kubeconfig that cannot be read, and every wrong setting', async () => {
    await using home = await tempDir();
    await expect(start(home.dir, { KUBECONFIG: join(home.dir, 'missing') })).rejects.toThrow(
      /the kubernetes runner cannot start: the kubeconfig cannot be read/,
    );
    await writeFile(
      join(home.dir, 'engine-settings.json'),
      JSON.stringify({ kubernetes: { address: 'nodeport', registry: 'https://r.example' } }),
    );
    await expect(start(home.dir, {})).rejects.toThrow(
      /"kubernetes.registry" in \S*engine-settings.json: "https:\/\/r.example": .*scheme.*; "kubernetes.address" in \S*engine-settings.json must be one of port-forward, pod, not "nodeport"/,
    );
  });
});
