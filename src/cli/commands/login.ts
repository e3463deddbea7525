/**
 * `mcpctl login` saves an API key for a service in a profile of the config file; `mcpctl logout`
 * removes it. The key never travels as an argument: it comes from a hidden prompt or from stdin
 * (`--with-key`), and it is never printed, not even in a suggested command.
 */
import type { Readable } from 'node:stream';
import { ApiError } from '../../api/errors.js';
import { explainApiError } from '../api-errors.js';
import { chooseProfile, createClient, displayUrl, LOCAL_PROFILE, serviceProfile, type Connection } from '../config.js';
import { configPath, readConfig, writeConfig, type ConfigFile } from '../config-file.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { resolveSetting, SETTINGS } from '../../shared/settings.js';
import { askSecret } from '../prompt.js';
import type { LoginOptions } from '../specs/credentials.js';

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The key as given: one trailing newline removed; empty or multi-line keys refused. */
export function cleanKey(raw: string, source: string): string {
  const key = raw.replace(/\r?\n$/, '');
  if (key.trim() === '') {
    throw new UserError(`no API key was given (${source})`, {
      hint:
        source === 'stdin'
          ? 'pipe the key in, for example: mcpctl login --with-key < key.txt'
          : 'type the key at the prompt',
      code: 'no_api_key',
    });
  }
  if (/[\r\n]/.test(key))
    throw new UserError(`the API key (${source}) has more than one line`, { code: 'bad_api_key' });
  if (key !== key.trim() || /[^\x21-\x7e]/.test(key)) {
    throw new UserError(`the API key (${source}) contains spaces or characters that cannot travel in a header`, {
      code: 'bad_api_key',
    });
  }
  return key;
}

/**
 * The profile a login saves to: the one named (--profile, MCPCTL_PROFILE); else the current one
 * when it names a service; else a new one named after the service's host.
 */
export function loginProfileName(
  ctx: CommandContext,
  config: ConfigFile,
  url: string | undefined,
): { name: string; explicit: boolean } {
  const choice = chooseProfile(ctx, config);
  if (choice.explicit) return { name: choice.name, explicit: true };
  if (serviceProfile(config, choice.name) !== undefined) return { name: choice.name, explicit: false };
  let host = 'service';
  try {
    host = url === undefined ? host : new URL(url).host.replace(/[^A-Za-z0-9._-]+/g, '-');
  } catch {
    // the URL is checked (and refused) later
  }
  let name = host;
  for (let n = 2; serviceProfile(config, name) !== undefined && serviceProfile(config, name)!.api_url !== url; n += 1)
    name = `${host}-${n}`;
  return { name, explicit: false };
}

export interface LoginResult {
  profile: string;
  api_url: string;
  config_file: string;
  verified: boolean;
  /** whether commands now use this profile when none is named */
  current: boolean;
  /** the profile that was current before, when this login changed it ("default": the local engine) */
  previous_current?: string;
}

export async function loginCommand(ctx: CommandContext, options: LoginOptions): Promise<void> {
  const path = configPath(ctx.io.env);
  const loaded = await readConfig(path, (text) => ctx.out.warn(text));
  const given = resolveSetting(SETTINGS.apiUrl, { env: ctx.io.env, flag: ctx.globals.apiUrl });
  const flagOrEnv = given === undefined ? undefined : ([given.value, `from ${given.from}`] as const);
  const { name: profileName, explicit } = loginProfileName(ctx, loaded.config, flagOrEnv?.[0]);
  if (profileName === LOCAL_PROFILE && serviceProfile(loaded.config, LOCAL_PROFILE) === undefined) {
    throw new UserError('the profile "default" is the local engine: it needs no login', {
      hint: 'save a service under a name of its own: mcpctl login --profile <name> --api-url <url>',
    });
  }
  const profile = loaded.config.profiles[profileName] ?? {};

  const [url, urlSource] =
    ctx.globals.apiUrl !== undefined
      ? [ctx.globals.apiUrl, 'from --api-url']
      : profile.api_url !== undefined && profile.api_url !== ''
        ? [profile.api_url, `from profile ${profileName}`]
        : flagOrEnv !== undefined
          ? [flagOrEnv[0], flagOrEnv[1]]
          : [undefined, ''];
  if (url === undefined) {
    throw new UserError('which service? no URL was given', {
      hint: 'pass it: mcpctl login --api-url https://mcp.example.com (the local engine needs no login)',
    });
  }
  assertHttpUrl(url, urlSource);
  const key = await readKey(ctx, options, url);

  const connection: Connection = {
    url,
    apiKey: key,
    urlSource,
    keySource: 'given to login',
    profile: profileName,
    local: false,
  };
  const verified = await verifyKey(ctx, connection);

  // A login that names no profile is a wish to use this service from now on; one that names a
  // profile only saves it. Either way, a change of the current profile is said out loud.
  const config = loaded.config;
  config.profiles[profileName] = { ...profile, api_url: url, api_key: key };
  const before = config.current ?? LOCAL_PROFILE;
  if (!explicit) config.current = profileName;
  const isCurrent = (config.current ?? LOCAL_PROFILE) === profileName;
  await writeConfig(path, config);

  const data: LoginResult = {
    profile: profileName,
    api_url: displayUrl(url),
    config_file: path,
    verified,
    current: isCurrent,
    ...(before !== (config.current ?? LOCAL_PROFILE) ? { previous_current: before } : {}),
  };
  ctx.out.result(data, (p) => {
    p.success(`Logged in to ${displayUrl(url)} (profile ${profileName})`);
    p.fields([
      ['profile', profileName],
      ['service', displayUrl(url)],
      [
        'key',
        verified
          ? 'saved, checked with GET /v1/servers'
          : 'saved (this service does not list servers, so it was not checked)',
      ],
      ['config file', path],
    ]);
    if (data.previous_current !== undefined) {
      p.warn(
        `${profileName} is now the current profile: commands go to ${displayUrl(url)} (before: ${describeProfile(data.previous_current)})`,
      );
      p.next(`go back with: mcpctl config use ${data.previous_current}`);
    } else if (!isCurrent) {
      p.next(`use it with --profile ${profileName}, or make it current: mcpctl config use ${profileName}`);
    }
    p.next('mcpctl build <file>');
  });
}

function assertHttpUrl(url: string, urlSource: string): void {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UserError(`the service URL (${urlSource}) is not an http(s) URL: ${displayUrl(url)}`, {
      hint: 'use a URL such as https://mcp.example.com',
    });
  }
}

async function readKey(ctx: CommandContext, options: LoginOptions, url: string): Promise<string> {
  return options.withKey === true
    ? cleanKey(await readAll(ctx.io.stdin), 'stdin')
    : cleanKey(
        await askSecret(ctx, {
          message: `API key for ${displayUrl(url)}`,
          flag: '--with-key (with the key on stdin)',
        }),
        'prompt',
      );
}

/**
 * Checks the key with GET /v1/servers before anything is saved: false when the service does not list
 * servers, so the key could not be checked.
 */
async function verifyKey(ctx: CommandContext, connection: Connection): Promise<boolean> {
  const client = createClient(ctx, connection);
  const url = connection.url;
  let verified = true;
  try {
    await client.listServers();
  } catch (error) {
    if (error instanceof ApiError && error.kind === 'http' && (error.status === 401 || error.status === 403)) {
      throw new UserError(`${displayUrl(url)} rejected this API key (HTTP ${error.status}); nothing was saved`, {
        exitCode: EXIT.config,
        code: error.code,
        hint: 'check the key and run `mcpctl login` again',
        ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
      });
    }
    // Not every service lists servers: a 404 says nothing about the key.
    if (error instanceof ApiError && error.kind === 'http' && error.status === 404) verified = false;
    else {
      const explained = explainApiError(error, connection);
      if (explained instanceof UserError) {
        throw new UserError(`${explained.message}; nothing was saved`, {
          exitCode: explained.exitCode,
          code: explained.code,
          problems: explained.problems,
          ...(explained.hint === undefined ? {} : { hint: explained.hint }),
          ...(explained.requestId === undefined ? {} : { requestId: explained.requestId }),
        });
      }
      throw explained;
    }
  } finally {
    await client.close();
  }
  return verified;
}

/** A profile as a person reads it: `default` is the local engine. */
export function describeProfile(name: string): string {
  return name === LOCAL_PROFILE ? 'the local engine' : `profile ${name}`;
}

export async function logoutCommand(ctx: CommandContext): Promise<void> {
  const path = configPath(ctx.io.env);
  const loaded = await readConfig(path, (text) => ctx.out.warn(text));
  const config = loaded.config;
  const profileName = chooseProfile(ctx, config).name;
  const profile = config.profiles[profileName];
  // `default` is the local engine: a service saved under that name by an earlier mcpctl goes
  // entirely, key and URL, so that no command is left pointing at a service it has no key for
  const legacy = profileName === LOCAL_PROFILE && serviceProfile(config, LOCAL_PROFILE) !== undefined;
  const removed = profile?.api_key !== undefined || legacy;
  const wasCurrent = config.current === profileName;
  if (profile !== undefined && removed) {
    if (legacy) delete config.profiles[profileName];
    else delete profile.api_key;
    // commands that name no profile go to the local engine again, instead of failing for want of a key
    if (wasCurrent) delete config.current;
    await writeConfig(path, config);
  }
  const switched = removed && wasCurrent && profileName !== LOCAL_PROFILE;
  const data = { profile: profileName, removed, config_file: path, current: config.current ?? LOCAL_PROFILE };
  ctx.out.result(data, (p) => {
    if (legacy) p.success(`Removed profile ${profileName} and its key: "default" is the local engine again`);
    else if (removed) p.success(`Removed the API key of profile ${profileName}`);
    else if (profileName === LOCAL_PROFILE) p.line('the local engine needs no login; nothing to remove');
    else p.line(`profile ${profileName} has no saved key; nothing to remove`);
    if (switched) p.warn(`${profileName} is no longer the current profile: commands go to the local engine`);
  });
}
