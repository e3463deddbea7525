/**
 * From a test run to where its tool is defined, as a user follows it: the built `mcpctl` builds the
 * README's weather example from a relative path, `mcpctl test` runs the offline agent on it so that a
 * run uses a tool, and Debian's chromium (test/support/browser.ts) opens the dashboard: Tests → the run
 * → the tool leads to the server's page, which says at which line of the file the tool is written.
 * The page must log no console error and no failed request, and fit a phone's width.
 */
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/app.js';
import { useDashboardTests } from '../support/dashboard-tests.js';

const { chromium: browser, sandbox, mcpctl, json } = useDashboardTests();

/** The 1-based line of the `- name: <tool>` item in a definition's text. */
function lineOfTool(text: string, tool: string): number {
  const index = text.split('\n').findIndex((line) => line.trim() === `- name: ${tool}`);
  expect(index, `${tool} in the definition`).toBeGreaterThanOrEqual(0);
  return index + 1;
}

describe('test runs link to where their tools are defined', () => {
  it('Tests → the run → its tool shows the tool "defined at" its line of weather/server.yaml', async () => {
    const box = await sandbox();
    await cp(join(ROOT, 'examples', 'weather'), join(box.dir, 'weather'), { recursive: true });
    const file = 'weather/server.yaml';
    const line = lineOfTool(await readFile(join(box.dir, file), 'utf8'), 'find_location');

    const built = json<{ mcp_id: string }>(await mcpctl(['build', file, '--json']));
    // the offline agent calls find_location for this message; the call itself cannot reach the weather API
    await mcpctl(['test', file, '-m', 'Where is Berlin? Use find_location.', '--json']);
    const { url } = json<{ url: string }>(await mcpctl(['dashboard', '--json']));

    await using harness = await browser().openPage({ timeoutMs: 20_000 });
    const { page } = harness;
    await page.goto(url);
    await page.getByRole('link', { name: 'Tests', exact: true }).click();
    const run = page.locator('tbody tr', { hasText: 'Berlin' }).first();
    // the list links each tool a run used too
    expect(await run.locator('a', { hasText: 'find_location' }).getAttribute('href')).toBe(
      `#/servers/${built.mcp_id}/tools/find_location`,
    );
    await run.locator('a.mono').click();

    // the run page: the server's name leads to its page, each tool used to its place there
    await expect.poll(() => page.locator('.page-head h1 a').getAttribute('href')).toBe(`#/servers/${built.mcp_id}`);
    await page.locator('.summary dd a', { hasText: 'find_location' }).first().click();
    await page.waitForURL(`**/ui/#/servers/${built.mcp_id}/tools/find_location`);

    const tool = page.locator('#tool-find_location');
    await tool.waitFor();
    expect(await tool.locator('.defined-at').textContent()).toBe(`${file}:${line}:5`);
    expect(await tool.getAttribute('class')).toContain('item-selected');
    // keyboard users land on the tool too
    expect(await page.evaluate('document.activeElement?.id')).toBe('tool-find_location');
    expect(await tool.textContent()).toContain('Handler');
    expect(await tool.locator('pre.schema').first().textContent()).toContain('"count"');
    // the other items are there with their places, and nothing of a handler's configuration is
    const body = (await page.locator('.content').textContent()) ?? '';
    expect(body).toContain('weather://codes');
    expect(body).toContain('plan_outing');
    expect(body).toContain('get_forecast');
    expect(body).toContain(`Built from${file}`);
    expect(body).not.toContain('open-meteo.com');
    harness.assertClean();

    // on a phone's width the page does not overflow sideways
    await using phone = await browser().openPage({ viewport: { width: 375, height: 740 }, timeoutMs: 20_000 });
    const fresh = json<{ url: string }>(await mcpctl(['dashboard', '--json']));
    await phone.page.goto(fresh.url);
    await phone.page.locator('nav').waitFor();
    await phone.page.goto(`${new URL(fresh.url).origin}/ui/#/servers/${built.mcp_id}/tools/find_location`);
    await phone.page.locator('#tool-find_location .defined-at').waitFor();
    const overflow = await phone.page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow).toBeLessThanOrEqual(0);
    phone.assertClean();
  }, 180_000);
});
