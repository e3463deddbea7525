/**
 * The alert rules as a PrometheusRule, checked by Prometheus's own tools (Debian's `prometheus`
 * package, which CI installs): `promtool check rules` passes on its groups, and `promtool test rules`
 * shows the error-rate and no-healthy-instance alerts firing on series named as the engine exposes them.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { prometheusRule } from '../../src/packaging/prometheus-rule.js';
import { tempDir, type TempDir } from '../support/temp.js';

let temp: TempDir | undefined;

afterEach(async () => {
  await temp?.cleanup();
  temp = undefined;
});

function promtool(args: string[], cwd: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the PrometheusRule', () => {
  it('is a PrometheusRule of production’s default rules, and none for staging without rules', () => {
    const rule = prometheusRule({
      name: 'weather-production',
      namespace: 'mcp',
      server: 'weather',
      environment: 'production',
      rules: undefined,
    });
    expect(rule).toMatchObject({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'weather-production', namespace: 'mcp' },
    });
    expect(rule!.spec.groups[0]!.rules.map((r) => [r.alert, r.for])).toEqual([
      ['McpctlWeatherProductionErrorRate', '2m'],
      ['McpctlWeatherProductionLatency', '5m'],
      ['McpctlWeatherProductionNoHealthyInstance', '1m'],
      ['McpctlWeatherProductionRestarts', undefined],
      ['McpctlWeatherProductionFailedRollout', undefined],
    ]);
    expect(rule!.spec.groups[0]!.rules[4]!.expr).toBe(
      'max(kube_deployment_status_condition{deployment="weather-production",namespace="mcp",condition="Progressing",status="false"}) == 1',
    );
    expect(
      prometheusRule({ name: 'weather-staging', server: 'weather', environment: 'staging', rules: undefined }),
    ).toBeUndefined();
    expect(
      prometheusRule({ name: 'weather-production', server: 'weather', environment: 'production', rules: [] }),
    ).toBeUndefined();
  });

  it('passes promtool check rules, and its alerts fire on the engine’s series in promtool test rules', async () => {
    expect(spawnSync('promtool', ['--version']).status, 'promtool is installed (apt-get install prometheus)').toBe(0);
    temp = await tempDir('mcpctl-promrule-');
    const rule = prometheusRule({
      name: 'weather-production',
      server: 'weather',
      environment: 'production',
      rules: [
        { type: 'error_rate', above: 50, window: '5m', for: '30s' },
        { type: 'latency', percentile: 'p99', above_ms: 500, window: '5m' },
        { type: 'no_healthy_instance', for: '1m' },
        { type: 'restarts', above: 2, window: '15m', severity: 'warning' },
        { type: 'failed_rollout' },
      ],
    })!;
    await writeFile(join(temp.dir, 'rules.yaml'), stringify(rule.spec));
    const checked = promtool(['check', 'rules', 'rules.yaml'], temp.dir);
    expect(checked.output).toContain('SUCCESS: 5 rules found');
    expect(checked.status, checked.output).toBe(0);

    const [errorRate, , noHealthy] = rule.spec.groups[0]!.rules;
    const of = 'server="weather",environment="production",deployment="deploy_aaaaaaaaaa"';
    await writeFile(
      join(temp.dir, 'tests.yaml'),
      stringify({
        rule_files: ['rules.yaml'],
        evaluation_interval: '15s',
        tests: [
          {
            interval: '15s',
            input_series: [
              // 40 calls a minute, 30 of them tool errors: 75% fail
              { series: `mcp_server_operation_duration_seconds_count{${of},error_type=""}`, values: '0+2.5x40' },
              {
                series: `mcp_server_operation_duration_seconds_count{${of},error_type="tool_error"}`,
                values: '0+7.5x40',
              },
              { series: `mcpctl_instances{${of},state="healthy"}`, values: '1x10 0x30' },
              { series: `mcpctl_instances{${of},state="unhealthy"}`, values: '0x10 1x30' },
            ],
            alert_rule_test: [
              {
                eval_time: '1m',
                alertname: errorRate!.alert,
                exp_alerts: [{ exp_labels: errorRate!.labels, exp_annotations: errorRate!.annotations }],
              },
              { eval_time: '2m', alertname: noHealthy!.alert, exp_alerts: [] },
              {
                eval_time: '5m',
                alertname: noHealthy!.alert,
                exp_alerts: [{ exp_labels: noHealthy!.labels, exp_annotations: noHealthy!.annotations }],
              },
            ],
          },
        ],
      }),
    );
    const tested = promtool(['test', 'rules', 'tests.yaml'], temp.dir);
    expect(tested.status, tested.output).toBe(0);
    expect(tested.output).toContain('SUCCESS');
  });
});
