/**
 * What a setting is (its variable, settings-file key, flag, default, parser and one line of docs) and
 * the one order every reader resolves it in: the flag, else the environment variable, else the
 * engine's settings file, else the default. Each value remembers where it came from, so a message can
 * say `--tls-port`, `MCPCTL_TLS_PORT` or `"tls.port" in /home/me/.local/state/mcpctl/engine-settings.json`.
 * Pure: the settings file is read elsewhere (settings-file.ts).
 */
import type { SettingParser } from './setting-parsers.js';

/**
 * Who a setting is for: `user` settings are documented in the README and docs/settings.md; `tuning`
 * knobs in docs/tuning.md only; `internal` variables are set by the engine for its own children.
 */
export type SettingAudience = 'user' | 'tuning' | 'internal';

/** The part of mcpctl that reads a setting, which is also the section of the docs it appears in. */
export type SettingGroup = 'cli' | 'engine' | 'https' | 'docker' | 'swarm' | 'kubernetes' | 'instance';

export interface Setting<T = unknown, D extends T | undefined = T | undefined> {
  /** the environment variable */
  env: string;
  /** where in engine-settings.json, dotted (`tls.port`, `tuning.warm_pool`); none: not in the file */
  key?: string;
  /** the command-line flag that wins over the rest (`--tls-port`) */
  flag?: string;
  default: D;
  /** the default as the docs show it, when it is not a plain value (`one per core`) */
  defaultText?: string;
  parser: SettingParser<T>;
  /** a stricter parser for the settings file, whose values are JSON (`true` where the variable says `auto`) */
  fileParser?: SettingParser<T>;
  doc: string;
  audience: SettingAudience;
  group: SettingGroup;
}

/** A setting as declared: `default` may be left out (no default). */
export type SettingSpec<T, D extends T | undefined> = Omit<Setting<T, D>, 'default'> & { default?: D };

/** Declares one setting; the value's type comes from its parser and its default. */
export function defineSetting<T, const D extends T | undefined = undefined>(spec: SettingSpec<T, D>): Setting<T, D> {
  return { ...spec, default: spec.default as D };
}

/** The engine's settings file as read: its path (for messages) and its JSON object. */
export interface SettingsFile {
  path: string;
  values: Record<string, unknown>;
}

/** Where a value may come from; each is optional but the environment. */
export interface SettingSources {
  env: Record<string, string | undefined>;
  /** the flag's value when given (commander's string or number) */
  flag?: unknown;
  file?: SettingsFile | undefined;
  /**
   * What a flag or variable of white space is: unset (the default), or a value for the parser to
   * judge (`mcpctl serve` refuses a key of spaces rather than generate one in its place)
   */
  whiteSpace?: 'unset' | 'value';
}

export interface ResolvedSetting<T> {
  value: T;
  /** `--tls-port`, `MCPCTL_TLS_PORT`, `"tls.port" in <file>` or `default` */
  from: string;
}

/** What resolveSetting gives: undefined only for a setting without a default. */
export type ResolvedSettingOf<T, D> =
  ResolvedSetting<T | Exclude<D, undefined>> | (undefined extends D ? undefined : never);

/** A value a setting does not take; the message names the setting, the value and what it takes. */
export class SettingError extends Error {
  override readonly name = 'SettingError';
}

type ErrorOf = (message: string) => Error;
const settingError: ErrorOf = (message) => new SettingError(message);

/** The value at a dotted key of the settings file (`tls.port`); undefined when any part is missing. */
export function valueAtKey(values: Record<string, unknown>, key: string): unknown {
  let at: unknown = values;
  for (const part of key.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** Whether a flag or variable counts as given: not missing, not empty, not white space unless it is a value. */
function isGiven(raw: unknown, whiteSpace: SettingSources['whiteSpace'] = 'unset'): boolean {
  if (raw === undefined || raw === null || raw === '') return false;
  return whiteSpace === 'value' || !(typeof raw === 'string' && raw.trim() === '');
}

/** Whether a value of the settings file counts as given: `""` and `null` mean unset, `" "` is a (wrong) value. */
function isGivenInFile(raw: unknown): boolean {
  return raw !== undefined && raw !== null && raw !== '';
}

/** The first source that gives a value, raw, with where it came from and the parser for it. */
function rawValue<T>(
  setting: Setting<T, T | undefined>,
  sources: SettingSources,
): { raw: unknown; from: string; parser: SettingParser<T> } | undefined {
  if (setting.flag !== undefined && isGiven(sources.flag, sources.whiteSpace))
    return { raw: sources.flag, from: setting.flag, parser: setting.parser };
  const fromEnv = sources.env[setting.env];
  if (isGiven(fromEnv, sources.whiteSpace)) return { raw: fromEnv, from: setting.env, parser: setting.parser };
  if (setting.key === undefined || sources.file === undefined) return undefined;
  const inFile = valueAtKey(sources.file.values, setting.key);
  if (!isGivenInFile(inFile)) return undefined;
  return {
    raw: inFile,
    from: `"${setting.key}" in ${sources.file.path}`,
    parser: setting.fileParser ?? setting.parser,
  };
}

/**
 * The setting's value and where it came from: the flag, else the variable, else the settings file, else
 * the default (undefined when there is none). A value the setting does not take throws `toError(message)`,
 * a SettingError unless the reader has its own kind of error.
 */
export function resolveSetting<T, D extends T | undefined>(
  setting: Setting<T, D>,
  sources: SettingSources,
  toError: ErrorOf = settingError,
): ResolvedSettingOf<T, D> {
  const found = rawValue(setting as Setting<T, T | undefined>, sources);
  if (found === undefined) {
    const fallback = setting.default === undefined ? undefined : { value: setting.default, from: 'default' };
    return fallback as ResolvedSettingOf<T, D>;
  }
  const value = found.parser.parse(found.raw);
  if (value === undefined)
    throw toError(`${found.from} must be ${found.parser.allowed}, not ${JSON.stringify(found.raw)}`);
  return { value, from: found.from };
}

/** The setting's value alone (see resolveSetting). */
export function settingValue<T, D extends T | undefined>(
  setting: Setting<T, D>,
  sources: SettingSources,
  toError: ErrorOf = settingError,
): T | D {
  const resolved = resolveSetting(setting, sources, toError) as ResolvedSetting<T | D> | undefined;
  return resolved === undefined ? (undefined as D) : resolved.value;
}

/**
 * The setting's value, or its default when the given value is wrong, with the message to log: for a
 * setting whose mistake must not stop anything (a log level, a scheduling priority).
 */
export function settingValueOrDefault<T, D extends T | undefined>(
  setting: Setting<T, D>,
  sources: SettingSources,
): { value: T | D; problem?: string } {
  try {
    return { value: settingValue(setting, sources) };
  } catch (error) {
    if (!(error instanceof SettingError)) throw error;
    return { value: setting.default, problem: error.message };
  }
}
