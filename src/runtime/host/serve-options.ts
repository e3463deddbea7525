/**
 * The options of `serve-bundle` (a deployed server's process entry), read from its arguments and
 * checked: what it serves, where it listens, which Host headers and origins it accepts, how long
 * it drains, and how it learns that its supervisor is gone. A wrong option is an error whose
 * message says which. Pure: no IO.
 */
import { parseArgs } from 'node:util';

export interface ServeOptions {
  bundleDir: string;
  port: number;
  host: string;
  debug: boolean;
  /** the Host header names accepted; false: any */
  allowedHosts: string[] | false;
  /** false: pages of any origin; undefined: only those MCPCTL_ALLOWED_ORIGINS lists (createRuntime reads it) */
  allowedOrigins: false | undefined;
  drainMs: number;
  envIsSecret: boolean;
  valuesFile: string | undefined;
  lifeline: boolean;
  socketPath: string | undefined;
  /** where GET /metrics answers (on `host`), when asked for: a cluster's runtime (server/metrics.ts) */
  metricsPort: number | undefined;
  /** the environment, for the metrics' labels */
  environment: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

const OPTIONS = {
  bundle: { type: 'string' },
  port: { type: 'string', default: '0' },
  host: { type: 'string', default: '127.0.0.1' },
  'log-level': { type: 'string', default: 'info' },
  'allowed-host': { type: 'string', multiple: true },
  'drain-timeout': { type: 'string', default: '30' },
  'env-is-secret': { type: 'boolean', default: false },
  // not --env-file: Node 20 takes that flag as its own even after the script name, and reads the file as dotenv
  'values-file': { type: 'string' },
  lifeline: { type: 'boolean', default: false },
  socket: { type: 'string' },
  'metrics-port': { type: 'string' },
  environment: { type: 'string', default: 'production' },
} as const;

/** The options `args` give; throws an Error that says which one is wrong. */
export function parseServeOptions(args: string[]): ServeOptions {
  const { values } = parseArgs({ args, options: OPTIONS, strict: true });
  const port = Number(values.port);
  const drainSeconds = Number(values['drain-timeout']);
  if (values.bundle === undefined) throw new Error('--bundle DIR is required');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error('--port must be a whole number from 0 to 65535');
  if (!Number.isFinite(drainSeconds) || drainSeconds < 0)
    throw new Error('--drain-timeout must be a number of seconds');
  if (values['log-level'] !== 'info' && values['log-level'] !== 'debug')
    throw new Error('--log-level must be info or debug');
  const metricsPort = values['metrics-port'] === undefined ? undefined : Number(values['metrics-port']);
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535))
    throw new Error('--metrics-port must be a whole number from 0 to 65535');
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(values.environment))
    throw new Error('--environment must be a name of letters, digits, `_`, `.` and `-`');
  const extra = values['allowed-host'] ?? [];
  return {
    bundleDir: values.bundle,
    port,
    host: values.host,
    debug: values['log-level'] === 'debug',
    allowedHosts: allowedHosts(values.host, extra),
    allowedOrigins: extra.includes('*') ? false : undefined,
    drainMs: drainSeconds * 1000,
    envIsSecret: values['env-is-secret'],
    valuesFile: values['values-file'],
    lifeline: values.lifeline,
    socketPath: values.socket === undefined || values.socket === '' ? undefined : values.socket,
    metricsPort,
    environment: values.environment,
  };
}

/** Loopback: only local host names (DNS rebinding). Elsewhere a proxy sets Host: check only what is listed. */
function allowedHosts(host: string, extra: string[]): string[] | false {
  if (extra.includes('*')) return false;
  return LOOPBACK.has(host) || extra.length > 0 ? ['localhost', '127.0.0.1', '[::1]', ...extra] : false;
}
