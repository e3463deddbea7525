/**
 * The gateway's lookups by domain and by stable name (the registry's indexes) through a whole
 * life: deploy, redeploy, stop, remove, and an engine restart that restores what was deployed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, rawRequest, type Harness } from '../../support/deployments.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const DOMAIN = 'tools.example.test';

/** The version a tool call answers with through `url` (with `host`), or its HTTP status. */
async function version(url: string, host?: string): Promise<string> {
  const answer = await rawRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(host === undefined ? {} : { host }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'version', arguments: {} } }),
  });
  return answer.status === 200
    ? (JSON.parse(answer.body) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text
    : `HTTP ${answer.status}`;
}

describe('lookups by domain and stable name', () => {
  it('follow deploy, redeploy, stop, remove and restore', async () => {
    h = await createHarness();
    const v1 = await h.addServer('tools', { version: '1' });
    const v2 = await h.addServer('tools', { version: '2' });
    const byDomain = () => version(`${h!.baseUrl}/mcp`, DOMAIN);
    const byStable = () => version(`${h!.baseUrl}/d/tools.staging/mcp`);
    const served = () => h!.service.servesDomain?.(DOMAIN);

    expect([await byDomain(), await byStable(), served()]).toEqual(['HTTP 404', 'HTTP 404', false]);
    const a = await h.deploy(v1, 'staging', { domain: DOMAIN });
    expect([await byDomain(), await byStable(), served()]).toEqual(['1', '1', true]);

    // a redeploy takes over both once deployed; the one it replaced stops
    const b = await h.deploy(v2, 'staging', { domain: DOMAIN });
    expect([await byDomain(), await byStable()]).toEqual(['2', '2']);
    expect((await h.service.status(a.deployment_id))?.status).toBe('stopped');

    // across an engine restart, the deployed one is found again
    await h.restart();
    await h.waitUntil(b.deployment_id, (d) => d.status === 'deployed' && (d.instances ?? []).length > 0, 'restored');
    expect([await byDomain(), await byStable(), h.service.servesDomain?.(DOMAIN)]).toEqual(['2', '2', true]);

    // stopped: the domain is still the engine's to answer for, but nothing serves it
    await h.service.stop(b.deployment_id);
    expect(await byStable()).toBe('HTTP 404');
    expect(h.service.servesDomain?.(DOMAIN)).toBe(true);

    // removed: forgotten
    await h.service.remove!(b.deployment_id);
    expect(h.service.servesDomain?.(DOMAIN)).toBe(false);
    expect([await byDomain(), await byStable()]).toEqual(['HTTP 404', 'HTTP 404']);

    // and a new deployment takes the domain and the name again
    const c = await h.deploy(v1, 'staging', { domain: DOMAIN });
    expect(c.status).toBe('deployed');
    expect([await byDomain(), await byStable(), h.service.servesDomain?.(DOMAIN)]).toEqual(['1', '1', true]);
  });
});
