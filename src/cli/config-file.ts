/**
 * The CLI's config file of named profiles (`$MCPCTL_CONFIG`, else `$XDG_CONFIG_HOME/mcpctl/config.json`,
 * else `~/.config/mcpctl/config.json`): where it is, reading it with every wrong field named, and
 * writing it atomically with mode 0600 (it holds keys).
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { EXIT, UserError } from '../shared/errors.js';
import { SETTINGS, settingValue } from '../shared/settings.js';

export interface Profile {
  api_url?: string;
  api_key?: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
  current?: string;
}

export interface LoadedConfig {
  path: string;
  exists: boolean;
  config: ConfigFile;
}

type Env = Record<string, string | undefined>;

/** The config file's path for this environment. */
export function configPath(env: Env): string {
  const given = settingValue(SETTINGS.config, { env });
  if (given !== undefined) return given;
  const base = nonEmpty(env.XDG_CONFIG_HOME)
    ? env.XDG_CONFIG_HOME
    : join(nonEmpty(env.HOME) ? env.HOME : homedir(), '.config');
  return join(base, 'mcpctl', 'config.json');
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/**
 * Reads the config file. A missing file is an empty config; a file readable by other users is
 * read with a warning (it holds keys).
 */
export async function readConfig(path: string, warn?: (text: string) => void): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path, exists: false, config: { profiles: {} } };
    throw new UserError(`cannot read the config file ${path}: ${(error as Error).message}`, {
      exitCode: EXIT.config,
      code: 'bad_config',
    });
  }
  if (warn !== undefined && process.platform !== 'win32') {
    const info = await stat(path);
    if ((info.mode & 0o077) !== 0) warn(`the config file ${path} can be read by other users; run: chmod 600 ${path}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new UserError(`the config file ${path} is not valid JSON: ${(error as Error).message}`, {
      exitCode: EXIT.config,
      hint: 'fix the file, or remove it and run `mcpctl login` again',
      code: 'bad_config',
    });
  }
  return { path, exists: true, config: parseConfig(raw, path) };
}

/** Checks the shape of a config file, naming each wrong field. */
export function parseConfig(raw: unknown, path: string): ConfigFile {
  const problems: Array<{ path: string; message: string }> = [];
  const config: ConfigFile = { profiles: {} };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push({ path: '', message: 'must be a JSON object' });
  } else {
    const { profiles, current } = raw as Record<string, unknown>;
    if (current !== undefined) {
      if (typeof current === 'string') config.current = current;
      else problems.push({ path: 'current', message: 'must be a profile name (a string)' });
    }
    if (profiles !== undefined) {
      if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles)) {
        problems.push({ path: 'profiles', message: 'must be an object of named profiles' });
      } else {
        for (const [name, value] of Object.entries(profiles as Record<string, unknown>)) {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) {
            problems.push({ path: `profiles.${name}`, message: 'must be an object with api_url and api_key' });
            continue;
          }
          const profile: Profile = {};
          for (const field of ['api_url', 'api_key'] as const) {
            const v = (value as Record<string, unknown>)[field];
            if (v === undefined) continue;
            if (typeof v === 'string') profile[field] = v;
            else problems.push({ path: `profiles.${name}.${field}`, message: 'must be a string' });
          }
          config.profiles[name] = profile;
        }
      }
    }
  }
  if (problems.length > 0) {
    throw new UserError(
      `the config file ${path} has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}`,
      {
        exitCode: EXIT.config,
        problems: problems.map((p) => ({ where: path, path: p.path, message: p.message })),
        hint: 'fix the file, or remove it and run `mcpctl login` again',
        code: 'bad_config',
      },
    );
  }
  return config;
}

/** Writes the config file atomically, mode 0600, in a folder created with mode 0700. */
export async function writeConfig(path: string, config: ConfigFile): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.config.${randomUUID().slice(0, 8)}.tmp`);
  const text = `${JSON.stringify(config, null, 2)}\n`;
  try {
    await writeFile(temp, text, { mode: 0o600, flag: 'wx' });
    await chmod(temp, 0o600);
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new UserError(`cannot write the config file ${path}: ${(error as Error).message}`, {
      exitCode: EXIT.config,
      code: 'bad_config',
    });
  }
}
