/**
 * The alert rules as a PrometheusRule, checked by Prometheus's own tools (Debian's `prometheus`
 * package, which CI installs): `promtool check rules` passes on its groups, and `promtool test rules`
 * shows the error-rate alert firing on the histogram as each pod exposes it, and the
 * no-healthy-instance and restarts alerts on kube-state-metrics' series of the Deployment (not on
 * those of another Deployment's pods).
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

  it('passes promtool check rules, and its alerts fire on the pods’ and kube-state-metrics’ series in promtool test rules', async () => {
    expect(spawnSync('promtool', ['--version']).status, 'promtool is installed (apt-get install prometheus)').toBe(0);
    temp = await tempDir('mcpctl-promrule-');
    const rule = prometheusRule({
      name: 'weather-production',
      namespace: 'mcp',
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

    const [errorRate, , noHealthy, restarts] = rule.spec.groups[0]!.rules;
    // as a pod's own /metrics labels its histogram (test/runtime/metrics.integration.test.ts)
    const of = 'server="weather",environment="production",mcp_method_name="tools/call",gen_ai_tool_name="forecast"';
    const deployment = 'namespace="mcp",deployment="weather-production"';
    const pod = (name: string) =>
      `kube_pod_container_status_restarts_total{namespace="mcp",pod="${name}",container="server"}`;
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
              // kube-state-metrics: 2 wanted, none available after 2.5 minutes
              { series: `kube_deployment_spec_replicas{${deployment}}`, values: '2x40' },
              { series: `kube_deployment_status_replicas_available{${deployment}}`, values: '2x10 0x30' },
              // one of its pods restarts once, then twice more after 5.5 minutes; a pod of another
              // Deployment (weather-production-canary) restarts far more, and is not counted
              { series: pod('weather-production-5d8f9c7b4-x2k9p'), values: '0x10 1x10 3x18' },
              { series: pod('weather-production-canary-7c9d8b6f5-q4w8r'), values: '0x10 5 10 15x28' },
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
              { eval_time: '4m', alertname: restarts!.alert, exp_alerts: [] },
              {
                eval_time: '6m',
                alertname: restarts!.alert,
                exp_alerts: [{ exp_labels: restarts!.labels, exp_annotations: restarts!.annotations }],
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
