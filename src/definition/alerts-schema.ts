/**
 * The alert rules of a deployment (`deploy.alerts`): error rate, latency percentile, no healthy
 * instance, restarts and a failed rollout, each with its window and how long its condition must
 * hold (`for`). The same rules go in the deploy request, are evaluated by the engine
 * (src/engine/alerts/) and are exported as a PrometheusRule. Production gets DEFAULT_ALERT_RULES
 * when the definition says nothing. Pure, and light: the service commands load it with the contract.
 */
import { z } from 'zod';

/** A duration in Prometheus's form: a whole number of seconds, minutes or hours (`30s`, `5m`, `1h`). */
export const DURATION_PATTERN = /^[1-9]\d{0,5}(s|m|h)$/;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** The seconds of a duration such as `5m`; 0 for `0s`. */
export function durationSeconds(duration: string): number {
  if (duration === '0s') return 0;
  const unit = duration.at(-1)!;
  return Number(duration.slice(0, -1)) * (UNIT_SECONDS[unit] ?? Number.NaN);
}

const MAX_WINDOW_SECONDS = 24 * 3600;

const duration = (what: string) =>
  z
    .string()
    .refine((value) => value === '0s' || DURATION_PATTERN.test(value), 'must be a duration such as 30s, 5m or 1h')
    .refine(
      (value) => !DURATION_PATTERN.test(value) || durationSeconds(value) <= MAX_WINDOW_SECONDS,
      'must be at most 24h',
    )
    .describe(what);

export const ALERT_SEVERITIES = ['critical', 'warning', 'info'] as const;
export type AlertSeverity = (typeof ALERT_SEVERITIES)[number];
export const LATENCY_PERCENTILES = ['p50', 'p95', 'p99'] as const;
export const ALERT_KINDS = ['error_rate', 'latency', 'no_healthy_instance', 'restarts', 'failed_rollout'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

function buildRule() {
  const common = {
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,62}$/, 'must be lower-case letters, digits, - and _, starting with a letter')
      .optional()
      .describe('the alert’s name; default: its type'),
    severity: z.enum(ALERT_SEVERITIES).optional().describe('default: critical'),
    for: duration('how long the condition must hold before the alert fires; default per type').optional(),
  };
  const window = duration('the window the condition looks at').optional();
  const minRequests = z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe('requests in the window before the rule counts; default 10');
  return z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('error_rate'),
      above: z.number().min(0).max(100).describe('percent of requests that failed (any error.type)'),
      window: window.describe('default 5m'),
      min_requests: minRequests,
      ...common,
    }),
    z.strictObject({
      type: z.literal('latency'),
      percentile: z.enum(LATENCY_PERCENTILES).optional().describe('default p95'),
      above_ms: z.number().positive().max(3_600_000),
      window: window.describe('default 5m'),
      min_requests: minRequests,
      ...common,
    }),
    z.strictObject({ type: z.literal('no_healthy_instance'), ...common }),
    z.strictObject({
      type: z.literal('restarts'),
      above: z.number().int().min(0).max(1_000_000).describe('restarts of its instances within the window'),
      window: window.describe('default 15m'),
      ...common,
    }),
    z.strictObject({
      type: z.literal('failed_rollout'),
      window: window.describe('how long the alert stays firing unless a later deploy succeeds; default 1h'),
      ...common,
    }),
  ]);
}

let ruleSchema: ReturnType<typeof buildRule> | undefined;
/** One alert rule, as the definition and the deploy request give it. */
export function alertRule(): ReturnType<typeof buildRule> {
  return (ruleSchema ??= buildRule());
}
export type AlertRuleInput = z.infer<ReturnType<typeof buildRule>>;

function buildRules() {
  return z
    .array(alertRule())
    .max(50)
    .superRefine((rules, ctx) => {
      const seen = new Set<string>();
      rules.forEach((rule, index) => {
        const name = rule.name ?? rule.type;
        if (seen.has(name))
          ctx.addIssue({
            code: 'custom',
            path: [index, 'name'],
            message: `two rules are named ${name}; give each its own name`,
          });
        seen.add(name);
      });
    });
}

let rulesSchema: ReturnType<typeof buildRules> | undefined;
/** The rules of the deploy request: a list (empty: no alerts). */
export function alertRules(): ReturnType<typeof buildRules> {
  return (rulesSchema ??= buildRules());
}

let configSchema: z.ZodType<AlertsConfig> | undefined;
/** `deploy.alerts`: a list of rules (`[]`: none), or `{ enabled: false }`, or `{ enabled, rules }`. */
export function alertsConfig(): z.ZodType<AlertsConfig> {
  return (configSchema ??= z
    .union([alertRules(), z.strictObject({ enabled: z.boolean(), rules: alertRules().optional() })])
    .describe(
      'alert rules evaluated by the engine (docs/observability.md); production has defaults when this is left out; [] or { enabled: false } turns them off',
    ) as z.ZodType<AlertsConfig>);
}

export type AlertsConfig = AlertRuleInput[] | { enabled: boolean; rules?: AlertRuleInput[] | undefined };

/** A rule with every default filled in. */
export interface AlertRule {
  name: string;
  type: AlertKind;
  severity: AlertSeverity;
  /** seconds the condition must hold */
  forSeconds: number;
  /** seconds of the window (0: the rule has none) */
  windowSeconds: number;
  /** error_rate: percent; restarts: count; latency: ms */
  threshold: number;
  percentile?: (typeof LATENCY_PERCENTILES)[number];
  minRequests: number;
  /** as written, for messages and the PrometheusRule */
  forText: string;
  windowText: string;
}

/** What production gets when its definition says nothing about alerts. */
export const DEFAULT_ALERT_RULES: readonly AlertRuleInput[] = [
  { type: 'error_rate', above: 10, window: '5m', for: '2m' },
  { type: 'latency', percentile: 'p95', above_ms: 2000, window: '5m', for: '5m', severity: 'warning' },
  { type: 'no_healthy_instance', for: '1m' },
  { type: 'restarts', above: 3, window: '15m', severity: 'warning' },
  { type: 'failed_rollout' },
];

const DEFAULTS: Record<AlertKind, { for: string; window: string }> = {
  error_rate: { for: '1m', window: '5m' },
  latency: { for: '5m', window: '5m' },
  no_healthy_instance: { for: '1m', window: '0s' },
  restarts: { for: '0s', window: '15m' },
  failed_rollout: { for: '0s', window: '1h' },
};

/** The rules given as a list: `undefined` when the config says nothing (the environment's defaults apply). */
export function rulesOfConfig(config: AlertsConfig | undefined): AlertRuleInput[] | undefined {
  if (config === undefined) return undefined;
  if (Array.isArray(config)) return config;
  if (!config.enabled) return [];
  return config.rules;
}

/** The rules in force for a deployment: those given, else production's defaults, else none. */
export function effectiveAlertRules(given: readonly AlertRuleInput[] | undefined, environment: string): AlertRule[] {
  const rules = given ?? (environment === 'production' ? DEFAULT_ALERT_RULES : []);
  return rules.map(withDefaults);
}

function withDefaults(rule: AlertRuleInput): AlertRule {
  const defaults = DEFAULTS[rule.type];
  const forText = rule.for ?? defaults.for;
  const windowText = 'window' in rule && rule.window !== undefined ? rule.window : defaults.window;
  const threshold = rule.type === 'latency' ? rule.above_ms : 'above' in rule ? rule.above : 0;
  return {
    name: rule.name ?? rule.type,
    type: rule.type,
    severity: rule.severity ?? 'critical',
    forSeconds: durationSeconds(forText),
    windowSeconds: durationSeconds(windowText),
    threshold,
    ...(rule.type === 'latency' ? { percentile: rule.percentile ?? 'p95' } : {}),
    minRequests: 'min_requests' in rule && rule.min_requests !== undefined ? rule.min_requests : 10,
    forText,
    windowText,
  };
}

/** One line that says what a rule watches, for messages and listings. */
export function describeRule(rule: AlertRule): string {
  switch (rule.type) {
    case 'error_rate':
      return `error rate above ${rule.threshold}% over ${rule.windowText} for ${rule.forText}`;
    case 'latency':
      return `${rule.percentile} latency above ${rule.threshold} ms over ${rule.windowText} for ${rule.forText}`;
    case 'no_healthy_instance':
      return `no healthy instance for ${rule.forText}`;
    case 'restarts':
      return `more than ${rule.threshold} restarts in ${rule.windowText}`;
    case 'failed_rollout':
      return 'a deploy that ended failed';
  }
}
