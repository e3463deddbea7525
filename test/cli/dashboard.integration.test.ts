/**
 * `mcpctl dashboard` against a real engine: the URL it prints carries a code that logs a browser
 * in once; and when it would open a browser (never here: stdout is not a terminal).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserOpener } from '../../src/cli/commands/dashboard.js';
import { runCli } from '../support/cli.js';
import { startTestEngine, type TestEngine } from '../support/engine.js';

let t: TestEngine;

beforeAll(async () => {
  t = await startTestEngine();
});
afterAll(async () => {
  await t.close();
});

/** POST /ui/session with the code of a dashboard URL, as the page does. */
async function logInWith(url: string): Promise<Response> {
  const code = new URL(url).hash.replace(/^#code=/, '');
  return fetch(new URL('/ui/session', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
}

describe('mcpctl dashboard', () => {
  it('--json gives the URL of a code that logs in once', async () => {
    const result = await runCli(['dashboard', '--json'], { env: t.env, cwd: t.sandbox.dir });
    expect(result.code).toBe(0);
    const { url, expires_at } = result.json<{ url: string; expires_at: string }>();
    expect(url).toMatch(new RegExp(`^${t.engine.url}/ui/#code=[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(expires_at)).toBeGreaterThan(Date.now());

    const first = await logInWith(url);
    expect(first.status).toBe(200);
    expect(first.headers.getSetCookie()[0]).toMatch(/^mcpctl_session=[^;]+; HttpOnly; SameSite=Strict; Path=\//);
    expect((await logInWith(url)).status).toBe(401);
  });

  it('prints the URL and says it works once, within a minute', async () => {
    const result = await runCli(['dashboard'], { env: t.env, cwd: t.sandbox.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/the dashboard: http:\/\/127\.0\.0\.1:\d+\/ui\/#code=/);
    expect(result.stdout).toContain('once, within a minute');
    expect(result.stdout).not.toContain('opening it in your browser');
  });

  it('explains a service that refuses the key', async () => {
    const result = await runCli(['dashboard'], { env: { ...t.env, MCPCTL_API_KEY: 'wrong-key-0123456789abcdef' } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('API key');
  });
});

describe('opening a browser', () => {
  const desktop = { DISPLAY: ':0' };
  it.each([
    ['a Linux desktop', { env: desktop, platform: 'linux', tty: true }, 'xdg-open'],
    ['Wayland', { env: { WAYLAND_DISPLAY: 'wayland-0' }, platform: 'linux', tty: true }, 'xdg-open'],
    ['macOS', { env: {}, platform: 'darwin', tty: true }, 'open'],
    ['Windows', { env: {}, platform: 'win32', tty: true }, 'cmd'],
    ['Linux over SSH', { env: {}, platform: 'linux', tty: true }, undefined],
    ['output not on a terminal', { env: desktop, platform: 'linux', tty: false }, undefined],
    ['CI', { env: { ...desktop, CI: 'true' }, platform: 'darwin', tty: true }, undefined],
  ] as const)('%s', (_name, context, command) => {
    expect(browserOpener({ ...context, env: { ...context.env } })?.command).toBe(command);
  });
});
