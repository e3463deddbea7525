/**
 * The dashboard's sessions on a real socket: a one-time code (made with the API key) or a typed
 * key becomes an HttpOnly cookie, which the API accepts only together with the session's CSRF
 * token; codes are single use and short-lived; logging out ends the session; foreign pages are
 * refused; nothing secret reaches the log, and a deployment never sees the cookie.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeploymentService } from '../../../src/engine/services.js';
import { reachedOverHttps, sessionCookie, UiSessions } from '../../../src/engine/http/ui-session.js';
import { call, startTestApp, TEST_KEY, type Answer, type TestApp, type TestAppOptions } from '../../support/app.js';

let target: TestApp | undefined;
let now = Date.UTC(2026, 2, 10, 12, 0, 0);

afterEach(async () => {
  await target?.close();
  target = undefined;
});

async function start(options: TestAppOptions = {}): Promise<TestApp> {
  now = Date.UTC(2026, 2, 10, 12, 0, 0);
  target = await startTestApp({ clock: () => now, ...options });
  return target;
}

interface Login {
  cookie: string;
  csrf: string;
  setCookie: string;
}

async function makeCode(app: TestApp): Promise<{ code: string; url: string; expires_at: string }> {
  const answer = await call(app.url, 'POST', '/v1/dashboard/codes');
  expect(answer.status).toBe(201);
  return answer.body.data as { code: string; url: string; expires_at: string };
}

function logIn(app: TestApp, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(app.url, 'POST', '/ui/session', { json: body, key: null, headers });
}

/** `mcpctl_session=<value>` of a successful login, and its CSRF token. */
function loginOf(answer: Answer): Login {
  expect(answer.status).toBe(200);
  const setCookie = answer.headers.getSetCookie()[0]!;
  return { cookie: setCookie.split(';')[0]!, csrf: answer.body.data.csrf as string, setCookie };
}

async function logInWithCode(app: TestApp): Promise<Login> {
  return loginOf(await logIn(app, { code: (await makeCode(app)).code }));
}

/** A request of the page: the session's cookie and, unless `csrf` says otherwise, its token. */
function asPage(app: TestApp, login: Login, method: string, path: string, csrf: string | null = login.csrf) {
  const headers: Record<string, string> = { cookie: login.cookie };
  if (csrf !== null) headers['x-mcpctl-csrf'] = csrf;
  return call(app.url, method, path, { key: null, headers, ...(method === 'POST' ? { json: {} } : {}) });
}

describe('logging in with a one-time code', () => {
  it('gives an HttpOnly, SameSite=Strict cookie and a CSRF token that together call /v1', async () => {
    const app = await start();
    const made = await makeCode(app);
    expect(made.code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(made.url).toBe(`${app.url}/ui/#code=${made.code}`);
    expect(Date.parse(made.expires_at) - now).toBe(60_000);

    const login = loginOf(await logIn(app, { code: made.code }));
    expect(login.setCookie).toMatch(
      /^mcpctl_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/,
    );
    expect(login.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);

    expect((await asPage(app, login, 'GET', '/v1/servers')).status).toBe(200);
    const again = await call(app.url, 'GET', '/ui/session', { key: null, headers: { cookie: login.cookie } });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ csrf: login.csrf, expires_at: new Date(now + 43_200_000).toISOString() });
  });

  it('takes a code once, and not after its minute', async () => {
    const app = await start();
    const { code } = await makeCode(app);
    expect((await logIn(app, { code })).status).toBe(200);
    const reused = await logIn(app, { code });
    expect(reused.status).toBe(401);
    expect(reused.body.error.message).toContain('mcpctl dashboard');

    const late = await makeCode(app);
    now += 60_001;
    expect((await logIn(app, { code: late.code })).status).toBe(401);
    expect((await logIn(app, { code: 'never-made-0123456789' })).status).toBe(401);
  });

  it('ends with the session lifetime of 12 hours', async () => {
    const app = await start();
    const login = await logInWithCode(app);
    now += 12 * 3600_000;
    expect((await asPage(app, login, 'GET', '/v1/servers')).status).toBe(401);
  });
});

describe('logging in with the API key typed into the page', () => {
  it('opens a session for the right key', async () => {
    const app = await start();
    const login = loginOf(await logIn(app, { api_key: TEST_KEY }));
    expect((await asPage(app, login, 'GET', '/v1/servers')).status).toBe(200);
  });

  it('ATTACK: guessing through the form is throttled like the header, by the same count', async () => {
    const app = await start();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) statuses.push((await logIn(app, { api_key: `guess-${i}-0123456789` })).status);
    expect(statuses.slice(0, 9)).toEqual(Array(9).fill(401));
    expect(statuses.slice(9)).toEqual([429, 429, 429]);
    // blocked: the right key is refused too, through the form and through the header
    const right = await logIn(app, { api_key: TEST_KEY });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call(app.url, 'GET', '/v1/servers')).status).toBe(429);
  });

  it('ATTACK: wrong codes count towards the same block', async () => {
    const app = await start();
    const { code } = await makeCode(app);
    for (let i = 0; i < 10; i += 1) await logIn(app, { code: `guess-${i}-0123456789` });
    expect((await logIn(app, { code })).status).toBe(429);
  });

  it('refuses a body that is not JSON, or neither a code nor a key', async () => {
    const app = await start();
    const form = await call(app.url, 'POST', '/ui/session', {
      key: null,
      body: `api_key=${TEST_KEY}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect((await logIn(app, { code: 'a', api_key: TEST_KEY })).status).toBe(422);
    expect((await logIn(app, {})).status).toBe(422);
  });
});

describe('the session cookie on /v1', () => {
  it('ATTACK: is refused without the CSRF header, or with a wrong one, on GET and POST', async () => {
    const app = await start();
    const login = await logInWithCode(app);
    const other = await logInWithCode(app);
    for (const [method, path] of [
      ['GET', '/v1/servers'],
      ['POST', '/v1/deploy/deploy_0123456789/stop'],
    ] as const) {
      for (const csrf of [null, '', 'wrong-token', other.csrf]) {
        const answer = await asPage(app, login, method, path, csrf);
        expect(answer.status, `${method} ${path} with ${String(csrf)}`).toBe(401);
        expect(answer.body.error.code).toBe('unauthorized');
      }
    }
    expect((await asPage(app, login, 'GET', '/v1/servers')).status).toBe(200);
  });

  it('ATTACK: a session cannot make login codes', async () => {
    const app = await start();
    const login = await logInWithCode(app);
    const answer = await asPage(app, login, 'POST', '/v1/dashboard/codes');
    expect(answer.status).toBe(403);
    expect(answer.body.error.message).toContain('API key');
    expect((await asPage(app, login, 'POST', '/v1/dashboard/codes/')).status).toBe(403);
  });

  it('ATTACK: a cookie nobody was given is refused', async () => {
    const app = await start();
    const forged = { cookie: 'mcpctl_session=forged-0123456789', csrf: 'forged', setCookie: '' };
    expect((await asPage(app, forged, 'GET', '/v1/servers')).status).toBe(401);
    const asked = await call(app.url, 'GET', '/ui/session', { key: null, headers: { cookie: forged.cookie } });
    expect(asked.status).toBe(200);
    expect(asked.body.data).toBeNull();
  });

  it('a first visit, without a cookie, learns there is no session without an error', async () => {
    const app = await start();
    const asked = await call(app.url, 'GET', '/ui/session', { key: null });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ success: true, data: null });
  });
});

describe('logging out', () => {
  it('needs the CSRF header, then ends the session and expires the cookie', async () => {
    const app = await start();
    const login = await logInWithCode(app);
    // ATTACK: a page of another site can make the browser send the cookie, but not the token
    expect((await asPage(app, login, 'POST', '/ui/logout', null)).status).toBe(401);
    expect((await asPage(app, login, 'GET', '/v1/servers')).status).toBe(200);

    const out = await asPage(app, login, 'POST', '/ui/logout');
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()[0]).toMatch(/^mcpctl_session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0$/);
    expect((await asPage(app, login, 'GET', '/v1/servers')).status).toBe(401);
    const after = await call(app.url, 'GET', '/ui/session', { key: null, headers: { cookie: login.cookie } });
    expect(after.body.data).toBeNull();
  });
});

describe('pages of other origins', () => {
  it('ATTACK: are refused, at the login and on /v1 with a valid session', async () => {
    const app = await start();
    const evil = { origin: 'http://evil.example' };
    const { code } = await makeCode(app);
    expect((await logIn(app, { code }, evil)).status).toBe(403);
    // the refused login did not use the code up
    const login = loginOf(await logIn(app, { code }, { origin: app.url }));
    const headers = { cookie: login.cookie, 'x-mcpctl-csrf': login.csrf };
    expect((await call(app.url, 'GET', '/v1/servers', { key: null, headers: { ...headers, ...evil } })).status).toBe(
      403,
    );
    expect((await call(app.url, 'GET', '/ui/session', { key: null, headers: { ...headers, ...evil } })).status).toBe(
      403,
    );
    // the engine's own page passes
    expect(
      (await call(app.url, 'GET', '/v1/servers', { key: null, headers: { ...headers, origin: app.url } })).status,
    ).toBe(200);
  });
});

describe('secrets', () => {
  it('no code, cookie or token reaches the log', async () => {
    const app = await start();
    const made = await makeCode(app);
    const login = loginOf(await logIn(app, { code: made.code }));
    await asPage(app, login, 'GET', '/v1/servers');
    await asPage(app, login, 'GET', '/v1/servers', 'wrong');
    await asPage(app, login, 'POST', '/ui/logout');
    const logged = JSON.stringify(app.logs);
    expect(app.logs.length).toBeGreaterThan(3);
    for (const secret of [made.code, login.cookie.split('=')[1]!, login.csrf]) expect(logged).not.toContain(secret);
  });

  it('ATTACK: a deployment (the same origin) never sees the session cookie', async () => {
    const seen: Array<string | undefined> = [];
    const deployments = {
      handleGateway: async (req: IncomingMessage, res: ServerResponse) => {
        seen.push(req.headers.cookie);
        res.end('ok');
        return true;
      },
      close: async () => {},
    } as unknown as DeploymentService;
    const app = await start({ deployments });
    const login = await logInWithCode(app);
    await call(app.url, 'GET', '/mcp/weather', { key: null, headers: { cookie: `theme=dark; ${login.cookie}; a=b` } });
    await call(app.url, 'GET', '/mcp/weather', { key: null, headers: { cookie: login.cookie } });
    expect(seen).toEqual(['theme=dark; a=b', undefined]);
  });
});

describe('the table of codes and sessions', () => {
  it('keeps at most maxCodes codes and maxSessions sessions, dropping the oldest', () => {
    const sessions = new UiSessions({ maxCodes: 3, maxSessions: 2 }, () => now);
    const codes = [1, 2, 3, 4].map(() => sessions.makeCode().code);
    expect(sessions.size.codes).toBe(3);
    expect(sessions.redeemCode(codes[0]!)).toBe(false);
    expect(sessions.redeemCode(codes[3]!)).toBe(true);
    const opened = [1, 2, 3].map(() => sessions.open());
    expect(sessions.size.sessions).toBe(2);
    expect(sessions.find(opened[0]!.id)).toBeUndefined();
    expect(sessions.find(opened[2]!.id)?.csrf).toBe(opened[2]!.csrf);
  });

  it('marks the cookie Secure when the browser reached the engine over HTTPS', () => {
    const req = (encrypted: boolean, host: string) =>
      ({ socket: { encrypted }, headers: { host } }) as unknown as IncomingMessage;
    expect(reachedOverHttps(req(true, '127.0.0.1:7443'), undefined)).toBe(true);
    expect(reachedOverHttps(req(false, 'mcp.example.com'), 'https://mcp.example.com')).toBe(true);
    expect(reachedOverHttps(req(false, '127.0.0.1:7070'), 'https://mcp.example.com')).toBe(false);
    expect(reachedOverHttps(req(false, '127.0.0.1:7070'), undefined)).toBe(false);
    expect(sessionCookie('v', 10, true)).toBe(
      'mcpctl_session=v; HttpOnly; SameSite=Strict; Path=/; Max-Age=10; Secure',
    );
  });
});
