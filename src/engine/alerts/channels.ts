/**
 * The engine's alert channels (`alerts.channels` of engine-settings.json, or MCPCTL_ALERT_CHANNELS):
 * a signed generic webhook, a Slack-compatible incoming webhook, PagerDuty Events v2. Each is checked
 * once at start: a secret may come from an environment variable (`secret_env`, `url_env`,
 * `routing_key_env`), and delivery goes only over HTTPS or to a loopback address. A message never
 * names a URL or a secret.
 */
import { isIP } from 'node:net';
import { z } from 'zod';

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

const common = {
  name: z.string().min(1).max(64).optional(),
  /** only alerts of deployments in these environments; default: every environment */
  environments: z
    .array(z.enum(['development', 'staging', 'production']))
    .min(1)
    .optional(),
};
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

const ChannelConfig = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('webhook'),
    url: z.string().optional(),
    url_env: envName.optional(),
    secret: z.string().optional(),
    secret_env: envName.optional(),
    ...common,
  }),
  z.strictObject({ type: z.literal('slack'), url: z.string().optional(), url_env: envName.optional(), ...common }),
  z.strictObject({
    type: z.literal('pagerduty'),
    routing_key: z.string().optional(),
    routing_key_env: envName.optional(),
    url: z.string().optional(),
    ...common,
  }),
]);
type ChannelConfig = z.infer<typeof ChannelConfig>;

/** A channel ready to send to. */
export interface Channel {
  type: 'webhook' | 'slack' | 'pagerduty';
  /** for log lines: the name given, else `<type> #<n>` */
  name: string;
  url: string;
  /** webhook: the HMAC key; pagerduty: the routing key */
  secret?: string;
  environments?: string[];
}

/** A channel the engine cannot use; the message names the field, never its value. */
export class AlertConfigError extends Error {
  override readonly name = 'AlertConfigError';
}

/**
 * The channels of the setting's value (a list), with their secrets read from `env`. `where` names
 * the setting's source (`"alerts.channels" in …/engine-settings.json`) for messages.
 */
export function parseChannels(
  raw: unknown[] | undefined,
  env: Record<string, string | undefined>,
  where: string,
): Channel[] {
  if (raw === undefined) return [];
  return raw.map((entry, index) => {
    const at = `${where}[${index}]`;
    const parsed = ChannelConfig.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.length === 0 ? '' : `.${issue.path.join('.')}`;
      throw new AlertConfigError(`${at}${field}: ${issue.message}`);
    }
    return channelOf(parsed.data, env, at, index);
  });
}

function channelOf(config: ChannelConfig, env: Record<string, string | undefined>, at: string, index: number): Channel {
  const name = config.name ?? `${config.type} #${index + 1}`;
  const environments = config.environments === undefined ? {} : { environments: config.environments };
  const fromEnv = (value: string | undefined, variable: string | undefined, field: string): string | undefined => {
    if (value !== undefined && value !== '') return value;
    if (variable === undefined) return undefined;
    const read = env[variable];
    if (read === undefined || read.trim() === '')
      throw new AlertConfigError(`${at}.${field}_env: ${variable} is not set`);
    return read.trim();
  };
  if (config.type === 'pagerduty') {
    const key = fromEnv(config.routing_key, config.routing_key_env, 'routing_key');
    if (key === undefined)
      throw new AlertConfigError(`${at}: a pagerduty channel needs routing_key or routing_key_env`);
    const url = config.url ?? PAGERDUTY_EVENTS_URL;
    checkUrl(url, `${at}.url`);
    return { type: 'pagerduty', name, url, secret: key, ...environments };
  }
  const url = fromEnv(config.url, config.url_env, 'url');
  if (url === undefined) throw new AlertConfigError(`${at}: a ${config.type} channel needs url or url_env`);
  checkUrl(url, config.url === undefined ? `${at}.url_env` : `${at}.url`);
  if (config.type === 'slack') return { type: 'slack', name, url, ...environments };
  const secret = fromEnv(config.secret, config.secret_env, 'secret');
  if (secret === undefined || secret.length < 16) {
    throw new AlertConfigError(
      `${at}: a webhook channel needs secret or secret_env, at least 16 characters, to sign its messages`,
    );
  }
  return { type: 'webhook', name, url, secret, ...environments };
}

/** HTTPS anywhere, plain HTTP only to a loopback address. */
function checkUrl(text: string, field: string): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new AlertConfigError(`${field}: must be a URL`);
  }
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return;
  throw new AlertConfigError(
    `${field}: must be an https:// URL (plain http:// only to a loopback address such as 127.0.0.1)`,
  );
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** The values of the channels that must never be logged: their URLs (Slack's holds its token) and secrets. */
export function channelSecrets(channels: readonly Channel[]): string[] {
  return channels.flatMap((channel) => [channel.url, ...(channel.secret === undefined ? [] : [channel.secret])]);
}
