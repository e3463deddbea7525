/**
 * The dashboard as a user opens it: the built `mcpctl` deploys the README's weather example to its
 * background engine, `mcpctl dashboard --json` gives a one-time URL, and Debian's chromium
 * (playwright-core, test/support/browser.ts) opens it. The list shows the deployment, and one made
 * from the terminal meanwhile appears by itself; the deployment's page
 * draws a latency chart and shows a tool call's log line within seconds; stopping it from the page
 * is what `mcpctl status` then says, and the list shows it among the stopped ones. The page must
 * log no console error and no failed request.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/app.js';
import { useDashboardTests } from '../support/dashboard-tests.js';

const { chromium: browser, sandbox, mcpctl, json } = useDashboardTests();

describe('the dashboard in a browser', () => {
  it('lists the weather deployment, charts it, tails its log, and stops it as mcpctl status then says', async () => {
    await sandbox();
    const deployed = json<{ deployment_id: string; url: string }>(
      await mcpctl(['deploy', join(ROOT, 'examples', 'weather', 'server.yaml'), '--env', 'production', '--json']),
    );
    const id = deployed.deployment_id;
    const { url } = json<{ url: string; expires_at: string }>(await mcpctl(['dashboard', '--json']));
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ui\/#code=[\w-]+$/);

    await using harness = await browser().openPage({ timeoutMs: 20_000 });
    const { page } = harness;
    await page.goto(url);
    // logged in by the code, which the page took out of the address
    const row = page.locator(`tr[data-deployment="${id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('weather');
    expect(page.url()).not.toContain('code=');
    // a deployment made meanwhile from the terminal appears by itself
    const other = json<{ deployment_id: string }>(
      await mcpctl(['deploy', join(ROOT, 'examples', 'calculator', 'server.yaml'), '--env', 'staging', '--json']),
    );
    await page.locator(`tr[data-deployment="${other.deployment_id}"]`).waitFor({ timeout: 10_000 });

    await page.goto(`${new URL(url).origin}/ui/#/d/${id}`);
    await page.locator('.chart[data-drawn="true"]').first().waitFor();
    await page.locator('#log-lines').waitFor();

    // a tool call: its log line arrives in the tail (the weather API is not reachable from here: the
    // call fails, and its line says so as well)
    const callLines = page.locator('#log-lines .log-line', { hasText: 'find_location' });
    const before = await callLines.count();
    const client = new Client({ name: 'dashboard-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${deployed.url}/mcp`)));
    await client.callTool({ name: 'find_location', arguments: { name: 'Berlin' } });
    await client.close();
    await callLines.nth(before).waitFor({ timeout: 10_000 });

    // stopped from the page, after its confirmation
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('button', { name: 'Stop it' }).click();
    await page.locator('.page-head .badge', { hasText: 'stopped' }).waitFor();
    const status = json<{ status: string }>(await mcpctl(['status', id, '--json']));
    expect(status.status).toBe('stopped');

    // the list counts it among the stopped ones, and shows it there when asked
    await page.goto(`${new URL(url).origin}/ui/#/`);
    await page.locator(`tr[data-deployment="${other.deployment_id}"]`).waitFor();
    expect(await page.locator(`tr[data-deployment="${id}"]`).count()).toBe(0);
    await page.getByText('1 stopped deployment', { exact: true }).click();
    const stoppedRow = page.locator(`details tr[data-deployment="${id}"]`);
    await stoppedRow.waitFor();
    expect(await stoppedRow.textContent()).toContain('production');

    harness.assertClean();
  }, 180_000);

  it('logs a first visit in with the API key typed in its form, with no error on the way', async () => {
    const box = await sandbox();
    json(await mcpctl(['engine', 'start', '--json']));
    const engine = JSON.parse(readFileSync(join(box.env.MCPCTL_HOME!, 'engine.json'), 'utf8')) as {
      url: string;
      apiKey: string;
    };
    await using harness = await browser().openPage({ timeoutMs: 20_000 });
    const { page } = harness;
    await page.goto(`${engine.url}/ui/`);
    await page.getByLabel('API key').fill(engine.apiKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page
      .getByText('Nothing is running', { exact: false })
      .or(page.getByText('No deployment is running'))
      .waitFor();
    expect(page.url()).not.toContain(engine.apiKey);
    harness.assertClean();
  }, 60_000);
});
