/**
 * The browser harness (browser.ts) against pages served on loopback: a clean page passes, and each
 * kind of problem (a console error, an uncaught error, a failed request of the page's origin) is
 * reported unless the test expects it. Runs Debian's chromium; downloads nothing.
 */
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listen } from './http.js';
import { launchBrowser, startChromium, type ChromiumHandle } from './browser.js';
import { tempDir } from './temp.js';

// The dashboard's policy: a page that breaks it shows a console error, which the harness reports.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'";

function html(script: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>t</title><link rel="icon" href="data:,">
<script src="/${script}.js" defer></script></head><body><h1>Hello</h1></body></html>`;
}

const SCRIPTS: Record<string, string> = {
  clean: "document.querySelector('h1').textContent = 'Ready';",
  'console-error': "console.error('something broke');",
  thrown: "setTimeout(() => { throw new Error('boom'); });",
  missing: "fetch('/v1/nothing').then(() => { document.title = 'fetched'; });",
  inline: "document.body.insertAdjacentHTML('beforeend', '<img src=\"https://example.invalid/x.png\">');",
};

let server: Server;
let base: string;
let chromium: ChromiumHandle;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const page = /^\/page\/([a-z-]+)$/.exec(path)?.[1];
    const script = /^\/([a-z-]+)\.js$/.exec(path)?.[1];
    if (page !== undefined && page in SCRIPTS) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CSP });
      res.end(html(page));
    } else if (script !== undefined && script in SCRIPTS) {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(SCRIPTS[script]);
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"success":false}');
    }
  });
  base = (await listen(server)).url;
  chromium = await startChromium();
}, 60_000);
afterAll(async () => {
  await chromium?.close();
  await closeServer(server);
});

describe('the browser harness', () => {
  it('launches the installed chromium, never a downloaded one, and closes it', async () => {
    const browser = await launchBrowser();
    expect(browser.executablePath).not.toContain('ms-playwright');
    expect(browser.browser.version()).toMatch(/^\d+\./);
    await browser.page.goto(`${base}/page/clean`);
    browser.assertClean();
    await browser.close();
    expect(browser.browser.isConnected()).toBe(false);
  });

  it('passes a clean page, and takes a screenshot of it', async () => {
    await using browser = await chromium.openPage();
    await using dir = await tempDir('mcpctl-browser-');
    await browser.page.goto(`${base}/page/clean`);
    await browser.page.getByRole('heading', { name: 'Ready' }).waitFor();
    const file = join(dir.dir, 'clean.png');
    await browser.screenshot(file);
    expect((await stat(file)).size).toBeGreaterThan(1000);
    browser.assertClean();
  });

  it.each([
    { page: 'console-error', problem: /console error: something broke/ },
    { page: 'thrown', problem: /uncaught error: .*boom/ },
    { page: 'missing', problem: /GET \/v1\/nothing answered 404/ },
    // a CSP violation is a console error
    { page: 'inline', problem: /console error: .*Content Security Policy/ },
  ])('reports $page', async ({ page, problem }) => {
    await using browser = await chromium.openPage();
    await browser.page.goto(`${base}/page/${page}`);
    await expect.poll(() => browser.problems.join('\n')).toMatch(problem);
    expect(() => browser.assertClean()).toThrow(problem);
  });

  it('does not count a failure the test expects', async () => {
    await using browser = await chromium.openPage();
    browser.expectFailure({ path: '/v1/nothing', status: 404 });
    await browser.page.goto(`${base}/page/missing`);
    await expect.poll(() => browser.page.title()).toBe('fetched');
    browser.assertClean();
  });

  it('a phone-sized viewport', async () => {
    await using browser = await chromium.openPage({ viewport: { width: 375, height: 667 } });
    await browser.page.goto(`${base}/page/clean`);
    // a string: the tests are compiled without the DOM's types
    expect(await browser.page.evaluate('window.innerWidth')).toBe(375);
    browser.assertClean();
  });
});
