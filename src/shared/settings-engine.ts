/**
 * The engine's settings, declared for the registry (settings.ts): how `serve` listens and what it
 * answers, its limits and queues, HTTPS, and what its instances read from the environment it gives them.
 */
import { list, number, oneOf, port, text, wholeNumber } from './setting-parsers.js';
import { defineSetting as define } from './settings-resolver.js';

/** An http:// or https:// URL (an OTLP/HTTP collector). */
const otlpUrl = {
  allowed: 'an http:// or https:// URL',
  parse: (raw: unknown) =>
    typeof raw === 'string' && /^https?:\/\/[^/]/i.test(raw) && URL.canParse(raw) ? raw : undefined,
};

/** What may run the engine's deployments (src/engine/runners/select.ts). */
export const RUNNER_KINDS = ['process', 'docker', 'kubernetes'] as const;

const slots = (kind: string, key: string) =>
  define({
    env: `MCPCTL_${key.toUpperCase()}`,
    key: `tuning.${key}`,
    parser: wholeNumber(1),
    defaultText: 'one per core',
    doc: `${kind} the engine runs at once; more waits its turn in a queue`,
    audience: 'tuning',
    group: 'engine',
  });

/** The engine's: how `serve` listens, what it answers, its limits and queues. */
export const ENGINE_SETTINGS = {
  port: define({
    env: 'MCPCTL_PORT',
    flag: '--port',
    parser: port,
    default: 7070,
    doc: "`mcpctl serve`'s port; `0` takes any free one",
    audience: 'user',
    group: 'engine',
  }),
  publicUrl: define({
    env: 'MCPCTL_PUBLIC_URL',
    parser: text,
    defaultText: 'the address it listens on',
    doc: 'the address clients use for `mcpctl serve`, behind a proxy or a DNS name',
    audience: 'user',
    group: 'engine',
  }),
  logLevel: define({
    env: 'MCPCTL_LOG_LEVEL',
    parser: oneOf(['debug', 'info', 'warn', 'error'] as const),
    default: 'info',
    doc: "the engine's log level",
    audience: 'user',
    group: 'engine',
  }),
  runner: define({
    env: 'MCPCTL_RUNNER',
    key: 'runner',
    flag: '--runner',
    parser: oneOf(RUNNER_KINDS),
    default: 'process',
    doc: "what runs the engine's deployments (docs/deployments.md, docs/kubernetes.md)",
    audience: 'user',
    group: 'engine',
  }),
  rateLimit: define({
    env: 'MCPCTL_RATE_LIMIT',
    parser: number(0, { inclusive: true, allowed: 'a number of requests per second ≥ 0 (0 turns limiting off)' }),
    default: 40,
    doc: "the engine's requests per second per API key (bursts of three seconds' worth); `0` turns limiting off",
    audience: 'user',
    group: 'engine',
  }),
  devIdleMinutes: define({
    env: 'MCPCTL_DEV_IDLE_MINUTES',
    parser: number(0, { inclusive: false, allowed: 'a positive number of minutes' }),
    default: 5,
    doc: 'development deployments with no request for this many minutes hold no instance until the next request starts one (a deployment’s `idle_seconds` overrides it)',
    audience: 'user',
    group: 'engine',
  }),
  allowedHosts: define({
    env: 'MCPCTL_ALLOWED_HOSTS',
    parser: list(',', 'host names separated by commas'),
    defaultText: 'its own addresses and `MCPCTL_PUBLIC_URL`',
    doc: 'host names the engine answers besides its own addresses (comma-separated; `*`: any)',
    audience: 'user',
    group: 'engine',
  }),
  allowedOrigins: define({
    env: 'MCPCTL_ALLOWED_ORIGINS',
    parser: text,
    defaultText: 'none',
    doc: 'browser origins (`scheme://host:port`, comma-separated; `*`: any) whose pages may call deployments and `mcpctl dev`',
    audience: 'user',
    group: 'engine',
  }),
  sandbox: define({
    env: 'MCPCTL_SANDBOX',
    parser: oneOf(['auto', 'bubblewrap', 'off'] as const, { ignoreCase: true }),
    default: 'auto',
    doc: "the process runner's sandbox: `auto` (bubblewrap when installed), `bubblewrap` (required) or `off` (docs/security.md)",
    audience: 'user',
    group: 'engine',
  }),
  sandboxPaths: define({
    env: 'MCPCTL_SANDBOX_PATHS',
    parser: list(':', 'folders separated by colons'),
    defaultText: 'none',
    doc: 'more folders instances may read, `:`-separated, for programs installed outside `/usr` that `exec` tools run',
    audience: 'tuning',
    group: 'engine',
  }),
  authFailureLimit: define({
    env: 'MCPCTL_AUTH_FAILURE_LIMIT',
    key: 'tuning.auth_failure_limit',
    parser: wholeNumber(
      0,
      undefined,
      'a whole number ≥ 0 of refused API keys per minute from one address (0 turns the limit off)',
    ),
    default: 10,
    doc: 'refused API keys per minute from one address before it is blocked for a minute; `0` turns this off',
    audience: 'tuning',
    group: 'engine',
  }),
  startConcurrency: slots('instance starts (deploys, scale-ups, restarts, restores)', 'start_concurrency'),
  buildConcurrency: slots('build checks', 'build_concurrency'),
  testConcurrency: slots('test runs', 'test_concurrency'),
  queueMax: define({
    env: 'MCPCTL_QUEUE_MAX',
    key: 'tuning.queue_max',
    parser: wholeNumber(1),
    default: 500,
    doc: 'work waiting in one queue past which the engine answers `503` with `Retry-After`',
    audience: 'tuning',
    group: 'engine',
  }),
  retentionDevelopmentDays: define({
    env: 'MCPCTL_RETENTION_DEV_DAYS',
    key: 'tuning.retention_dev_days',
    parser: number(0, { inclusive: true, allowed: 'a number of days ≥ 0 (0 keeps them)' }),
    default: 7,
    doc: 'development deployments stopped or failed this many days ago are removed, with their logs; `0` keeps them',
    audience: 'tuning',
    group: 'engine',
  }),
  retentionBuildDays: define({
    env: 'MCPCTL_RETENTION_BUILD_DAYS',
    key: 'tuning.retention_build_days',
    parser: number(0, { inclusive: true, allowed: 'a number of days ≥ 0 (0 keeps them)' }),
    default: 30,
    doc: "builds this many days old that no kept deployment uses are removed (never a server's newest); `0` keeps them",
    audience: 'tuning',
    group: 'engine',
  }),
  warmPool: define({
    env: 'MCPCTL_WARM_POOL',
    key: 'tuning.warm_pool',
    parser: wholeNumber(0, 64, 'a whole number from 0 to 64 (0 turns the pool of warm processes off)'),
    defaultText: 'one per core, at most 4',
    doc: "runtime processes kept loaded and waiting for a bundle, so starts skip Node's start-up; `0` turns the pool off",
    audience: 'tuning',
    group: 'engine',
  }),
  engineNice: define({
    env: 'MCPCTL_ENGINE_NICE',
    key: 'tuning.engine_nice',
    parser: wholeNumber(0, 19, 'a whole number from 0 (off) to 19'),
    default: 5,
    doc: "on Linux, the background engine's autogroup nice value, so that on busy cores it gives way to its instances; `0` turns it off",
    audience: 'tuning',
    group: 'engine',
  }),
  alertChannels: define({
    env: 'MCPCTL_ALERT_CHANNELS',
    key: 'alerts.channels',
    parser: {
      allowed: 'a JSON list of channels (docs/observability.md)',
      parse: (raw) => {
        try {
          const value: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
          return Array.isArray(value) ? (value as unknown[]) : undefined;
        } catch {
          return undefined;
        }
      },
    },
    defaultText: 'none',
    doc: 'where alerts are sent: webhook, Slack and PagerDuty channels (docs/observability.md); none: alerts are only listed',
    audience: 'user',
    group: 'engine',
  }),
  alertRepeatMinutes: define({
    env: 'MCPCTL_ALERT_REPEAT_MINUTES',
    key: 'alerts.repeat_minutes',
    parser: number(0, { inclusive: false, allowed: 'a positive number of minutes' }),
    default: 240,
    doc: 'an alert still firing is sent again after this many minutes',
    audience: 'user',
    group: 'engine',
  }),
  alertInterval: define({
    env: 'MCPCTL_ALERT_INTERVAL',
    key: 'tuning.alert_interval',
    parser: number(0, { inclusive: false, allowed: 'a positive number of seconds' }),
    default: 5,
    doc: 'seconds between two evaluations of the alert rules',
    audience: 'tuning',
    group: 'engine',
  }),
  metricsToken: define({
    env: 'MCPCTL_METRICS_TOKEN',
    key: 'metrics.token',
    parser: text,
    defaultText: 'none: `/metrics` takes the API key only',
    doc: 'a read-only token for `GET /metrics` (Prometheus), which opens nothing else; at least 32 characters',
    audience: 'user',
    group: 'engine',
  }),
  metricsAddress: define({
    env: 'MCPCTL_METRICS_ADDRESS',
    key: 'metrics.address',
    parser: text,
    defaultText: "none: `/metrics` is on the engine's own address",
    doc: '`host:port` where `/metrics` is served on its own too, such as `127.0.0.1:9464`; beyond loopback it needs `MCPCTL_METRICS_TOKEN`',
    audience: 'user',
    group: 'engine',
  }),
  otelEndpoint: define({
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    key: 'otel.endpoint',
    parser: otlpUrl,
    defaultText: 'none: no traces',
    doc: 'the OTLP/HTTP collector traces are exported to (`/v1/traces` is added), such as `http://127.0.0.1:4318`',
    audience: 'user',
    group: 'engine',
  }),
  otelTracesEndpoint: define({
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    key: 'otel.traces_endpoint',
    parser: otlpUrl,
    defaultText: 'none',
    doc: 'the full OTLP/HTTP traces URL, taken as it is; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`',
    audience: 'user',
    group: 'engine',
  }),
  otelHeaders: define({
    env: 'OTEL_EXPORTER_OTLP_HEADERS',
    key: 'otel.headers',
    parser: text,
    defaultText: 'none',
    doc: 'headers sent with every export, `name=value` pairs separated by commas (an API key: never logged)',
    audience: 'user',
    group: 'engine',
  }),
  otelServiceName: define({
    env: 'OTEL_SERVICE_NAME',
    key: 'otel.service_name',
    parser: text,
    default: 'mcpctl',
    doc: "`service.name` of the gateway's spans; an instance's spans carry its server's name",
    audience: 'user',
    group: 'engine',
  }),
};

/** HTTPS of the engine (docs/engine.md, "HTTPS"); paths in the settings file are taken from the home. */
export const HTTPS_SETTINGS = {
  tlsCert: define({
    env: 'MCPCTL_TLS_CERT',
    key: 'tls.cert',
    flag: '--tls-cert',
    parser: text,
    doc: 'the PEM certificate (full chain) HTTPS serves by default; needs the key too',
    audience: 'user',
    group: 'https',
  }),
  tlsKey: define({
    env: 'MCPCTL_TLS_KEY',
    key: 'tls.key',
    flag: '--tls-key',
    parser: text,
    doc: 'the PEM private key of the default certificate',
    audience: 'user',
    group: 'https',
  }),
  tlsPort: define({
    env: 'MCPCTL_TLS_PORT',
    key: 'tls.port',
    flag: '--tls-port',
    parser: port,
    default: 0,
    defaultText: 'any free port',
    doc: 'the HTTPS port; plain HTTP stays on its own',
    audience: 'user',
    group: 'https',
  }),
  tlsCertsDir: define({
    env: 'MCPCTL_TLS_CERTS_DIR',
    key: 'tls.certs_dir',
    flag: '--tls-certs-dir',
    parser: text,
    defaultText: "the home's `certs/`",
    doc: 'a folder of certificate and key pairs, chosen by SNI',
    audience: 'user',
    group: 'https',
  }),
  tlsHost: define({
    env: 'MCPCTL_TLS_HOST',
    key: 'tls.host',
    flag: '--tls-host',
    parser: text,
    defaultText: '`--host`',
    doc: "`mcpctl serve`'s HTTPS address alone, e.g. `0.0.0.0` while HTTP stays on `127.0.0.1`",
    audience: 'user',
    group: 'https',
  }),
  tlsWatchSeconds: define({
    env: 'MCPCTL_TLS_WATCH_SECONDS',
    key: 'tuning.tls_watch_seconds',
    parser: number(0, { inclusive: true, allowed: 'a number of seconds (0: never)' }),
    default: 2,
    doc: 'how often the certificate files are checked for a change; `0`: only on SIGHUP',
    audience: 'tuning',
    group: 'https',
  }),
};

/** Read by an instance from the environment the engine gives it. */
export const INSTANCE_SETTINGS = {
  execConcurrency: define({
    env: 'MCPCTL_EXEC_CONCURRENCY',
    parser: wholeNumber(1),
    defaultText: '4 per core',
    doc: "`exec` programs at once per instance, in the instance's environment; beyond it a call gets a `busy` tool error",
    audience: 'tuning',
    group: 'instance',
  }),
  instanceLabels: define({
    env: 'MCPCTL_INSTANCE',
    parser: text,
    doc: 'the labels naming the engine and deployment of a runtime process, so a restarted engine finds it',
    audience: 'internal',
    group: 'instance',
  }),
  tool: define({
    env: 'MCPCTL_TOOL',
    parser: text,
    doc: 'the tool an `exec` program runs for',
    audience: 'internal',
    group: 'instance',
  }),
  userId: define({
    env: 'MCPCTL_USER_ID',
    parser: text,
    doc: 'the caller an `exec` program runs for, when the server checks tokens',
    audience: 'internal',
    group: 'instance',
  }),
  authAudiences: define({
    env: 'MCPCTL_AUTH_AUDIENCES',
    parser: text,
    doc: "the token audiences the engine gives an instance (a deployment's URLs)",
    audience: 'internal',
    group: 'instance',
  }),
  authLocalJwks: define({
    env: 'MCPCTL_AUTH_LOCAL_JWKS',
    parser: text,
    doc: "the engine's local signing key, so a build's check and a test run can call a server that checks tokens",
    audience: 'internal',
    group: 'instance',
  }),
  traceSpans: define({
    env: 'MCPCTL_TRACE_SPANS',
    parser: text,
    doc: '`1` when the engine exports traces: the instance writes a `span` line for each request that continues a sampled trace',
    audience: 'internal',
    group: 'instance',
  }),
  requestStateKey: define({
    env: 'MCPCTL_REQUEST_STATE_KEY',
    parser: text,
    doc: "the key an instance signs input-required results' request state with, one per deployment; taken out of the environment at start",
    audience: 'internal',
    group: 'instance',
  }),
  tasksDir: define({
    env: 'MCPCTL_TASKS_DIR',
    parser: text,
    doc: 'the folder the instances of a deployment share for the state of their tasks',
    audience: 'internal',
    group: 'instance',
  }),
};
