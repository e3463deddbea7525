/**
 * Alerts across an engine restart, in fake time with the real file in a temp folder: a firing
 * alert is read back and neither sent again nor resolved for want of requests the restart forgot;
 * requests enough to judge by resolve it. A pending alert is listed as such, and a damaged file is
 * moved aside instead of stopping the engine.
 */
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlertRuleInput } from '../../../src/definition/alerts-schema.js';
import { createLogger } from '../../../src/engine/engine-log.js';
import { event, record, serviceOf, snapshot } from './alert-harness.js';

const RULES: AlertRuleInput[] = [{ type: 'error_rate', above: 50, window: '1m', for: '10s', min_requests: 2 }];
let home: string;
let dir: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'mcpctl-alerts-'));
  dir = join(home, 'alerts');
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('alerts across a restart', () => {
  it('lists an alert whose condition holds, not yet for long enough, as pending', async () => {
    const t = serviceOf([record(RULES)], () => [snapshot()]);
    for (let i = 0; i < 4; i++) t.service.observer.request(event(t.now(), { status: 502 }));
    await t.service.evaluate();
    const list = t.service.list();
    expect(list.firing).toEqual([]);
    expect(list.pending.map((a) => [a.rule, a.state])).toEqual([['error_rate', 'pending']]);
    expect(t.sent).toEqual([]);
  });

  it('goes on firing after a restart without a second message, and resolves once requests say so', async () => {
    const before = serviceOf([record(RULES)], () => [snapshot()], 3_600_000, { dir });
    for (let i = 0; i < 4; i++) before.service.observer.request(event(before.now(), { status: 502 }));
    await before.service.evaluate();
    before.advance(10_000);
    await before.service.evaluate();
    expect(before.sent.map((m) => m.status)).toEqual(['firing']);
    await before.service.close();
    expect((await stat(join(dir, 'state.json'))).mode & 0o777).toBe(0o600);

    const after = serviceOf([record(RULES)], () => [snapshot()], 3_600_000, { dir, start: before.now() + 5_000 });
    await after.service.restore();
    expect(after.service.list().firing.map((a) => a.rule)).toEqual(['error_rate']);
    // no requests since the restart: too few to judge, so it neither resolves nor fires again
    await after.service.evaluate();
    after.advance(5_000);
    await after.service.evaluate();
    expect(after.sent).toEqual([]);
    expect(after.service.list().firing.map((a) => a.rule)).toEqual(['error_rate']);
    for (let i = 0; i < 4; i++) after.service.observer.request(event(after.now()));
    await after.service.evaluate();
    expect(after.sent).toEqual([{ status: 'resolved', alerts: [{ rule: 'error_rate', state: 'resolved' }] }]);
    await after.service.close();

    // the resolved one is still listed after a third start
    const third = serviceOf([record(RULES)], () => [snapshot()], 3_600_000, { dir, start: after.now() });
    await third.service.restore();
    expect(third.service.list().recent.map((a) => [a.rule, a.state])).toEqual([['error_rate', 'resolved']]);
    expect(third.service.list().firing).toEqual([]);
  });

  it('resolves a restored alert for want of requests once its whole window has passed since the start', async () => {
    const before = serviceOf([record(RULES)], () => [snapshot()], 3_600_000, { dir });
    for (let i = 0; i < 4; i++) before.service.observer.request(event(before.now(), { status: 502 }));
    await before.service.evaluate();
    before.advance(10_000);
    await before.service.evaluate();
    await before.service.close();
    const after = serviceOf([record(RULES)], () => [snapshot()], 3_600_000, { dir, start: before.now() });
    await after.service.restore();
    after.advance(60_000);
    await after.service.evaluate();
    expect(after.sent.map((m) => m.status)).toEqual(['resolved']);
  });

  it('moves a damaged file aside and starts with no alerts', async () => {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'state.json'), '{"schema_version": 1, "active": [{"rule": 3}]');
    const lines: string[] = [];
    const t = serviceOf([record(RULES)], () => [snapshot()], 3_600_000, {
      dir,
      logger: createLogger({ write: (line) => lines.push(line) }),
    });
    await t.service.restore();
    expect(t.service.list()).toMatchObject({ firing: [], pending: [], recent: [] });
    expect(await readdir(join(home, 'unreadable'))).toEqual([expect.stringMatching(/^alerts-\d+\.json$/)]);
    expect(lines.join('\n')).toContain('the alerts file could not be read');
  });
});
