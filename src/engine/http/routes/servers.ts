/**
 * POST /v1/build and the servers it made: GET /v1/servers, GET /v1/servers/:mcp_id, its removal
 * (DELETE, refused while a deployment runs it), and what one offers with where it is defined,
 * GET /v1/servers/:mcp_id/definition.
 */
import { BuildRequest } from '../../../api/contract.js';
import { markValidated } from '../../../runtime/host/bundle.js';
import { checkBuildLimits } from '../../engine-limits.js';
import { definitionView, findServer, requireHousekeeping, serverView } from './lookups.js';
import type { Registrar } from './route.js';

export const registerServers: Registrar = (router, deps) => {
  const { store, builds } = deps;
  router.add('POST', '/v1/build', {
    body: BuildRequest,
    check: checkBuildLimits,
    idempotent: true,
    handle: async (ctx) => {
      // validated here, at the edge, against the contract and the limits: trusted from now on
      const record = await builds.build(markValidated(ctx.body as BuildRequest));
      return { status: 200, data: serverView(record) };
    },
  });

  router.add('GET', '/v1/servers', {
    handle: async (ctx) => {
      const name = ctx.query.get('name');
      const servers = (await store.listServers(name === null ? {} : { name })).map(serverView);
      return { status: 200, data: { servers } };
    },
  });

  router.add('GET', '/v1/servers/:mcp_id', {
    handle: async (ctx) => ({ status: 200, data: serverView(await findServer(store, ctx.params.mcp_id!)) }),
  });

  router.add('DELETE', '/v1/servers/:mcp_id', {
    handle: async (ctx) => {
      const removed = await requireHousekeeping(deps).removeServer(ctx.params.mcp_id!);
      return { status: 200, data: serverView(removed) };
    },
  });

  router.add('GET', '/v1/servers/:mcp_id/definition', {
    handle: async (ctx) => ({ status: 200, data: definitionView(await findServer(store, ctx.params.mcp_id!)) }),
  });
};
