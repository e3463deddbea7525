import { describeContract } from '../support/contract-suite.js';
import { startContractServer } from '../support/contract-server.js';

describeContract('the in-memory contract server', async () => {
  const server = await startContractServer({ stepMs: 30 });
  return { url: server.url, apiKey: server.apiKey, close: () => server.close() };
});
