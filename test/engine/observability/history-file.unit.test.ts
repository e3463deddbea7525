/**
 * The history on disk: written on flush and on close (file 0600, folder 0700), read back by the
 * next History on the same folder, a damaged file moved aside without stopping the start, an
 * emptied history removing its file, and the size of the largest history a deployment can have.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/engine/engine-log.js';
import type { RequestEvent } from '../../../src/engine/observability/events.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../../src/engine/observability/history-buckets.js';
import { History } from '../../../src/engine/observability/history.js';
import { FileStore } from '../../../src/engine/store/file-store.js';
import { MAX_CLIENTS, MAX_TOOLS, MAX_USERS } from '../../../src/engine/observability/usage-tally.js';
import { tempDir, type TempDir } from '../../support/temp.js';

const T0 = Date.parse('2026-03-10T12:00:00Z');
let temp: TempDir;
let dir: string;
let now = T0;
const clock = () => now;
const open: History[] = [];

async function openHistory(): Promise<History> {
  const history = await History.open({ dir, clock, logger: silentLogger, flushMs: 3_600_000 });
  open.push(history);
  return history;
}

function event(extra: Partial<RequestEvent> = {}): RequestEvent {
  return {
    deploymentId: 'deploy_abc',
    server: 'weather',
    environment: 'production',
    at: now,
    latencyMs: 12,
    status: 200,
    method: 'tools/call',
    tool: 'echo',
    toolError: false,
    bytesIn: 80,
    client: { name: 'claude-code', version: '2.0.1' },
    ...extra,
  };
}

beforeEach(async () => {
  temp = await tempDir();
  dir = join(temp.dir, 'store', 'history');
  now = T0;
});
afterEach(async () => {
  for (const history of open.splice(0)) await history.close();
  await temp.cleanup();
});

describe('the history on disk', () => {
  it('forgets a removed deployment: its file goes, and a later flush does not bring it back', async () => {
    const history = await openHistory();
    history.request(event());
    await history.flush();
    expect(existsSync(join(dir, 'deploy_abc.json'))).toBe(true);
    history.request(event());
    await history.forget('deploy_abc');
    await history.flush();
    expect(existsSync(join(dir, 'deploy_abc.json'))).toBe(false);
    expect(history.metrics('deploy_abc', HOUR_MS).totals).toMatchObject({ requests: 0 });
  });

  it('survives a close and an open: the metrics and the usage are as they were', async () => {
    const first = await openHistory();
    first.request(event());
    first.request(event({ status: 200, toolError: true, tool: 'fail', client: { name: 'cursor' } }));
    now += 2 * MINUTE_MS;
    first.request(event({ method: 'initialize', tool: undefined, status: 503 }));
    const before = { metrics: first.metrics('deploy_abc', HOUR_MS), usage: first.usage('deploy_abc', DAY_MS) };
    await first.close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'deploy_abc.json')).mode & 0o777).toBe(0o600);

    const second = await openHistory();
    expect(second.metrics('deploy_abc', HOUR_MS)).toEqual(before.metrics);
    expect(second.usage('deploy_abc', DAY_MS)).toEqual(before.usage);
    expect(before.metrics.totals).toMatchObject({
      requests: 3,
      errors: 2,
      errors_by_type: { tool_error: 1, http_5xx: 1 },
    });
    expect(before.usage.clients.map((c) => [c.name, c.requests])).toEqual([
      ['claude-code', 2],
      ['cursor', 1],
    ]);
  });

  it("the store's own clean-ups (crash leftovers, expired entries, unreadable records) leave it alone", async () => {
    const history = await openHistory();
    history.request(event());
    await history.close();
    const written = await readFile(join(dir, 'deploy_abc.json'), 'utf8');
    const store = await FileStore.open({ dir: join(temp.dir, 'store'), clock: () => now + 40 * DAY_MS });
    await store.purgeExpired();
    await store.close();
    expect(await readFile(join(dir, 'deploy_abc.json'), 'utf8')).toBe(written);
  });

  it('writes on flush only what changed, and a request after close is not counted', async () => {
    const history = await openHistory();
    await history.flush();
    expect(existsSync(join(dir, 'deploy_abc.json'))).toBe(false);
    history.request(event());
    await history.flush();
    const written = await readFile(join(dir, 'deploy_abc.json'), 'utf8');
    await history.flush();
    expect(await readFile(join(dir, 'deploy_abc.json'), 'utf8')).toBe(written);
    await history.close();
    history.request(event());
    expect(history.metrics('deploy_abc', HOUR_MS).totals.requests).toBe(1);
  });

  it('a damaged file is moved aside and the rest is read', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'deploy_bad.json'), '{"schema_version":1,"minutes":[{"t":"x"}]');
    const first = await openHistory();
    first.request(event());
    await first.close();
    await writeFile(join(dir, 'deploy_bad.json'), '{ not json');
    const second = await openHistory();
    expect(second.metrics('deploy_abc', HOUR_MS).totals.requests).toBe(1);
    expect(readdirSync(join(temp.dir, 'store', 'unreadable')).some((name) => name.endsWith('deploy_bad.json'))).toBe(
      true,
    );
  });

  it('what is past its retention is dropped, and an emptied history removes its file', async () => {
    const history = await openHistory();
    history.request(event());
    await history.flush();
    now += 31 * DAY_MS;
    await history.flush();
    expect(existsSync(join(dir, 'deploy_abc.json'))).toBe(false);
    expect(history.usage('deploy_abc', 30 * DAY_MS).totals.requests).toBe(0);
  });

  it('the largest history of one deployment: every bucket and every table full', async () => {
    const history = await openHistory();
    const start = T0;
    // a request every minute for 30 days, with the most tools, clients and users a day keeps
    for (let t = start; t < start + 30 * DAY_MS; t += MINUTE_MS) {
      now = t;
      const i = (t - start) / MINUTE_MS;
      history.request(
        event({
          at: t,
          latencyMs: i % 2000,
          tool: `tool-${i % MAX_TOOLS}`,
          client: { name: `client-${i % MAX_CLIENTS}`, version: '1.0.0' },
          user: `user-${i % MAX_USERS}@example.com`,
          status: i % 7 === 0 ? 500 : 200,
        }),
      );
      if (t % DAY_MS === 0) await history.flush();
    }
    await history.flush();
    const bytes = statSync(join(dir, 'deploy_abc.json')).size;
    // docs/observability.md (History and usage: Size) gives this figure
    console.info(`largest history file: ${bytes} bytes`);
    expect(bytes).toBeLessThan(2_000_000);
    const week = history.metrics('deploy_abc', 7 * DAY_MS);
    expect(week.totals.requests).toBeGreaterThan(7 * 1439);
  }, 60_000);
});
