/**
 * Stable URLs: `/d/<server>.<environment>/mcp` and `http://<server>.<environment>.localhost:<port>/mcp`
 * always reach the newest deployed deployment of that server in that environment.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, rawRequest, type Harness } from '../../support/deployments.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

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

describe('stable URLs', () => {
  it('follow a server’s deployments in an environment through a redeploy and a rollback, by path and by host', async () => {
    h = await createHarness();
    const v1 = await h.addServer('weather', { version: '1' });
    const v2 = await h.addServer('weather', { version: '2' });
    const byPath = () => version(`${h!.baseUrl}/d/weather.production/mcp`);
    const byHost = () => version(`${h!.baseUrl}/mcp`, 'weather.production.localhost');

    expect(await byPath()).toBe('HTTP 404');
    const a = await h.deploy(v1, 'production');
    expect([await byPath(), await byHost()]).toEqual(['1', '1']);
    // the deployment's own URL is unchanged
    expect(a.url).toBe(`${h.baseUrl}/d/${a.deployment_id}`);

    const b = await h.deploy(v2, 'production');
    expect([await byPath(), await byHost()]).toEqual(['2', '2']);
    expect(await version(`${a.url}/mcp`)).not.toBe('2');

    const accepted = await h.service.rollback(b.deployment_id);
    const rolled = await h.waitUntil(accepted.deployment_id, (x) => x.status !== 'deploying', 'the rollback to settle');
    expect(rolled.status).toBe('deployed');
    expect([await byPath(), await byHost()]).toEqual(['1', '1']);

    // every answer shows them, the same for each deployment of weather in production
    const port = new URL(h.baseUrl).port;
    const stable = [`http://weather.production.localhost:${port}/mcp`, `${h.baseUrl}/d/weather.production/mcp`];
    for (const d of [a, b, rolled, await h.service.status(a.deployment_id)]) expect(d?.stable_urls).toEqual(stable);
    expect(await version(stable[1]!)).toBe('1');

    // another environment, or a server with no deployment there, is not found
    expect(await version(`${h.baseUrl}/d/weather.staging/mcp`)).toBe('HTTP 404');
    expect(await version(`${h.baseUrl}/mcp`, 'nothing.production.localhost')).toBe('HTTP 404');
  });
});
