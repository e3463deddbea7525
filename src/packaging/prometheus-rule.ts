/**
 * A deployment's alert rules (`deploy.alerts`, production's defaults when it gives none) as a
 * PrometheusRule (monitoring.coreos.com/v1), so that on a cluster Prometheus evaluates what the
 * engine would and Alertmanager sends it. The expressions use the engine's metric names
 * (docs/observability.md); a failed rollout is kube-state-metrics' view of the Deployment. Pure.
 */
import { describeRule, effectiveAlertRules, type AlertRule, type AlertRuleInput } from '../definition/alerts-schema.js';

export interface PrometheusRuleObject {
  apiVersion: 'monitoring.coreos.com/v1';
  kind: 'PrometheusRule';
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  spec: { groups: PrometheusRuleGroup[] };
}

export interface PrometheusRuleGroup {
  name: string;
  rules: Array<{
    alert: string;
    expr: string;
    for?: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  }>;
}

export interface PrometheusRuleOptions {
  /** the base name of the export's objects (`<server>-<environment>`), also the Deployment's */
  name: string;
  namespace?: string | undefined;
  server: string;
  environment: string;
  /** the rules given; undefined: the environment's defaults */
  rules: readonly AlertRuleInput[] | undefined;
  labels?: Record<string, string>;
}

const QUANTILES = { p50: '0.5', p95: '0.95', p99: '0.99' } as const;

/** The PrometheusRule of the export, or undefined when no rule is in force. */
export function prometheusRule(options: PrometheusRuleOptions): PrometheusRuleObject | undefined {
  const rules = effectiveAlertRules(options.rules, options.environment);
  if (rules.length === 0) return undefined;
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: options.name,
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      labels: { ...options.labels },
    },
    spec: { groups: [{ name: `mcpctl-${options.name}`, rules: rules.map((rule) => promRule(rule, options)) }] },
  };
}

function promRule(rule: AlertRule, options: PrometheusRuleOptions): PrometheusRuleGroup['rules'][number] {
  return {
    alert: alertName(rule, options),
    expr: expression(rule, options),
    ...(rule.forSeconds === 0 ? {} : { for: rule.forText }),
    labels: { severity: rule.severity, server: options.server, environment: options.environment },
    annotations: {
      summary: `${options.server} (${options.environment}): ${describeRule(rule)}`,
      description: `mcpctl alert rule ${rule.name} of ${options.server} in ${options.environment}`,
    },
  };
}

/** `McpctlErrorRate`-like names, one per rule of the server and environment. */
function alertName(rule: AlertRule, options: PrometheusRuleOptions): string {
  const camel = (text: string) =>
    text
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((part) => part[0]!.toUpperCase() + part.slice(1))
      .join('');
  return `Mcpctl${camel(options.server)}${camel(options.environment)}${camel(rule.name)}`;
}

/** A PromQL string literal. */
function quoted(text: string): string {
  return JSON.stringify(text);
}

function expression(rule: AlertRule, options: PrometheusRuleOptions): string {
  const of = `server=${quoted(options.server)},environment=${quoted(options.environment)}`;
  const window = `[${rule.windowText}]`;
  const requests = `sum(increase(mcp_server_operation_duration_seconds_count{${of}}${window}))`;
  const enough = `and on() ${requests} >= ${rule.minRequests}`;
  switch (rule.type) {
    case 'error_rate':
      return (
        `(sum(rate(mcp_server_operation_duration_seconds_count{${of},error_type!=""}${window}))` +
        ` / sum(rate(mcp_server_operation_duration_seconds_count{${of}}${window}))) * 100 > ${rule.threshold} ${enough}`
      );
    case 'latency':
      return (
        `histogram_quantile(${QUANTILES[rule.percentile ?? 'p95']}, sum by (le) ` +
        `(rate(mcp_server_operation_duration_seconds_bucket{${of}}${window}))) * 1000 > ${rule.threshold} ${enough}`
      );
    case 'no_healthy_instance':
      return (
        `(sum(mcpctl_instances{${of},state="healthy"}) or on() vector(0)) == 0` +
        ` and on() sum(mcpctl_instances{${of}}) > 0`
      );
    case 'restarts':
      return `sum(increase(mcpctl_instance_restarts_total{${of}}${window})) > ${rule.threshold}`;
    case 'failed_rollout': {
      const namespace = options.namespace === undefined ? '' : `,namespace=${quoted(options.namespace)}`;
      return `max(kube_deployment_status_condition{deployment=${quoted(options.name)}${namespace},condition="Progressing",status="false"}) == 1`;
    }
  }
}
