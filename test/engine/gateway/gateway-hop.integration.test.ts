/**
 * The gateway's hop to an instance (proxy.ts over instance-connections.ts), against plain HTTP
 * servers on loopback that play instances which refuse, break kept-alive connections, answer
 * slowly or hold an answer open: which failures are tried on another instance, back-pressure,
 * a client that leaves, the headers passed each way, and the hop over an instance's Unix socket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../../src/engine/gateway/gateway.js';
import { DEFAULT_LIMITS } from '../../../src/engine/deployments/limits.js';
import type { Attempt, CallOutcome, Upstream } from '../../../src/engine/gateway/upstream.js';
import { newRequestId } from '../../../src/engine/ids.js';
import { createGuard, type Guard } from '../../../src/runtime/server/auth.js';
import { closeServer, listen, staleSocket } from '../../support/http.js';
import { waitFor } from '../../support/wait.js';

const started: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const thing of started.splice(0).reverse()) await thing.close();
});

interface FakeInstance {
  id: string;
  port: number;
  /** the Unix socket the gateway reaches it on, if any */
  socketPath?: string;
  /** times the gateway reported it refused a connection */
  refused: number;
}

/** A deployment of `instances`, picked in order (never one already tried). */
function deploymentOf(
  instances: FakeInstance[],
  options: { repeatable: boolean; guard?: Guard },
): Upstream & { outcomes: CallOutcome[] } {
  const outcomes: CallOutcome[] = [];
  return {
    id: 'deploy_test',
    status: 'deployed',
    traced: false,
    guard: options.guard,
    outcomes,
    healthReport: () => ({ healthy: true, body: {} }),
    pick(_request, tried): Attempt | undefined {
      const instance = instances.find((i) => !tried.has(i.id));
      if (instance === undefined) return undefined;
      return {
        instance: instance.id,
        host: '127.0.0.1',
        port: instance.port,
        ...(instance.socketPath === undefined ? {} : { socketPath: instance.socketPath }),
        sticky: false,
        refused: () => (instance.refused += 1),
        answers: async () => true,
        answered: () => {},
        release: () => {},
      };
    },
    safeToRepeat: () => options.repeatable,
    report: (outcome) => outcomes.push(outcome),
    log: () => {},
  };
}

/**
 * The gateway in front of `upstream` as deployment `app`, on a loopback port: its MCP URL. With
 * `requestId`, the gateway is given that id for every request, as the engine's HTTP layer gives it.
 */
async function gatewayFor(
  upstream: Upstream,
  options: { requestId?: string; limits?: typeof DEFAULT_LIMITS } = {},
): Promise<string> {
  const gateway: Gateway = createGateway(
    {
      byName: (name) => (name === 'app' ? upstream : undefined),
      byDomain: () => undefined,
      inactive: async () => undefined,
    },
    { limits: options.limits ?? DEFAULT_LIMITS, clock: Date.now, newRequestId },
  );
  const { server, url } = await listen((req, res) => {
    void gateway(req, res, options.requestId).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  started.push({ close: () => closeServer(server) }, { close: () => gateway.close() });
  return `${url}/d/app/mcp`;
}

/** A plain HTTP server playing an instance. */
async function instance(
  id: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<FakeInstance & { server: Server }> {
  const { server } = await listen(handler);
  started.push({ close: () => closeServer(server) });
  return { id, port: (server.address() as AddressInfo).port, refused: 0, server };
}

/** A folder for sockets, removed after the test. */
function socketFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpctl-hop-'));
  started.push({ close: () => rmSync(dir, { recursive: true, force: true }) });
  return dir;
}

/** A plain HTTP server on a Unix socket. */
async function onSocket(path: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  started.push({ close: () => closeServer(server) });
  return server;
}

/** A port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const { server } = await listen(() => {});
  const { port } = server.address() as AddressInfo;
  await closeServer(server);
  return port;
}

const CALL = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: {} } });
const ANSWER = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'ok' }] } });

function answerCall(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER));
}

async function post(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: CALL,
  });
  return { status: res.status, text: await res.text() };
}

describe('the gateway tries another instance', () => {
  it('when the connection to the first is refused, and reports the refusal', async () => {
    const dead: FakeInstance = { id: 'dead', port: await closedPort(), refused: 0 };
    const live = await instance('live', answerCall);
    const url = await gatewayFor(deploymentOf([dead, live], { repeatable: false }));
    const answer = await post(url);
    expect(answer).toEqual({ status: 200, text: ANSWER });
    expect(dead.refused).toBe(1);
    expect(live.refused).toBe(0);
  });

  /** An instance that answers the first request of each connection and drops the connection at the second. */
  async function droppingKeptAlive(): Promise<FakeInstance & { seen: { requests: number } }> {
    const served = new WeakMap<Socket, number>();
    const seen = { requests: 0 };
    const inst = await instance('dropping', (req, res) => {
      seen.requests += 1;
      const count = served.get(req.socket) ?? 0;
      served.set(req.socket, count + 1);
      if (count >= 1) req.socket.destroy();
      else answerCall(req, res);
    });
    return Object.assign(inst, { seen });
  }

  it('when a kept-alive connection is found dead, only for a request that is safe to repeat', async () => {
    for (const repeatable of [true, false]) {
      const dropping = await droppingKeptAlive();
      const other = await instance('other', answerCall);
      let otherCalls = 0;
      other.server.on('request', () => (otherCalls += 1));
      const url = await gatewayFor(deploymentOf([dropping, other], { repeatable }));
      // the first call leaves a kept-alive connection to `dropping` in the pool; the second finds it dead
      expect(await post(url)).toEqual({ status: 200, text: ANSWER });
      const second = await post(url);
      expect(dropping.seen.requests).toBe(2);
      if (repeatable) {
        expect(second).toEqual({ status: 200, text: ANSWER });
        expect(otherCalls).toBe(1);
      } else {
        expect(second.status).toBe(502);
        expect(JSON.parse(second.text)).toMatchObject({
          id: 7,
          error: { message: expect.stringContaining('closed the connection before answering') },
        });
        expect(otherCalls).toBe(0);
      }
    }
  });

  it('never when a new connection breaks before the answer: the instance may have run the call', async () => {
    const breaking = await instance('breaking', (req) => req.socket.destroy());
    const other = await instance('other', answerCall);
    let otherCalls = 0;
    other.server.on('request', () => (otherCalls += 1));
    const upstream = deploymentOf([breaking, other], { repeatable: true });
    const answer = await post(await gatewayFor(upstream));
    expect(answer.status).toBe(502);
    expect(otherCalls).toBe(0);
    expect(upstream.outcomes.map((o) => o.status)).toEqual([502]);
  });
});

describe('the hop over an instance’s Unix socket', () => {
  /** Where the requests arrived: on the socket (no remote address) or the port, with their Host header. */
  function recording(seen: string[]): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      seen.push(`${req.socket.remoteAddress === undefined ? 'socket' : 'port'} ${req.headers.host ?? ''}`);
      answerCall(req, res);
    };
  }

  it('goes over the socket when the instance has one, with the Host header of its port', async () => {
    const seen: string[] = [];
    const live = await instance('live', recording(seen));
    const socketPath = join(socketFolder(), 'live.sock');
    await onSocket(socketPath, recording(seen));
    const url = await gatewayFor(deploymentOf([{ ...live, socketPath }], { repeatable: false }));
    expect(await post(url)).toEqual({ status: 200, text: ANSWER });
    expect(await post(url)).toEqual({ status: 200, text: ANSWER });
    expect(seen).toEqual([`socket 127.0.0.1:${live.port}`, `socket 127.0.0.1:${live.port}`]);
  });

  it('tries another instance when the socket is missing or nothing listens on it (a killed instance)', async () => {
    const dir = socketFolder();
    const stale = join(dir, 'stale.sock');
    await staleSocket(stale);
    const missing: FakeInstance = {
      id: 'missing',
      port: await closedPort(),
      socketPath: join(dir, 'missing.sock'),
      refused: 0,
    };
    const killed: FakeInstance = { id: 'killed', port: await closedPort(), socketPath: stale, refused: 0 };
    const live = await instance('live', answerCall);
    const upstream = deploymentOf([missing, killed, live], { repeatable: false });
    expect(await post(await gatewayFor(upstream))).toEqual({ status: 200, text: ANSWER });
    expect([missing.refused, killed.refused, live.refused]).toEqual([1, 1, 0]);
    expect(upstream.outcomes.map((o) => o.status)).toEqual([200]);
  });

  it('never reaches an earlier socket when the address comes with another socket, or none', async () => {
    const seen: string[] = [];
    const live = await instance('live', (req, res) => {
      seen.push('port');
      answerCall(req, res);
    });
    const dir = socketFolder();
    for (const name of ['first', 'second']) {
      await onSocket(join(dir, `${name}.sock`), (req, res) => {
        seen.push(name);
        answerCall(req, res);
      });
    }
    const fake: FakeInstance = { ...live, socketPath: join(dir, 'first.sock') };
    const url = await gatewayFor(deploymentOf([fake], { repeatable: false }));
    await post(url);
    fake.socketPath = join(dir, 'second.sock');
    await post(url);
    delete fake.socketPath;
    await post(url);
    expect(seen).toEqual(['first', 'second', 'port']);
  });
});

describe('the hop to an instance', () => {
  it('holds the instance back while the client does not read (back-pressure), then passes every byte', async () => {
    const TOTAL = 64 * 1024 * 1024;
    const piece = Buffer.alloc(64 * 1024, 'x');
    let written = 0;
    let waiting = false;
    const big = await instance('big', (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const more = () => {
        waiting = false;
        while (written < TOTAL) {
          written += piece.length;
          if (!res.write(piece)) {
            waiting = true;
            res.once('drain', more);
            return;
          }
        }
        res.end();
      };
      more();
    });
    const url = await gatewayFor(deploymentOf([big], { repeatable: true }));
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(CALL);
    });
    response.pause();
    // The instance stops when every buffer on the way is full: it waits, and its count stays put.
    let last = -1;
    let still = 0;
    await waitFor('the instance to be held back', () => {
      still = waiting && written === last ? still + 1 : 0;
      last = written;
      return still >= 5 ? true : undefined;
    });
    expect(written).toBeLessThan(TOTAL);
    let received = 0;
    response.on('data', (chunk: Buffer) => (received += chunk.length));
    response.resume();
    await new Promise((resolve) => response.on('end', resolve));
    expect(received).toBe(TOTAL);
  });

  it('sends an event stream’s headers at once, before its first event', async () => {
    // The instance holds its event back until the client has the headers: without them sent on
    // their own, neither side would go on.
    let headersSeen: () => void = () => {};
    const seen = new Promise<void>((resolve) => (headersSeen = resolve));
    const quiet = await instance('quiet', (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders();
      void seen.then(() => res.end(`event: message\ndata: ${ANSWER}\n\n`));
    });
    const url = await gatewayFor(deploymentOf([quiet], { repeatable: true }));
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(
        url,
        { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' } },
        resolve,
      );
      req.on('error', reject);
      req.end(CALL);
    });
    expect(response.headers['content-type']).toBe('text/event-stream');
    headersSeen();
    let text = '';
    response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    await new Promise((resolve) => response.on('end', resolve));
    expect(text).toContain(ANSWER);
  });

  it('stops the instance’s request when the client goes away, before or during the answer', async () => {
    for (const when of ['before', 'during'] as const) {
      let upstreamClosed = false;
      let arrived = false;
      const held = await instance('held', (req, res) => {
        arrived = true;
        req.resume();
        res.on('close', () => (upstreamClosed = true));
        if (when === 'during')
          res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: message\ndata: {}\n\n');
      });
      const upstream = deploymentOf([held], { repeatable: true });
      const url = await gatewayFor(upstream);
      const client = httpRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      });
      client.on('error', () => {});
      client.end(CALL);
      if (when === 'during') {
        const response = await new Promise<IncomingMessage>((resolve) => client.on('response', resolve));
        await new Promise((resolve) => response.once('data', resolve));
      } else {
        await waitFor('the request to reach the instance', () => (arrived ? true : undefined));
      }
      client.destroy();
      await waitFor(`the instance's request to be closed (client gone ${when} the answer)`, () =>
        upstreamClosed ? true : undefined,
      );
      await waitFor('the outcome', () => upstream.outcomes[0]);
      expect([when, upstream.outcomes.map((o) => o.status)]).toEqual([when, [499]]);
    }
  });

  it('passes the client’s headers as sent, without hop-by-hop ones, with the forwarded ones and the request id', async () => {
    let received: string[] = [];
    const echo = await instance('echo', (req, res) => {
      received = req.rawHeaders;
      req.resume();
      res.setHeader('x-several', ['one', 'two']);
      res.setHeader('proxy-authenticate', 'Basic');
      res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
    });
    const url = await gatewayFor(deploymentOf([echo], { repeatable: true }));
    const answer = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(url, {
        method: 'POST',
        // a list, as sent: Node adds neither Host nor Content-Length to it
        headers: [
          'host',
          new URL(url).host,
          'content-length',
          String(Buffer.byteLength(CALL)),
          'content-type',
          'application/json',
          'x-twice',
          'a',
          'x-twice',
          'b',
          'te',
          'trailers',
          'keep-alive',
          'timeout=1',
          'x-request-id',
          'req_fromtheclient0',
        ],
      });
      req.on('response', resolve).on('error', reject);
      req.end(CALL);
    });
    answer.resume();
    expect(answer.statusCode).toBe(200);
    const pairs = Array.from({ length: received.length / 2 }, (_, i) => [
      received[2 * i]!.toLowerCase(),
      received[2 * i + 1]!,
    ]);
    const values = (name: string) => pairs.filter(([n]) => n === name).map(([, v]) => v);
    expect(values('x-twice')).toEqual(['a', 'b']);
    expect(values('te')).toEqual([]);
    expect(values('keep-alive')).toEqual([]);
    expect(values('host')).toEqual([`127.0.0.1:${echo.port}`]);
    expect(values('x-forwarded-host')).toEqual([new URL(url).host]);
    expect(values('x-forwarded-for')).toEqual(['127.0.0.1']);
    expect(values('x-request-id')).toEqual(['req_fromtheclient0']);
    expect(answer.headers['x-several']).toBe('one, two');
    expect(answer.headers['proxy-authenticate']).toBeUndefined();
    expect(answer.headers['x-request-id']).toBe('req_fromtheclient0');
  });
});

describe('a page a deployment serves', () => {
  it('gets an origin of its own: ATTACK: a page on the engine’s origin would use the dashboard’s session', async () => {
    // an instance answering a page whose script would call /ui/session and /v1 with the engine's cookie
    const page = await instance('page', (req, res) => {
      req.resume();
      res
        .writeHead(200, { 'content-type': 'text/html', 'content-security-policy': "default-src 'self'" })
        .end('<script>fetch("/ui/session").then((r) => r.json()).then(steal)</script>');
    });
    const url = await gatewayFor(deploymentOf([page], { repeatable: true }));
    const answer = await fetch(url, { method: 'POST', body: CALL, headers: { 'content-type': 'application/json' } });
    await answer.text();
    // both policies are enforced: the instance's own, and sandbox (an opaque origin: no engine cookies)
    expect(answer.headers.get('content-security-policy')).toBe("default-src 'self', sandbox");
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('the request id', () => {
  it('is on every answer, passed on or the gateway’s own, and is the one the instance is sent', async () => {
    const sent: Array<string | string[] | undefined> = [];
    const live = await instance('live', (req, res) => {
      sent.push(req.headers['x-request-id']);
      answerCall(req, res);
    });
    const given = 'req_giventhegatewy';
    const url = await gatewayFor(deploymentOf([live], { repeatable: false }), {
      requestId: given,
      limits: { ...DEFAULT_LIMITS, maxBodyBytes: 64 },
    });
    const ask = async (target: string, body: string): Promise<{ status: number; id: string | null }> => {
      const res = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'req_fromtheclient0' },
        body,
      });
      await res.text();
      return { status: res.status, id: res.headers.get('x-request-id') };
    };
    const small = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(await ask(url, small)).toEqual({ status: 200, id: given });
    expect(sent).toEqual([given]);
    // the gateway's own answers: a body too large, no such endpoint, no such deployment, its health
    expect(await ask(url, CALL)).toEqual({ status: 413, id: given });
    expect(await ask(url.replace(/\/mcp$/, '/other'), small)).toEqual({ status: 404, id: given });
    expect(await ask(url.replace('/d/app/', '/d/none/'), small)).toEqual({ status: 404, id: given });
    const health = await fetch(url.replace(/\/mcp$/, '/health'));
    expect(health.headers.get('x-request-id')).toBe(given);
    // an instance that cannot be reached
    const dead: FakeInstance = { id: 'dead', port: await closedPort(), refused: 0 };
    const nowhere = await gatewayFor(deploymentOf([dead], { repeatable: false }), { requestId: given });
    expect(await ask(nowhere, small)).toEqual({ status: 503, id: given });
    expect(sent).toHaveLength(1);
  });
});

describe('the gateway checks credentials before any instance sees a request', () => {
  /** An instance that answers everything and keeps what it was sent: only the gateway can refuse. */
  async function trusting(): Promise<
    FakeInstance & { seen: Array<{ headers: IncomingMessage['headers']; body: string }> }
  > {
    const seen: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
    const fake = await instance('trusting', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
      });
    });
    return Object.assign(fake, { seen });
  }

  it('refuses a missing or wrong bearer token 401 without passing it on, and accepts each rotated token', async () => {
    const fake = await trusting();
    const guard = createGuard({ type: 'bearer', tokens: ['token-new-0123', 'token-old-4567'] });
    const url = await gatewayFor(deploymentOf([fake], { repeatable: false, guard }));
    expect((await post(url)).status).toBe(401);
    expect((await post(url, { authorization: 'Bearer token-wrong-89' })).status).toBe(401);
    expect(fake.seen).toHaveLength(0);
    expect((await post(url, { authorization: 'Bearer token-new-0123' })).status).toBe(200);
    expect((await post(url, { authorization: 'Bearer token-old-4567' })).status).toBe(200);
    expect(fake.seen).toHaveLength(2);
  });

  it('strips an identity the client names (X-MCP-User-Id, _meta) from what it passes on', async () => {
    const fake = await trusting();
    const guard = createGuard({ type: 'bearer', tokens: ['token-new-0123'] });
    const url = await gatewayFor(deploymentOf([fake], { repeatable: false, guard }));
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'echo', arguments: {}, _meta: { 'mcpctl/user_id': 'admin', other: 1 } },
    });
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: 'Bearer token-new-0123',
        'x-mcp-user-id': 'admin',
      },
      body,
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(fake.seen).toHaveLength(1);
    expect(fake.seen[0]!.headers['x-mcp-user-id']).toBeUndefined();
    expect(JSON.parse(fake.seen[0]!.body)).toMatchObject({ params: { name: 'echo', _meta: { other: 1 } } });
    expect(fake.seen[0]!.body).not.toContain('admin');
  });

  it('passes the identity header on for a server without auth (its instance decides, as before)', async () => {
    const fake = await trusting();
    const url = await gatewayFor(deploymentOf([fake], { repeatable: false }));
    expect((await post(url, { 'x-mcp-user-id': 'alice' })).status).toBe(200);
    expect(fake.seen[0]!.headers['x-mcp-user-id']).toBe('alice');
  });
});
