/** The test agent: GET /v1/models, and POST /v1/test, whose runs are kept in the store. */
import { TestRequest } from '../../../api/contract.js';
import { newId } from '../../ids.js';
import { findServer, requireTests } from './lookups.js';
import type { Registrar } from './route.js';

export const registerTests: Registrar = (router, { store, tests, clock }) => {
  router.add('GET', '/v1/models', {
    handle: async () => ({ status: 200, data: { models: requireTests(tests).models() } }),
  });

  router.add('POST', '/v1/test', {
    body: TestRequest,
    idempotent: true,
    handle: async (ctx) => {
      const request = ctx.body as TestRequest;
      const server = await findServer(store, request.mcp_id, 'mcp_id');
      const result = await requireTests(tests).test(server, request);
      await store.putTestRun({
        id: newId('test'),
        mcpId: server.server.mcp_id,
        request,
        result,
        createdAt: new Date(clock()).toISOString(),
      });
      return { status: 200, data: result };
    },
  });
};
