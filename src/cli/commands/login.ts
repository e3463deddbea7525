/**
 * `mcpctl login` saves an API key for a service in a profile of the config file; `mcpctl logout`
 * removes it. The key never travels as an argument: it comes from a hidden prompt or from stdin
 * (`--with-key`), and it is never printed, not even in a suggested command.
 */
import type { Readable } from 'node:stream';
import { ApiError } from '../../api/errors.js';
import { explainApiError } from '../api-errors.js';
import { chooseProfile, configPath, createClient, displayUrl, readConfig, writeConfig, type Connection } from '../config.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../errors.js';
import { askSecret } from '../prompt.js';

export interface LoginCommandOptions {
  withKey?: boolean;
}

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
      hint: source === 'stdin' ? 'pipe the key in, for example: mcpctl login --with-key < key.txt' : 'type the key at the prompt',
      code: 'no_api_key',
    });
  }
  if (/[\r\n]/.test(key)) throw new UserError(`the API key (${source}) has more than one line`, { code: 'bad_api_key' });
  if (key !== key.trim() || /[^\x21-\x7e]/.test(key)) {
    throw new UserError(`the API key (${source}) contains spaces or characters that cannot travel in a header`, { code: 'bad_api_key' });
  }
  return key;
}

export async function loginCommand(ctx: CommandContext, options: LoginCommandOptions = {}): Promise<void> {
  const path = configPath(ctx.io.env);
  const loaded = await readConfig(path, (text) => ctx.out.warn(text));
  const profileName = chooseProfile(ctx, loaded.config).name;
  const profile = loaded.config.profiles[profileName] ?? {};

  const fromEnv = ctx.io.env.MCPCTL_API_URL;
  const [url, urlSource] =
    ctx.globals.apiUrl !== undefined
      ? [ctx.globals.apiUrl, 'from --api-url']
      : profile.api_url !== undefined && profile.api_url !== ''
        ? [profile.api_url, `from profile ${profileName}`]
        : fromEnv !== undefined && fromEnv.trim() !== ''
          ? [fromEnv, 'from MCPCTL_API_URL']
          : [undefined, ''];
  if (url === undefined) {
    throw new UserError('which service? no URL was given', {
      hint: 'pass it: mcpctl login --api-url https://mcp.example.com (the local engine needs no login)',
    });
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UserError(`the service URL (${urlSource}) is not an http(s) URL: ${displayUrl(url)}`, {
      hint: 'use a URL such as https://mcp.example.com',
    });
  }

  const key = options.withKey === true
    ? cleanKey(await readAll(ctx.io.stdin), 'stdin')
    : cleanKey(await askSecret(ctx, { message: `API key for ${displayUrl(url)}`, flag: '--with-key (with the key on stdin)' }), 'prompt');

  const connection: Connection = { url, apiKey: key, urlSource, keySource: 'given to login', profile: profileName, local: false };
  const client = createClient(ctx, connection);
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

  const config = loaded.config;
  config.profiles[profileName] = { ...profile, api_url: url, api_key: key };
  config.current ??= profileName;
  await writeConfig(path, config);

  const data = { profile: profileName, api_url: displayUrl(url), config_file: path, verified };
  ctx.out.result(data, (p) => {
    p.success(`Logged in to ${displayUrl(url)} (profile ${profileName})`);
    p.fields([
      ['profile', profileName],
      ['service', displayUrl(url)],
      ['key', verified ? 'saved, checked with GET /v1/servers' : 'saved (this service does not list servers, so it was not checked)'],
      ['config file', path],
    ]);
    if (config.current !== profileName) p.next(`use it with --profile ${profileName} or MCPCTL_PROFILE=${profileName}`);
    p.next('mcpctl build <file>');
  });
}

export async function logoutCommand(ctx: CommandContext): Promise<void> {
  const path = configPath(ctx.io.env);
  const loaded = await readConfig(path, (text) => ctx.out.warn(text));
  const profileName = chooseProfile(ctx, loaded.config).name;
  const profile = loaded.config.profiles[profileName];
  const removed = profile?.api_key !== undefined;
  if (profile !== undefined && removed) {
    delete profile.api_key;
    await writeConfig(path, loaded.config);
  }
  ctx.out.result({ profile: profileName, removed, config_file: path }, (p) => {
    if (removed) p.success(`Removed the API key of profile ${profileName}`);
    else p.line(`profile ${profileName} has no saved key; nothing to remove`);
  });
}
