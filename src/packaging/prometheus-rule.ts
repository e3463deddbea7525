/**
 * What the Prometheus Operator needs of an exported server: a PodMonitor, so Prometheus scrapes each
 * pod's own /metrics (the runtime's `--metrics-port`: no engine stands in front of it on a
 * cluster), and its alert rules (`deploy.alerts`, production's defaults when it gives none) as a
 * PrometheusRule, so that Prometheus evaluates what the engine would and Alertmanager sends it. The
 * request rules read the pods' MCP operation histogram (the engine's metric names and labels,
 * docs/observability.md); the instance rules read kube-state-metrics' view of the Deployment and
 * its pods. Pure.
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

/** Where each pod answers GET /metrics (the container port named `metrics`). */
export const METRICS_PORT = 9464;

export interface PodMonitorObject {
  apiVersion: 'monitoring.coreos.com/v1';
  kind: 'PodMonitor';
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  spec: {
    selector: { matchLabels: Record<string, string> };
    podMetricsEndpoints: Array<{ port: string; path: string; interval: string }>;
  };
}

/** The PodMonitor of the export: every pod of the Deployment, scraped on its `metrics` port. */
export function podMonitor(options: {
  name: string;
  namespace?: string | undefined;
  selector: Record<string, string>;
  labels?: Record<string, string>;
}): PodMonitorObject {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PodMonitor',
    metadata: {
      name: options.name,
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      labels: { ...options.labels },
    },
    spec: {
      selector: { matchLabels: { ...options.selector } },
      podMetricsEndpoints: [{ port: 'metrics', path: '/metrics', interval: '30s' }],
    },
  };
}

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
  // kube-state-metrics' series of the Deployment (in its namespace, when the export names one)
  const namespace = options.namespace === undefined ? '' : `,namespace=${quoted(options.namespace)}`;
  const deployment = `deployment=${quoted(options.name)}${namespace}`;
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
        `(max(kube_deployment_status_replicas_available{${deployment}}) or on() vector(0)) == 0` +
        ` and on() max(kube_deployment_spec_replicas{${deployment}}) > 0`
      );
    case 'restarts':
      // the Deployment's pods are named <name>-<replica set hash>-<pod hash>
      return (
        `sum(increase(kube_pod_container_status_restarts_total{pod=~${quoted(`${options.name}-[a-z0-9]+-[a-z0-9]+`)}` +
        `${namespace},container="server"}${window})) > ${rule.threshold}`
      );
    case 'failed_rollout':
      return `max(kube_deployment_status_condition{${deployment},condition="Progressing",status="false"}) == 1`;
  }
}
