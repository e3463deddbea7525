/**
 * `deploy.alerts` in a definition: each rule type, durations, per-environment lists, turning them
 * off, production's defaults, and mistakes reported at their file:line:column with the field named;
 * and what `deploy` sends of them (configFromDefinition).
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ALERT_RULES,
  durationSeconds,
  effectiveAlertRules,
  rulesOfConfig,
} from '../../src/definition/alerts-schema.js';
import { parseDefinition } from '../../src/definition/load.js';
import { UserError } from '../../src/shared/errors.js';
import { configFromDefinition } from '../../src/cli/steps/deploy-config.js';

const HEAD = `name: demo
template: basic
tools:
  - name: greet
    description: Greets
    inputSchema: { type: object }
deploy:
`;

async function load(deploy: string) {
  return parseDefinition(HEAD + deploy, { file: '/defs/server.yaml', shown: 'server.yaml' });
}

async function problemsOf(deploy: string): Promise<Array<{ where: string; path?: string; message: string }>> {
  try {
    await load(deploy);
    return [];
  } catch (error) {
    if (error instanceof UserError)
      return error.problems.map(({ where, path, message }) => ({
        where: where ?? '',
        ...(path === undefined ? {} : { path }),
        message,
      }));
    throw error;
  }
}

describe('deploy.alerts', () => {
  it('takes every rule type, and a list per environment', async () => {
    const loaded = await load(`  alerts:
    - { type: error_rate, above: 50, window: 1m, for: 30s, min_requests: 20 }
    - { type: latency, percentile: p99, above_ms: 800, window: 10m, severity: warning }
    - { type: no_healthy_instance, for: 2m }
    - { type: restarts, above: 3, window: 1h, name: flapping }
    - { type: failed_rollout }
  environments:
    staging:
      alerts: { enabled: false }
`);
    const deploy = loaded.definition.deploy!;
    const production = await configFromDefinition(deploy, 'production', {});
    expect(production.alerts).toHaveLength(5);
    expect(
      effectiveAlertRules(production.alerts, 'production').map((r) => [r.name, r.forSeconds, r.windowSeconds]),
    ).toEqual([
      ['error_rate', 30, 60],
      ['latency', 300, 600],
      ['no_healthy_instance', 120, 0],
      ['flapping', 0, 3600],
      ['failed_rollout', 0, 3600],
    ]);
    expect((await configFromDefinition(deploy, 'staging', {})).alerts).toEqual([]);
  });

  it('leaves production its defaults when nothing is said, and none elsewhere', async () => {
    const loaded = await load('  scaling: { min_instances: 1 }\n');
    const config = await configFromDefinition(loaded.definition.deploy, 'production', {});
    expect(config.alerts).toBeUndefined();
    expect(effectiveAlertRules(undefined, 'production').map((r) => r.type)).toEqual(
      DEFAULT_ALERT_RULES.map((r) => r.type),
    );
    expect(effectiveAlertRules(undefined, 'staging')).toEqual([]);
    expect(rulesOfConfig([])).toEqual([]);
    expect(rulesOfConfig({ enabled: false, rules: [{ type: 'failed_rollout' }] })).toEqual([]);
    expect(rulesOfConfig({ enabled: true })).toBeUndefined();
  });

  it.each([
    [
      'a duration without a unit',
      '  alerts:\n    - { type: error_rate, above: 5, window: 60 }\n',
      'server.yaml:9:45',
      'deploy.alerts[0].window',
    ],
    [
      'a duration past a day',
      '  alerts:\n    - { type: restarts, above: 1, window: 48h }\n',
      'server.yaml:9:43',
      'deploy.alerts[0].window',
    ],
    ['an unknown type', '  alerts:\n    - { type: cpu, above: 5 }\n', 'server.yaml:9:15', 'deploy.alerts[0].type'],
    [
      'a percent over 100',
      '  alerts:\n    - { type: error_rate, above: 150 }\n',
      'server.yaml:9:34',
      'deploy.alerts[0].above',
    ],
    [
      'an unknown field',
      '  alerts:\n    - { type: no_healthy_instance, above: 1 }\n',
      'server.yaml:9:36',
      'deploy.alerts[0].above',
    ],
  ])('reports %s at its place', async (_, deploy, where, path) => {
    const problems = await problemsOf(deploy);
    expect(problems.map((p) => [p.where, p.path])).toEqual([[where, path]]);
  });

  it('refuses two rules of one name', async () => {
    const problems = await problemsOf(
      '  alerts:\n    - { type: restarts, above: 1 }\n    - { type: restarts, above: 5 }\n',
    );
    expect(problems).toMatchObject([
      { path: 'deploy.alerts[1].name', message: expect.stringMatching(/two rules are named restarts/) },
    ]);
  });

  it('reads durations', () => {
    expect(['0s', '30s', '5m', '2h'].map(durationSeconds)).toEqual([0, 30, 300, 7200]);
  });
});
