/**
 * Where the CLI finds its `/v1` service and key, in this order:
 *
 * 1. flags: `--api-url`, `--profile`;
 * 2. environment: `MCPCTL_API_URL`, `MCPCTL_API_KEY`, `MCPCTL_PROFILE`;
 * 3. the config file (`$MCPCTL_CONFIG`, else `$XDG_CONFIG_HOME/mcpctl/config.json`, else
 *    `~/.config/mcpctl/config.json`, config-file.ts) with named profiles;
 * 4. the local engine (the profile `default`), started in the background when needed.
 *
 * Every value remembers where it came from, so errors can say "from MCPCTL_API_URL" or
 * "from profile ci". The key itself is never shown.
 */
import { ApiClient, OPERATION_OBJECTS, type ApiExchange } from '../api/client.js';
import type { CommandContext } from './context.js';
import { requestTimeoutMs } from './request-timeout.js';
import type { ConfigFile, LoadedConfig, Profile } from './config-file.js';
import { configPath, readConfig } from './config-file.js';
import { EXIT, UserError } from '../shared/errors.js';
import { resolveSetting, SETTINGS, settingValue } from '../shared/settings.js';
import { VERSION as version } from '../shared/version.js';

/** The service the CLI talks to, with where each part came from. */
export interface Connection {
  url: string;
  apiKey: string;
  /** "from --api-url", "from MCPCTL_API_URL", "from profile ci", "from the local engine" */
  urlSource: string;
  keySource: string;
  /** the profile in use, if any */
  profile: string | undefined;
  /** the local engine, found or started */
  local: boolean;
  /** the local engine's process, so a slow answer can be told from a dead engine */
  pid?: number;
  /** true while the local engine's process runs */
  isAlive?: () => boolean;
}

/** A URL safe to print: no user name or password. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return url;
  }
}

/** The same service: scheme, host, port and path, ignoring a trailing slash. */
function sameService(a: string, b: string): boolean {
  return normalizeUrl(a) === normalizeUrl(b);
}
function normalizeUrl(url: string): string {
  try {
    return new URL(url).href.replace(/\/+$/, '');
  } catch {
    return url.replace(/\/+$/, '');
  }
}

function checkUrl(url: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UserError(`the service URL ${source} is not a URL: ${displayUrl(url)}`, {
      exitCode: EXIT.config,
      hint: 'use a URL such as https://mcp.example.com or http://127.0.0.1:47321',
      code: 'bad_config',
    });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UserError(`the service URL ${source} must start with http:// or https://: ${displayUrl(url)}`, {
      exitCode: EXIT.config,
      code: 'bad_config',
    });
  }
  // every path starts with /v1 already: a base URL ending in it would ask for /v1/v1/…
  if (/\/v1\/*$/.test(parsed.pathname)) {
    const base = new URL(parsed.href);
    base.pathname = parsed.pathname.replace(/\/v1\/*$/, '') || '/';
    throw new UserError(`the service URL ${source} ends with /v1: ${displayUrl(url)}`, {
      exitCode: EXIT.config,
      hint: `give the base URL without it (${displayUrl(base.href)}); mcpctl adds /v1 to every path`,
      code: 'bad_config',
    });
  }
  return url;
}

/** The profile that means the local engine: it needs no URL and no key. */
export const LOCAL_PROFILE = 'default';

export interface ProfileChoice {
  name: string;
  /** "from --profile", "from MCPCTL_PROFILE", "current in the config file", "default" */
  source: string;
  explicit: boolean;
}

/** Which profile is in use: --profile, MCPCTL_PROFILE, the file's `current`, else `default` (the local engine). */
export function chooseProfile(ctx: Pick<CommandContext, 'globals' | 'io'>, config: ConfigFile): ProfileChoice {
  const named = resolveSetting(SETTINGS.profile, { env: ctx.io.env, flag: ctx.globals.profile });
  if (named !== undefined) return { name: named.value, source: `from ${named.from}`, explicit: true };
  if (config.current !== undefined)
    return { name: config.current, source: 'current in the config file', explicit: false };
  return { name: LOCAL_PROFILE, source: 'default', explicit: false };
}

/**
 * A profile of the file that names a service. `default` is the local engine, unless the file
 * holds a profile of that name with a URL (written by an earlier mcpctl): that one is honoured.
 */
export function serviceProfile(config: ConfigFile, name: string): Profile | undefined {
  const profile = config.profiles[name];
  if (profile === undefined) return undefined;
  if (name === LOCAL_PROFILE && (profile.api_url ?? '').trim() === '') return undefined;
  return profile;
}

/** The profiles one can name, for a hint: `default` (the local engine) first. */
export function knownProfiles(config: ConfigFile): string {
  const services = Object.keys(config.profiles)
    .filter((name) => name !== LOCAL_PROFILE && serviceProfile(config, name) !== undefined)
    .sort();
  const local =
    serviceProfile(config, LOCAL_PROFILE) === undefined ? `${LOCAL_PROFILE} (the local engine)` : LOCAL_PROFILE;
  return [local, ...services].join(', ');
}

/** Where commands go, worked out without starting anything: a service (maybe without a key yet) or the local engine. */
export type ConnectionPlan =
  | { local: true; choice: ProfileChoice }
  | {
      local: false;
      choice: ProfileChoice;
      url: string;
      urlSource: string;
      key?: { value: string; source: string; profile: string | undefined };
      /** the profile whose URL is used, if any */
      profile: string | undefined;
    };

const KEY_SOURCE = `from ${SETTINGS.apiKey.env}`;

/** The URL of --api-url, else MCPCTL_API_URL, checked, with where it came from. */
function givenUrl(ctx: Pick<CommandContext, 'globals' | 'io'>): { url: string; source: string } | undefined {
  const given = resolveSetting(SETTINGS.apiUrl, { env: ctx.io.env, flag: ctx.globals.apiUrl });
  if (given === undefined) return undefined;
  const source = `from ${given.from}`;
  return { url: checkUrl(given.value, source), source };
}

/** MCPCTL_API_KEY, without the spaces a pasted key may bring. */
function givenKey(env: Record<string, string | undefined>): string | undefined {
  return settingValue(SETTINGS.apiKey, { env })?.trim();
}

/** Works out the service and key, in the documented order, from flags, environment and file. */
export function planConnection(ctx: Pick<CommandContext, 'globals' | 'io'>, loaded: LoadedConfig): ConnectionPlan {
  const choice = chooseProfile(ctx, loaded.config);
  const profile = serviceProfile(loaded.config, choice.name);
  if (profile === undefined && choice.explicit && choice.name !== LOCAL_PROFILE) {
    throw new UserError(`there is no profile "${choice.name}" (${choice.source}) in ${loaded.path}`, {
      exitCode: EXIT.config,
      hint: `known profiles: ${knownProfiles(loaded.config)}; or create it with: mcpctl login --profile ${choice.name} --api-url <url>`,
      code: 'bad_config',
    });
  }
  const profileLabel = `from profile ${choice.name}`;

  let given = givenUrl(ctx);
  if (given === undefined && profile?.api_url !== undefined && profile.api_url !== '')
    given = { url: checkUrl(profile.api_url, `${profileLabel} (${loaded.path})`), source: profileLabel };
  if (given === undefined) return { local: true, choice };
  const { url, source: urlSource } = given;

  const plan = {
    local: false as const,
    choice,
    url,
    urlSource,
    profile: profile === undefined ? undefined : choice.name,
  };
  const apiKey = givenKey(ctx.io.env);
  if (apiKey !== undefined) return { ...plan, key: { value: apiKey, source: KEY_SOURCE, profile: plan.profile } };
  // A profile's key goes only to its own service, never to a URL given elsewhere.
  if (
    profile?.api_key !== undefined &&
    profile.api_key !== '' &&
    (profile.api_url === undefined || sameService(profile.api_url, url))
  ) {
    return { ...plan, key: { value: profile.api_key, source: profileLabel, profile: choice.name } };
  }
  if (!choice.explicit) {
    for (const [name, other] of Object.entries(loaded.config.profiles)) {
      if (
        other.api_key !== undefined &&
        other.api_key !== '' &&
        other.api_url !== undefined &&
        sameService(other.api_url, url)
      ) {
        return { ...plan, key: { value: other.api_key, source: `from profile ${name}`, profile: name } };
      }
    }
  }
  return plan;
}

/** URL and key from flags and environment alone (a CI job): the config file is not needed. */
function directConnection(ctx: Pick<CommandContext, 'globals' | 'io'>): Connection | undefined {
  const apiKey = givenKey(ctx.io.env);
  const profile = resolveSetting(SETTINGS.profile, { env: ctx.io.env, flag: ctx.globals.profile });
  if (apiKey === undefined || profile !== undefined) return undefined;
  const given = givenUrl(ctx);
  if (given === undefined) return undefined;
  return { url: given.url, apiKey, urlSource: given.source, keySource: KEY_SOURCE, profile: undefined, local: false };
}

/** Finds (and if needed starts) the local engine. Loaded only when no service is configured. */
async function findLocalEngine(ctx: CommandContext) {
  const { ensureLocalEngine } = await import('./local-engine.js');
  return ensureLocalEngine({
    env: ctx.io.env,
    notice: (text) => ctx.out.notice(text),
    patienceMs: requestTimeoutMs(ctx),
  });
}

/** Resolves the service URL and key, in the documented order; starts the local engine when it is the one. */
export async function resolveConnection(ctx: CommandContext): Promise<Connection> {
  const direct = directConnection(ctx);
  if (direct !== undefined) return direct;
  const loaded = await readConfig(configPath(ctx.io.env), (text) => ctx.out.warn(text));
  const plan = planConnection(ctx, loaded);
  if (plan.local) {
    const engine = await findLocalEngine(ctx);
    return {
      url: engine.url,
      apiKey: engine.apiKey,
      urlSource: 'from the local engine',
      keySource: 'from the local engine',
      profile: undefined,
      local: true,
      pid: engine.pid,
      isAlive: engine.isAlive,
    };
  }
  if (plan.key !== undefined) {
    return {
      url: plan.url,
      apiKey: plan.key.value,
      urlSource: plan.urlSource,
      keySource: plan.key.source,
      profile: plan.key.profile,
      local: false,
    };
  }
  const name = plan.choice.name;
  const loginProfile = name === LOCAL_PROFILE ? '' : ` --profile ${name}`;
  throw new UserError(`no API key for ${displayUrl(plan.url)} (${plan.urlSource})`, {
    exitCode: EXIT.config,
    hint: `run \`mcpctl login${loginProfile} --api-url ${displayUrl(plan.url)}\`, or set MCPCTL_API_KEY`,
    code: 'no_api_key',
  });
}

/** Prints one HTTP exchange for --debug, with the key redacted. */
export function formatExchange(exchange: ApiExchange): string {
  const status = exchange.status === 0 ? `no answer (${exchange.error ?? 'failed'})` : String(exchange.status);
  const id = exchange.requestId === undefined ? '' : ` ${exchange.requestId}`;
  const attempt = exchange.attempt > 1 ? ` (attempt ${exchange.attempt})` : '';
  const headers = Object.entries(exchange.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  return `debug: ${exchange.method} ${displayUrl(exchange.url)} → ${status}${id} ${exchange.ms}ms${attempt}\ndebug:   ${headers}\n`;
}

/**
 * An API client for the resolved service, aborting on Ctrl-C, with --debug logging and the
 * request timeout. For the local engine, a slow answer is waited for while its process runs.
 */
export function createClient(
  ctx: CommandContext,
  connection: Pick<Connection, 'url' | 'apiKey' | 'pid' | 'isAlive'>,
): ApiClient {
  return new ApiClient({
    baseUrl: connection.url,
    apiKey: connection.apiKey,
    signal: ctx.signal,
    userAgent: `mcpctl/${version}`,
    requestTimeoutMs: requestTimeoutMs(ctx),
    ...(connection.isAlive === undefined ? {} : { isAlive: connection.isAlive }),
    onWaiting: ({ operation, reason }) => {
      ctx.out.notice(
        reason === 'still_running'
          ? `the ${OPERATION_OBJECTS[operation] ?? 'request'} is still running on the service; waiting for it`
          : `the local engine (pid ${String(connection.pid)}) is busy; waiting for it to answer`,
      );
    },
    ...(ctx.globals.debug ? { debug: (exchange: ApiExchange) => ctx.out.stderr(formatExchange(exchange)) } : {}),
  });
}

/** Resolves the service and opens a client for it. Close the client when done. */
export async function connect(ctx: CommandContext): Promise<{ client: ApiClient; connection: Connection }> {
  const connection = await resolveConnection(ctx);
  return { client: createClient(ctx, connection), connection };
}
