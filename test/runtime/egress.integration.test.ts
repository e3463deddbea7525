/**
 * Outbound calls under the egress policy, against real servers on 127.0.0.1: what a deployed
 * server may reach, redirects followed one hop at a time with the definition's headers kept to
 * their origin, and names judged by the address the connector actually connects to.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { EgressConfig } from '../../src/definition/schema.js';
import { createEgress, type Egress, type EgressLookup, type EgressReport } from '../../src/runtime/server/egress.js';
import { callHttp, HttpCallError, MAX_REDIRECTS } from '../../src/runtime/server/http-call.js';
import { closeServer, listen } from '../support/http.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A loopback server that records each request and answers with `answer`. */
async function server(
  answer: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void = (_req, res) => res.end('ok'),
) {
  const seen: Seen[] = [];
  const { server: http, url } = await listen((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const entry = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(entry);
      answer(req, res, entry);
    });
  });
  cleanups.push(() => closeServer(http));
  return { url, port: Number(new URL(url).port), seen };
}

function egress(
  config: EgressConfig | undefined,
  options: { allowPrivate?: boolean; lookup?: EgressLookup } = {},
): { egress: Egress; reports: EgressReport[] } {
  const reports: EgressReport[] = [];
  const made = createEgress(config, { ...options, report: (report) => reports.push(report) });
  cleanups.push(() => made.close());
  return { egress: made, reports };
}

function get(url: string, using: Egress, headers: Record<string, string> = {}) {
  return callHttp({ method: 'GET', url, headers, timeoutMs: 5000, maxBytes: 100_000, egress: using });
}

async function failure(promise: Promise<unknown>): Promise<HttpCallError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(HttpCallError);
  return error as HttpCallError;
}

const redirect =
  (location: string, status = 302) =>
  (_req: IncomingMessage, res: ServerResponse) =>
    res.writeHead(status, { location }).end();

describe('egress of a deployed server', () => {
  it('refuses a loopback API without egress, by address and by name, and says which setting allows it', async () => {
    const api = await server();
    const { egress: deployed, reports } = egress(undefined);
    const literal = await failure(get(`${api.url}/v1/x?key=secret-in-query`, deployed));
    expect(literal.refused).toBe(true);
    expect(literal.message).toBe(
      `GET ${api.url}/v1/x: refused: 127.0.0.1 is a loopback address, which a deployed server reaches only when its definition allows it: ` +
        `add egress: { allow: ["127.0.0.1:${api.port}"] } (or egress: { allow_private: true }) at the top of the definition`,
    );
    // a name that resolves to loopback is judged by the address it resolves to
    const named = await failure(get(`http://localhost:${api.port}/v1/x`, deployed));
    expect(named.message).toMatch(/refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(api.seen).toEqual([]);
    expect(reports.map((r) => r.refused === undefined)).toEqual([false, false]);
  });

  it('reaches it with allow_private, or with the host and port in allow', async () => {
    const api = await server((_req, res) => res.end('fine'));
    const open = egress({ allow_private: true }).egress;
    expect((await get(`${api.url}/a`, open)).body.toString()).toBe('fine');
    const listed = egress({ allow: [`127.0.0.1:${api.port}`] }).egress;
    expect((await get(`${api.url}/b`, listed)).body.toString()).toBe('fine');
    const otherPort = egress({ allow: [`127.0.0.1:${api.port === 65535 ? 1 : api.port + 1}`] }).egress;
    expect((await failure(get(`${api.url}/c`, otherPort))).refused).toBe(true);
    const dev = egress(undefined, { allowPrivate: true }).egress;
    expect((await get(`${api.url}/d`, dev)).body.toString()).toBe('fine');
    expect(api.seen.map((s) => s.url)).toEqual(['/a', '/b', '/d']);
  });

  it('drops every header of the definition when a redirect leaves the origin', async () => {
    const other = await server((_req, res) => res.end('landed'));
    const api = await server((req, res) => {
      if (req.url === '/start') res.writeHead(302, { location: '/same' }).end();
      else res.writeHead(302, { location: `${other.url}/elsewhere?token=abc` }).end();
    });
    const { egress: open } = egress({ allow_private: true });
    const headers = {
      'x-api-key': 'key-123',
      authorization: 'Bearer tok-456',
      'x-tenant': 'acme',
      cookie: 'a=b',
      accept: 'application/json',
    };
    const result = await get(`${api.url}/start`, open, headers);
    expect(result.body.toString()).toBe('landed');
    // the same origin keeps them
    expect(api.seen.map((s) => [s.url, s.headers['x-api-key'], s.headers['x-tenant']])).toEqual([
      ['/start', 'key-123', 'acme'],
      ['/same', 'key-123', 'acme'],
    ]);
    expect(other.seen).toHaveLength(1);
    const landed = other.seen[0]!;
    expect(landed.url).toBe('/elsewhere?token=abc');
    for (const name of ['x-api-key', 'authorization', 'x-tenant', 'cookie'])
      expect(landed.headers[name]).toBeUndefined();
    expect(landed.headers.accept).toBe('application/json');
    expect(JSON.stringify(landed.headers)).not.toMatch(/key-123|tok-456|acme/);
  });

  it('turns 303, and 301/302 after a POST, into a GET without a body; 307 and 308 keep both', async () => {
    const target = await server((_req, res) => res.end('done'));
    for (const [status, method, body] of [
      [303, 'GET', ''],
      [302, 'GET', ''],
      [301, 'GET', ''],
      [307, 'POST', '{"a":1}'],
      [308, 'POST', '{"a":1}'],
    ] as const) {
      const api = await server(redirect(`${target.url}/after-${status}`, status));
      await callHttp({
        method: 'POST',
        url: `${api.url}/post`,
        headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
        body: '{"a":1}',
        timeoutMs: 5000,
        maxBytes: 1000,
        egress: egress({ allow_private: true }).egress,
      });
      const seen = target.seen.at(-1)!;
      expect([seen.url, seen.method, seen.body, seen.headers['x-api-key']]).toEqual([
        `/after-${status}`,
        method,
        body,
        undefined,
      ]);
    }
  });

  it(`follows at most ${MAX_REDIRECTS} redirects`, async () => {
    let hops = 0;
    const api = await server((_req, res) => res.writeHead(302, { location: `/hop${(hops += 1)}` }).end());
    const error = await failure(get(`${api.url}/start`, egress({ allow_private: true }).egress));
    expect(error.message).toBe(`GET ${api.url}/hop${MAX_REDIRECTS}: more than ${MAX_REDIRECTS} redirects`);
    expect(api.seen).toHaveLength(MAX_REDIRECTS + 1);
  });

  it('refuses a redirect to another scheme', async () => {
    const api = await server(redirect('file:///etc/passwd'));
    expect((await failure(get(`${api.url}/x`, egress({ allow_private: true }).egress))).message).toBe(
      `GET ${api.url}/x: redirected to a file URL; only http and https URLs are allowed`,
    );
  });

  it('refuses a redirect to a private API without the opt-in, even from an allowed host', async () => {
    const inner = await server();
    const api = await server(redirect(`${inner.url}/admin`));
    const { egress: listed } = egress({ allow: [`127.0.0.1:${api.port}`] });
    const error = await failure(get(`${api.url}/x`, listed));
    expect(error.message).toContain(`GET ${inner.url}/admin: refused: 127.0.0.1 is a loopback address`);
    expect(inner.seen).toEqual([]);
  });

  it('refuses metadata and link-local targets even with allow_private, before any connection', async () => {
    for (const location of [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://100.100.100.200/latest/meta-data/',
      'http://169.254.10.10/',
      'http://[fe80::1]/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://0.0.0.0:80/',
    ]) {
      const api = await server(redirect(location));
      let lookups = 0;
      const { egress: open, reports } = egress(
        { allow_private: true },
        {
          lookup: async () => {
            lookups += 1;
            return [{ address: '127.0.0.1', family: 4 }];
          },
        },
      );
      const error = await failure(get(`${api.url}/start`, open, { 'x-api-key': 'k' }));
      expect(error.refused).toBe(true);
      expect(error.message).toContain('no setting allows it');
      // the API itself was reached (by its literal address, no lookup); the target never
      expect(lookups).toBe(0);
      expect(reports.filter((r) => r.refused === undefined).map((r) => r.address)).toEqual(['127.0.0.1']);
      expect(reports.filter((r) => r.refused !== undefined)).toHaveLength(1);
    }
  });

  it('judges the address a name resolves to when it connects (DNS rebinding)', async () => {
    const api = await server((_req, res) => res.end('rebound'));
    const lookups: string[] = [];
    const lookup: EgressLookup = async (hostname) => {
      lookups.push(hostname);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const { egress: deployed, reports } = egress(undefined, { lookup });
    const error = await failure(get(`http://rebind.test:${api.port}/x`, deployed));
    expect(error.message).toContain('refused: rebind.test resolves to 127.0.0.1, a loopback address');
    // one resolution, by the connector: nothing resolves the name again between the check and the connection
    expect(lookups).toEqual(['rebind.test']);
    expect(reports).toMatchObject([{ host: 'rebind.test', address: '127.0.0.1', kind: 'loopback' }]);
    expect(api.seen).toEqual([]);

    // allowed by name: the connection goes to the address judged
    const { egress: listed, reports: made } = egress(
      { allow: ['rebind.test'] },
      { lookup: async () => [{ address: '127.0.0.1', family: 4 }] },
    );
    expect((await get(`http://rebind.test:${api.port}/y`, listed)).body.toString()).toBe('rebound');
    expect(api.seen[0]!.headers.host).toBe(`rebind.test:${api.port}`);
    expect(made).toEqual([{ host: 'rebind.test', port: api.port, address: '127.0.0.1', kind: 'loopback' }]);

    // a name resolving to metadata is refused whatever the definition lists
    const { egress: metadata, reports: refused } = egress(
      { allow: ['rebind.test'], allow_private: true },
      { lookup: async () => [{ address: '169.254.169.254', family: 4 }] },
    );
    expect((await failure(get(`http://rebind.test:${api.port}/z`, metadata))).message).toContain(
      'rebind.test resolves to 169.254.169.254, a cloud metadata address',
    );
    expect(refused.filter((r) => r.refused === undefined)).toEqual([]);
  });

  it('connects to an allowed address of a name that has several', async () => {
    const api = await server((_req, res) => res.end('second'));
    const { egress: deployed } = egress(
      { allow: ['multi.test'] },
      {
        lookup: async () => [
          { address: '169.254.169.254', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ],
      },
    );
    expect((await get(`http://multi.test:${api.port}/`, deployed)).body.toString()).toBe('second');
  });
});
