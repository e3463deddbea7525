/**
 * The test agent: GET /v1/models, and POST /v1/test, whose runs are kept in the store and read back
 * with GET /v1/tests and GET /v1/tests/:test_id.
 */
import { MCP_ID_PATTERN, ReloadRequest, TestRequest } from '../../../api/contract.js';
import {
  describeTestRun,
  summarizeTestRun,
  TEST_ID_PATTERN,
  TEST_RUNS_DEFAULT_LIMIT,
  TEST_RUNS_MAX_LIMIT,
  type TestRunSource,
} from '../../../api/test-runs.js';
import { newId } from '../../ids.js';
import type { TestRunRecord } from '../../records.js';
import { ServiceError } from '../../service-error.js';
import type { Store } from '../../store/store.js';
import { HttpError } from '../respond.js';
import { badQuery, readNumber } from '../query.js';
import { findServer, requireTests } from './lookups.js';
import type { Registrar } from './route.js';

export const registerTests: Registrar = (router, { store, tests, clock }) => {
  router.add('GET', '/v1/models', {
    handle: async () => {
      const listed = await requireTests(tests).models();
      return { status: 200, data: Array.isArray(listed) ? { models: listed } : listed };
    },
  });

  // the model settings and keys, read again without stopping anything that runs
  router.add('POST', '/v1/engine/reload', {
    body: ReloadRequest,
    handle: async (ctx) => {
      const service = requireTests(tests);
      if (service.reload === undefined)
        throw new ServiceError('not_implemented', 'this service reads its models once, when it starts');
      return { status: 200, data: await service.reload((ctx.body as ReloadRequest).env) };
    },
  });

  router.add('POST', '/v1/test', {
    body: TestRequest,
    idempotent: true,
    handle: async (ctx) => {
      const request = ctx.body as TestRequest;
      const server = await findServer(store, request.mcp_id, 'mcp_id');
      const result = await requireTests(tests).test(server, request);
      // the values of env_vars may be secrets: the run is kept without them
      const { env_vars: _values, ...kept } = request;
      await store.putTestRun({
        id: newId('test'),
        mcpId: server.server.mcp_id,
        request: kept,
        result,
        createdAt: new Date(clock()).toISOString(),
      });
      return { status: 200, data: result };
    },
  });

  router.add('GET', '/v1/tests', {
    handle: async (ctx) => {
      const mcpId = ctx.query.get('mcp_id') ?? undefined;
      if (mcpId !== undefined && !MCP_ID_PATTERN.test(mcpId)) throw badQuery('mcp_id', 'must have the form mcp_<id>');
      const limit =
        readNumber(ctx.query, 'limit', { min: 1, max: TEST_RUNS_MAX_LIMIT, integer: true }) ?? TEST_RUNS_DEFAULT_LIMIT;
      const records = await store.listTestRuns({ ...(mcpId === undefined ? {} : { mcpId }), limit });
      const names = await serverNames(store, records);
      return { status: 200, data: { runs: records.map((r) => summarizeTestRun(sourceOf(r, names))) } };
    },
  });

  router.add('GET', '/v1/tests/:test_id', {
    handle: async (ctx) => {
      const id = ctx.params.test_id!;
      if (!TEST_ID_PATTERN.test(id)) {
        throw new HttpError('bad_request', `${id} is not a test run id: they have the form test_<id>`, {}, [
          { path: 'test_id', message: 'must have the form test_<id>' },
        ]);
      }
      const record = await store.getTestRun(id);
      if (record === undefined) {
        throw new ServiceError('not_found', `no test run ${id}; list the kept runs with GET /v1/tests`);
      }
      const names = await serverNames(store, [record]);
      return { status: 200, data: describeTestRun(sourceOf(record, names)) };
    },
  });
};

/** The name of each server the runs tested; a server whose record is gone has none. */
async function serverNames(store: Store, records: readonly TestRunRecord[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const mcpId of new Set(records.map((r) => r.mcpId))) {
    const server = await store.getServer(mcpId);
    if (server !== undefined) names.set(mcpId, server.server.name);
  }
  return names;
}

function sourceOf(record: TestRunRecord, names: ReadonlyMap<string, string>): TestRunSource {
  return {
    test_id: record.id,
    mcp_id: record.mcpId,
    server: names.get(record.mcpId) ?? '',
    created_at: record.createdAt,
    request: record.request,
    result: record.result,
  };
}
