/**
 * The alert evaluation in fake time: the conditions of each rule type over the windows, the move
 * between pending, firing and resolved after `for`, grouping per deployment, the repeat interval,
 * failed rollouts from the store, and production's defaults. The messages are captured rather
 * than sent (deliveries over HTTP are integration-tested).
 */
import { describe, expect, it } from 'vitest';
import { effectiveAlertRules, type AlertRuleInput } from '../../../src/definition/alerts-schema.js';
import { evaluateCondition, stepAlert, type Condition } from '../../../src/engine/alerts/evaluate.js';
import { RequestWindows, RestartWindows } from '../../../src/engine/alerts/windows.js';
import type { DeploymentSnapshot } from '../../../src/engine/observability/events.js';
import { event, ID, record, serviceOf, snapshot } from './alert-harness.js';

describe('conditions', () => {
  const rules = effectiveAlertRules(
    [
      { type: 'error_rate', above: 50, window: '1m', min_requests: 4 },
      { type: 'latency', percentile: 'p95', above_ms: 100, window: '1m', min_requests: 4 },
      { type: 'no_healthy_instance' },
      { type: 'restarts', above: 1, window: '10m' },
    ],
    'production',
  );
  const windows = new RequestWindows();
  const restarts = new RestartWindows();
  const now = 100_000;
  const inputs = (s: DeploymentSnapshot) => ({
    snapshot: s,
    now,
    requests: (seconds: number) => windows.stats(ID, now - seconds * 1000),
    restarts,
  });
  const [errorRate, latency, noHealthy, restartRule] = rules;

  it('judges no error rate or latency below the minimum of requests', () => {
    windows.request(event(now - 1000, { status: 500 }));
    expect(evaluateCondition(errorRate!, inputs(snapshot()))).toMatchObject({ holds: false, value: null });
    expect(evaluateCondition(latency!, inputs(snapshot()))).toMatchObject({ holds: false, value: null });
  });

  it('counts every error type in the window, not before it', () => {
    windows.request(event(now - 120_000, { status: 500 }));
    windows.request(event(now - 900, { status: 200, toolError: true }));
    windows.request(event(now - 800, { status: 499 }));
    windows.request(event(now - 700));
    const found = evaluateCondition(errorRate!, inputs(snapshot()));
    expect(found).toMatchObject({ holds: true, value: 75 });
    expect(found.summary).toBe(
      'weather (deploy_aaaaaaaaaa, production): 75% of 4 requests failed in the last 1m (alert above 50%)',
    );
  });

  it('takes the percentile of the window’s latencies', () => {
    for (let i = 0; i < 16; i++) windows.request(event(now - 500, { latencyMs: i < 15 ? 20 : 900 }));
    // 20 requests in the window: the 19th of the sorted latencies is p95
    expect(evaluateCondition(latency!, inputs(snapshot()))).toMatchObject({ holds: false, value: 20 });
    windows.request(event(now - 400, { latencyMs: 900 }));
    expect(evaluateCondition(latency!, inputs(snapshot()))).toMatchObject({ holds: true, value: 900 });
  });

  it('sees no healthy instance only where instances are wanted and the deployment is deployed', () => {
    const none = [{ id: 'i1', state: 'unhealthy', restarts: 0 }];
    expect(evaluateCondition(noHealthy!, inputs(snapshot({ instances: none }))).holds).toBe(true);
    expect(evaluateCondition(noHealthy!, inputs(snapshot({ instances: [], desired: 0 }))).holds).toBe(false);
    expect(evaluateCondition(noHealthy!, inputs(snapshot({ instances: none, status: 'deploying' }))).holds).toBe(false);
    expect(evaluateCondition(noHealthy!, inputs(snapshot())).holds).toBe(false);
  });

  it('counts restarts between snapshots, new instances from their first sight', () => {
    restarts.observe(snapshot({ instances: [{ id: 'i1', state: 'healthy', restarts: 3 }] }), now - 700_000);
    restarts.observe(snapshot({ instances: [{ id: 'i1', state: 'healthy', restarts: 4 }] }), now - 500_000);
    restarts.observe(
      snapshot({
        instances: [
          { id: 'i1', state: 'restarting', restarts: 5 },
          { id: 'i2', state: 'healthy', restarts: 1 },
        ],
      }),
      now - 1000,
    );
    // 1 restart 500 s ago, 2 at the last snapshot (i1 once more, i2 once): the first sighting counts nothing
    expect(evaluateCondition(restartRule!, inputs(snapshot()))).toMatchObject({ holds: true, value: 3 });
  });
});

describe('pending, firing, resolved', () => {
  const [rule] = effectiveAlertRules([{ type: 'error_rate', above: 50, for: '30s' }], 'production');
  const base = { deploymentId: ID, server: 'weather', environment: 'production', rule: rule! };
  const holds: Condition = { holds: true, value: 80, summary: 'bad' };
  const fine: Condition = { holds: false, value: 0, summary: 'fine' };

  it('fires once the condition has held for `for`, and resolves when it no longer holds', () => {
    let step = stepAlert(undefined, holds, 0, base);
    expect(step).toMatchObject({ alert: { state: 'pending', since: 0 }, transition: undefined });
    step = stepAlert(step.alert, holds, 29_999, base);
    expect(step).toMatchObject({ alert: { state: 'pending' }, transition: undefined });
    step = stepAlert(step.alert, holds, 30_000, base);
    expect(step).toMatchObject({ alert: { state: 'firing', since: 0, firedAt: 30_000 }, transition: 'fired' });
    step = stepAlert(step.alert, holds, 35_000, base);
    expect(step.transition).toBeUndefined();
    step = stepAlert(step.alert, fine, 40_000, base);
    expect(step).toMatchObject({
      alert: { state: 'resolved', resolvedAt: 40_000, summary: 'fine' },
      transition: 'resolved',
    });
  });

  it('forgets a pending alert whose condition stopped holding before `for`', () => {
    const pending = stepAlert(undefined, holds, 0, base).alert;
    expect(stepAlert(pending, fine, 10_000, base)).toEqual({ alert: undefined, transition: undefined });
  });
});

describe('the alert service', () => {
  it('groups the alerts of a deployment that fire together, repeats them, and resolves them', async () => {
    let current = [snapshot({ instances: [{ id: 'i1', state: 'unhealthy', restarts: 0 }] })];
    const rules: AlertRuleInput[] = [
      { type: 'error_rate', above: 50, window: '2m', for: '10s', min_requests: 2 },
      { type: 'no_healthy_instance', for: '10s' },
    ];
    const t = serviceOf([record(rules)], () => current, 60_000);
    for (let i = 0; i < 4; i++) t.service.observer.request(event(t.now(), { status: 502 }));
    await t.service.evaluate();
    expect(t.sent).toEqual([]);
    t.advance(10_000);
    await t.service.evaluate();
    expect(t.sent).toEqual([
      {
        status: 'firing',
        alerts: [
          { rule: 'error_rate', state: 'firing' },
          { rule: 'no_healthy_instance', state: 'firing' },
        ],
      },
    ]);
    expect(t.service.list().firing.map((a) => a.rule)).toEqual(['error_rate', 'no_healthy_instance']);
    // still firing: nothing more until the repeat interval
    t.advance(30_000);
    await t.service.evaluate();
    expect(t.sent).toHaveLength(1);
    t.advance(30_000);
    current = [snapshot()];
    await t.service.evaluate();
    // the instance is healthy again; the errors are still in the window and repeat
    expect(t.sent.slice(1)).toEqual([
      {
        status: 'firing',
        alerts: [
          { rule: 'no_healthy_instance', state: 'resolved' },
          { rule: 'error_rate', state: 'firing' },
        ],
      },
    ]);
    t.advance(61_000);
    await t.service.evaluate();
    expect(t.sent.at(-1)).toEqual({ status: 'resolved', alerts: [{ rule: 'error_rate', state: 'resolved' }] });
    const list = t.service.list(ID);
    expect(list.firing).toEqual([]);
    expect(list.recent.map((a) => [a.rule, a.state])).toEqual([
      ['error_rate', 'resolved'],
      ['no_healthy_instance', 'resolved'],
    ]);
    expect(t.service.list('deploy_bbbbbbbbbb').recent).toEqual([]);
  });

  it('resolves the alerts of a deployment that stopped', async () => {
    let current = [snapshot({ instances: [] })];
    const t = serviceOf([record([{ type: 'no_healthy_instance', for: '0s' }])], () => current);
    await t.service.evaluate();
    expect(t.sent.map((m) => m.status)).toEqual(['firing']);
    current = [];
    await t.service.evaluate();
    expect(t.sent.at(-1)).toEqual({ status: 'resolved', alerts: [{ rule: 'no_healthy_instance', state: 'resolved' }] });
  });

  it('gives production the default rules and other environments none', async () => {
    const broken = [
      snapshot({ instances: [] }),
      snapshot({ deploymentId: 'deploy_bbbbbbbbbb', environment: 'staging', instances: [] }),
    ];
    const t = serviceOf(
      [record(undefined), record(undefined, { deployment_id: 'deploy_bbbbbbbbbb', environment: 'staging' })],
      () => broken,
    );
    await t.service.evaluate();
    t.advance(60_000);
    await t.service.evaluate();
    expect(t.sent).toEqual([{ status: 'firing', alerts: [{ rule: 'no_healthy_instance', state: 'firing' }] }]);
    // `alerts: []` turns them off
    const off = serviceOf([record([])], () => [snapshot({ instances: [] })]);
    await off.service.evaluate();
    off.advance(60_000);
    await off.service.evaluate();
    expect(off.sent).toEqual([]);
  });

  it('fires a failed rollout that ended after the start, once, and resolves it after its window', async () => {
    const failed = record(undefined, {
      status: 'failed',
      updated_at: new Date(2_000_000).toISOString(),
      reason: 'unhealthy',
    });
    const t = serviceOf([failed], () => []);
    t.advance(1_000_000);
    await t.service.evaluate();
    await t.service.evaluate();
    expect(t.sent).toEqual([{ status: 'firing', alerts: [{ rule: 'failed_rollout', state: 'firing' }] }]);
    expect(t.service.list().firing[0]?.summary).toBe(
      'the deploy of weather to production (deploy_aaaaaaaaaa) failed: unhealthy',
    );
    t.advance(3_600_000);
    await t.service.evaluate();
    expect(t.sent.at(-1)).toEqual({ status: 'resolved', alerts: [{ rule: 'failed_rollout', state: 'resolved' }] });
  });

  it('does not fire for a deploy that failed before the engine started', async () => {
    const old = record(undefined, { status: 'failed', updated_at: new Date(10).toISOString() });
    const t = serviceOf([old], () => []);
    await t.service.evaluate();
    expect(t.sent).toEqual([]);
  });
});
