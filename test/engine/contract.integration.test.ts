/**
 * The foundation's /v1 contract suite against the real engine: real store, builder, runtime,
 * deployment service and test agent (the default model, mcpctl-local), in a temp MCPCTL_HOME,
 * on 127.0.0.1.
 */
import { createLogger } from '../../src/engine/engine-log.js';
import { startEngine } from '../../src/engine/engine.js';
import { describeContract } from '../support/contract-suite.js';
import { requireBuilt, tempHome } from '../support/app.js';

describeContract('the embedded engine', async () => {
  requireBuilt();
  const home = await tempHome();
  const lines: string[] = [];
  const engine = await startEngine({
    home: home.dir,
    host: '127.0.0.1',
    port: 0,
    apiKey: 'contract-key-0123456789abcdefghij',
    version: '0.0.0-test',
    logger: createLogger({ write: (line) => lines.push(line) }),
    env: {},
  });
  return {
    url: engine.url,
    apiKey: 'contract-key-0123456789abcdefghij',
    close: async () => {
      await engine.close();
      await home.cleanup();
    },
  };
});
