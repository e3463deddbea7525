#!/usr/bin/env node
// The pictures of docs/dashboard.md, taken of the real page: an engine of its own (a temp home,
// loopback), the calculator example deployed to production and the weather example to staging, calls
// and a test run so the charts, the log and the tests page have something to show; then Debian's
// chromium (playwright-core) opens the page as `mcpctl dashboard` prints it and photographs each view.
// Usage: npm run build && node scripts/dashboard-screenshots.js [OUT_DIR]   (default docs/images)
// Everything started here is stopped here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { chromium } from 'playwright-core';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = resolve(process.argv[2] ?? join(root, 'docs', 'images'));
const home = mkdtempSync(join(tmpdir(), 'mcpctl-screenshots-'));
const env = { ...process.env, MCPCTL_HOME: home, XDG_CONFIG_HOME: join(home, 'config'), CI: 'true' };
delete env.MCPCTL_API_URL;
delete env.MCPCTL_API_KEY;

function mcpctl(...args) {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'mcpctl.cjs'), '--json', ...args], {
    env,
    cwd: root,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`mcpctl ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-600)}`);
  return r.stdout.trim() === '' ? undefined : JSON.parse(r.stdout);
}

/** A few calls of the calculator's tools, some of them failing, spread over a few seconds. */
async function traffic(url) {
  const client = new Client({ name: 'claude-code', version: '2.0.1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  for (let i = 0; i < 40; i++) {
    await client.callTool({ name: 'evaluate', arguments: { expression: i % 9 === 0 ? '1 / ' : `(${i} + 3) * 2` } });
    await client.callTool({ name: 'statistics', arguments: { numbers: [i, i + 1, i * 2] } });
    await sleep(50);
  }
  await client.close();
}

let browser;
try {
  mkdirSync(out, { recursive: true });
  const calculator = mcpctl('deploy', join(root, 'examples', 'calculator', 'server.yaml'), '--env', 'production');
  mcpctl('deploy', join(root, 'examples', 'weather', 'server.yaml'), '--env', 'staging');
  await traffic(calculator.url);
  const server = mcpctl('build', join(root, 'examples', 'calculator', 'server.yaml'));
  // a test run for the tests page (its success rate, whatever it is, is what the page shows)
  const tested = spawnSync(
    process.execPath,
    [join(root, 'bin', 'mcpctl.cjs'), 'test', server.mcp_id, '-m', 'evaluate (2 + 3) * 4'],
    {
      env,
      cwd: root,
      encoding: 'utf8',
    },
  );
  if (tested.status !== 0 && tested.status !== 7)
    throw new Error(`mcpctl test exited ${tested.status}: ${tested.stderr}`);
  const { url } = mcpctl('dashboard');
  const origin = new URL(url).origin;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
  await page.goto(url);
  await page.locator(`tr[data-deployment="${calculator.deployment_id}"]`).waitFor();
  await page.screenshot({ path: join(out, 'dashboard-deployments.png') });
  await page.goto(`${origin}/ui/#/d/${calculator.deployment_id}`);
  await page.locator('.chart[data-drawn="true"]').first().waitFor();
  await page.locator('#log-lines .log-line').first().waitFor();
  await sleep(500);
  await page.screenshot({ path: join(out, 'dashboard-deployment.png'), fullPage: true });
  await page.goto(`${origin}/ui/#/tests`);
  await page.locator('a[href^="#/tests/test_"]').first().click();
  await sleep(500);
  await page.screenshot({ path: join(out, 'dashboard-test-run.png') });
  // the tool the run used, on its server's page at the place of its definition
  await page.locator('.summary dd a[href*="/tools/"]').first().click();
  await page.locator('.item-selected').waitFor();
  // from the top, with the server's name and file above the marked tool
  await page.evaluate('scrollTo(0, 0)');
  await sleep(300);
  await page.screenshot({ path: join(out, 'dashboard-server.png') });
  await page.goto(`${origin}/ui/#/alerts`);
  await sleep(500);
  await page.screenshot({ path: join(out, 'dashboard-alerts.png') });
  await page.setViewportSize({ width: 390, height: 800 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(`${origin}/ui/#/d/${calculator.deployment_id}`);
  await page.locator('.chart[data-drawn="true"]').first().waitFor();
  await page.screenshot({ path: join(out, 'dashboard-phone-dark.png') });
  console.log(`screenshots in ${out}`);
} finally {
  await browser?.close();
  spawnSync(process.execPath, [join(root, 'bin', 'mcpctl.cjs'), 'engine', 'stop'], { env, stdio: 'ignore' });
  rmSync(home, { recursive: true, force: true });
}
