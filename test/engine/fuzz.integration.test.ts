/**
 * A bounded fuzz of the HTTP layer on a real loopback socket: a few thousand random and
 * malformed requests (methods, paths, headers, bodies) to every route. No answer may be a 5xx,
 * every /v1 answer must be an envelope, nothing may be logged as unexpected, and the engine must
 * still answer afterwards. Seeded, so a failure can be replayed.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AnyEnvelope } from '../../src/api/contract.js';
import type { TestService } from '../../src/engine/services.js';
import {
  call,
  fakeBuilds,
  fakeDeployments,
  startTestApp,
  TEST_KEY,
  weatherDefinition,
  type TestApp,
} from '../support/app.js';

const SEED = 0x5eed_2026;
const REQUESTS = 3000;
const CONCURRENCY = 8;

/** mulberry32: small, fast, good enough to pick inputs. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof rng>;

const STRINGS = [
  '',
  'a',
  'x'.repeat(70),
  'weather',
  'mcp_abc',
  'deploy_abc',
  '../../etc/passwd',
  '%00',
  '\u0000',
  '☃',
  '\ud800',
  '${HOME}',
  '{{args.x}}',
  '<script>',
  'null',
  '1e999',
];

function randomValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 3 ? 5 : 8)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 65_536]);
    case 3:
      return r.pick(STRINGS);
    case 4:
      return 'y'.repeat(r.int(2000));
    case 5:
      return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--)
        out[r.pick(['name', 'template', 'tools', 'mcp_id', 'environment', 'config', '__proto__', 'constructor', 'x'])] =
          randomValue(r, depth + 1);
      return out;
    }
  }
}

/** A valid request with one field replaced, removed or added. */
function mutated(r: Rng, valid: Record<string, unknown>): unknown {
  const copy = structuredClone(valid) as Record<string, unknown> & { tools?: Array<Record<string, unknown>> };
  const keys = Object.keys(copy);
  const key = r.pick(keys);
  switch (r.int(4)) {
    case 0:
      delete copy[key];
      break;
    case 1:
      copy[key] = randomValue(r);
      break;
    case 2:
      copy[r.pick(['extra', 'files', 'auth', 'config', 'context', 'ai_model'])] = randomValue(r);
      break;
    default:
      if (Array.isArray(copy.tools))
        copy.tools[0] = {
          ...copy.tools[0],
          [r.pick(['name', 'inputSchema', 'handler', 'description'])]: randomValue(r),
        };
  }
  return copy;
}

interface Target {
  url: string;
  mcpId: string;
  deploymentId: string;
}

function randomRequest(r: Rng, t: Target) {
  const ids = [t.mcpId, t.deploymentId, 'deploy_unknown', 'mcp_unknown', '%ZZ', 'x'.repeat(300), '..', '%2e%2e', '☃'];
  const id = encodeURIComponent(r.pick(ids)).replace(/%25ZZ/, '%ZZ');
  const paths = [
    '/v1/build',
    '/v1/deploy',
    `/v1/deploy/${id}/status`,
    `/v1/deploy/${id}/stop`,
    `/v1/deploy/${id}/rollback`,
    `/v1/deploy/${id}/logs`,
    `/v1/deploy/${id}/metrics`,
    '/v1/test',
    '/v1/servers',
    `/v1/servers/${id}`,
    '/v1/deployments',
    '/v1/health',
    '/v1',
    '/v1/',
    '//v1//build',
    '/v2/build',
    `/d/${id}/health`,
    '/',
  ];
  let path = r.pick(paths);
  if (r.chance(0.4)) {
    const params = ['wait', 'limit', 'since', 'window', 'environment', 'status', 'mcp_id', 'name', 'follow'];
    const values = [
      '',
      '0',
      '1',
      '-5',
      '61',
      'abc',
      '1e3',
      'production',
      'deployed',
      '2026-01-01T00:00:00Z',
      '%ZZ',
      '0.5',
    ];
    path += `?${Array.from({ length: 1 + r.int(3) }, () => `${r.pick(params)}=${r.pick(values)}`).join('&')}`;
  }
  const method = r.pick(['GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']);
  const headers: Record<string, string> = {};
  if (!r.chance(0.08))
    headers.authorization = r.chance(0.95)
      ? `Bearer ${TEST_KEY}`
      : r.pick(['Bearer', 'Bearer wrong', `bearer ${TEST_KEY}`, 'Basic x', `Bearer ${TEST_KEY} extra`]);
  const contentType = r.pick([
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/problem+json',
    undefined,
  ]);
  if (contentType !== undefined) headers['content-type'] = contentType;
  if (r.chance(0.2)) headers['idempotency-key'] = r.pick(['k1', 'k2', 'x'.repeat(250), ' ', 'cl\u00e9', 'tab\there']);
  if (r.chance(0.1)) headers.prefer = r.pick(['respond-async', 'respond-async; x', 'garbage']);
  if (r.chance(0.1)) headers['if-none-match'] = r.pick(['"abc"', '*', 'W/"x", "y"', '']);
  let body: Buffer | undefined;
  if (method !== 'GET' && method !== 'HEAD' && r.chance(0.9)) {
    const valid: Record<string, unknown> = r.pick([
      weatherDefinition() as Record<string, unknown>,
      { mcp_id: t.mcpId, environment: 'development' },
      { mcp_id: t.mcpId, message: 'hello' },
    ]);
    switch (r.int(6)) {
      case 0:
        body = Buffer.from(JSON.stringify(valid));
        break;
      case 1:
      case 2:
        body = Buffer.from(JSON.stringify(mutated(r, valid)));
        break;
      case 3:
        body = Buffer.from(JSON.stringify(randomValue(r)));
        break;
      case 4: {
        const text = JSON.stringify(valid);
        body = Buffer.from(text.slice(0, r.int(text.length)));
        break;
      }
      default:
        body = Buffer.from(Array.from({ length: r.int(512) }, () => r.int(256)));
    }
  }
  return { method, path, headers, body };
}

function send(
  url: string,
  req: ReturnType<typeof randomRequest>,
): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(`${url}${req.path}`, { method: req.method, headers: req.headers });
    outgoing.on('response', (res) => {
      const type = res.headers['content-type'] ?? '';
      if (type.includes('ndjson')) {
        // a followed log never ends: what matters is that it started
        res.destroy();
        resolve({ status: res.statusCode!, type, text: '' });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, type, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

let app: TestApp;
let target: Target;

beforeAll(async () => {
  const tests: TestService = {
    test: async () => ({
      ai_response: 'ok',
      tools_used: [],
      resources_accessed: [],
      execution_time: 0.01,
      success_rate: 1,
    }),
    models: () => [{ id: 'mcpctl-local', default: true, available: true }],
  };
  app = await startTestApp((store) => ({
    builds: fakeBuilds(store),
    deployments: fakeDeployments(store, { settleMs: 5 }),
    tests,
    // no rate limit, short long-polls: the fuzz is about inputs, not time
    limits: { ratePerSecond: 0, authFailures: 0, maxWaitSeconds: 0.2, keepAliveMs: 60_000 },
  }));
  const built = await call(app.url, 'POST', '/v1/build', { json: weatherDefinition() });
  const deployed = await call(app.url, 'POST', '/v1/deploy', {
    json: { mcp_id: built.body.data.mcp_id, environment: 'development' },
  });
  target = { url: app.url, mcpId: built.body.data.mcp_id, deploymentId: deployed.body.data.deployment_id };
});

afterAll(async () => {
  await app.close();
});

it(`answers ${REQUESTS} random and malformed requests without a 5xx, each /v1 answer an envelope`, async () => {
  const r = rng(SEED);
  const requests = Array.from({ length: REQUESTS }, () => randomRequest(r, target));
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const req = requests[next++]!;
      let answer: Awaited<ReturnType<typeof send>>;
      try {
        answer = await send(app.url, req);
      } catch (error) {
        failures.push(
          `no answer (${(error as Error).message}): ${req.method} ${req.path} ${JSON.stringify(req.headers)} body ${req.body?.length ?? 0} bytes`,
        );
        continue;
      }
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const describe = `${req.method} ${req.path} ${JSON.stringify(req.headers)} → ${answer.status} ${answer.text.slice(0, 200)}`;
      if (answer.status >= 500) failures.push(describe);
      const api = req.path.startsWith('/v1');
      if (api && req.method !== 'HEAD' && !answer.type.includes('ndjson')) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(answer.text);
        } catch {
          failures.push(`not JSON: ${describe}`);
          continue;
        }
        if (!AnyEnvelope.safeParse(parsed).success) failures.push(`not an envelope: ${describe}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  expect(failures.slice(0, 10)).toEqual([]);
  // the fuzz reached more than the front door
  for (const status of [200, 400, 401, 404, 405, 415, 422])
    expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
  expect(app.logs.filter((line) => line.msg === 'unexpected error')).toEqual([]);
  const health = await call(app.url, 'GET', '/v1/health');
  expect(health.status).toBe(200);
  expect(health.body.data.status).toBe('ok');
});
