/**
 * Limits of a runtime under anonymous load: exec programs beyond the per-instance cap are refused
 * at once with a "busy" tool error (not queued, not hung), and a flood of `initialize` calls that
 * fills the session table leaves a real client able to open a session: the oldest session that
 * never did anything gives way.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXEC_CONCURRENCY_ENV } from '../../src/runtime/server/run-exec.js';
import { DEFAULT_MAX_SESSIONS } from '../../src/runtime/server/sessions.js';
import { connect, FIXTURES, firstText, makeTempDir, serveDefinition } from '../support/runtime.js';
import { eventually } from '../support/wait.js';

const LIMITS = join(FIXTURES, 'limits', 'server.yaml');
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1.0.0' } },
});

const savedCap = process.env[EXEC_CONCURRENCY_ENV];
afterEach(() => {
  if (savedCap === undefined) delete process.env[EXEC_CONCURRENCY_ENV];
  else process.env[EXEC_CONCURRENCY_ENV] = savedCap;
});

/** One anonymous initialize; the session id it opened, or the status when it opened none. */
async function initialize(mcpUrl: string): Promise<string | number> {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: INITIALIZE,
  });
  await res.arrayBuffer();
  return res.headers.get('mcp-session-id') ?? res.status;
}

describe('exec calls beyond the cap', () => {
  it('fail at once with a busy error naming the cap, and run again once a slot is free', async () => {
    process.env[EXEC_CONCURRENCY_ENV] = '2';
    await using served = await serveDefinition(LIMITS);
    await using client = await connect(served.mcpUrl);
    await using folder = await makeTempDir();
    const release = join(folder.path, 'release');
    const hold = () => client.callTool({ name: 'hold', arguments: { file: release } });
    const held = [hold(), hold()];
    await eventually(async () => expect(await readdir(folder.path)).toHaveLength(2));
    // a third call while both programs wait is refused at once
    const busy = await hold();
    expect(busy.isError).toBe(true);
    expect(firstText(busy)).toBe(
      `Tool "hold" failed: busy: 2 exec calls are running, the most this server runs at once (${EXEC_CONCURRENCY_ENV}=2); try again in a moment`,
    );
    await writeFile(release, '');
    expect((await Promise.all(held)).map((answer) => firstText(answer))).toEqual(['released', 'released']);
    expect(firstText(await client.callTool({ name: 'greet', arguments: { name: 'Ada' } }))).toBe('Hello Ada');
  }, 60_000);
});

describe('a flood of anonymous sessions', () => {
  it('leaves a real client able to open a session and call a tool when the table is full', async () => {
    await using served = await serveDefinition(LIMITS);
    const flood = DEFAULT_MAX_SESSIONS + 50;
    const outcomes: Array<string | number> = [];
    for (let sent = 0; sent < flood; sent += 25) {
      outcomes.push(
        ...(await Promise.all(Array.from({ length: Math.min(25, flood - sent) }, () => initialize(served.mcpUrl)))),
      );
    }
    // every initialize opened a session: the table made room by closing unused ones
    expect(outcomes.filter((o) => typeof o !== 'string')).toEqual([]);
    expect(served.runtime.health().sessions).toBeLessThanOrEqual(DEFAULT_MAX_SESSIONS);
    await using client = await connect(served.mcpUrl);
    expect(firstText(await client.callTool({ name: 'greet', arguments: { name: 'Ada' } }))).toBe('Hello Ada');
    // the real client's session is used: more flooding does not evict it
    for (let i = 0; i < 100; i += 1) await initialize(served.mcpUrl);
    expect(firstText(await client.callTool({ name: 'greet', arguments: { name: 'Grace' } }))).toBe('Hello Grace');
  }, 120_000);
});
