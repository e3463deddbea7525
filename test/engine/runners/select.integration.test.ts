/** An engine told to use the Docker runner where no daemon answers does not start, and says why. */
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
