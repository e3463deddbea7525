/**
 * Which certificates the engine serves over HTTPS: `mcpctl serve --tls-*`, else the MCPCTL_TLS_*
 * variables, else `"tls"` of the home's engine-settings.json, plus the home's `certs/` folder.
 * Read at every engine start, so it loads no TLS code: tls.ts (node:https) loads only when
 * there may be certificates.
 */
import { access } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { readSettingsFile } from '../../shared/settings-file.js';
import { valueAtKey } from '../../shared/settings-resolver.js';
import { resolveSetting, SETTINGS, settingValue, type Setting, type SettingsFile } from '../../shared/settings.js';

export interface CertificateFiles {
  cert: string;
  key: string;
  /** where the pair was configured (`--tls-cert`, `"tls.domains" in …`), for messages */
  from: string;
}

/** A certificate or key that cannot be used; the message says which file, what is wrong and what to do. */
export class TlsConfigError extends Error {
  override readonly name = 'TlsConfigError';
}

/** What `mcpctl serve` was given; each field wins over the variables and the settings file. */
export interface TlsOptions {
  cert?: string | undefined;
  key?: string | undefined;
  /** the HTTPS port; 0 for any free one */
  port?: number | undefined;
  certsDir?: string | undefined;
  /** the address HTTPS listens on, when not the plain one (`--tls-host`, resolved by tlsHostSetting) */
  host?: string | undefined;
}

export interface TlsSettings {
  default?: CertificateFiles;
  domains: Record<string, CertificateFiles>;
  certsDir: string;
  /** the folder is the home's own `certs/`, used when it exists */
  certsDirOptional: boolean;
  port: number;
  /** the address HTTPS listens on; undefined: the plain HTTP one */
  host?: string | undefined;
  /** how often the certificate files are checked for a change (MCPCTL_TLS_WATCH_SECONDS, default 2 s); 0: only on SIGHUP */
  watchIntervalMs: number;
}

/** The HTTPS port without --tls-port, MCPCTL_TLS_PORT or `"tls": { "port" }`: any free one. */
export const DEFAULT_TLS_PORT = SETTINGS.tlsPort.default;

const tlsError = (message: string) => new TlsConfigError(message);

/** A file of a TLS setting, resolved: a flag's or a variable's from the working folder, the file's from the home. */
function tlsFile(
  setting: Setting<string, undefined>,
  given: string | undefined,
  sources: { env: Record<string, string | undefined>; file: SettingsFile; home: string },
): { value: string; from: string } | undefined {
  const found = resolveSetting(setting, { ...sources, flag: given }, tlsError);
  if (found === undefined) return undefined;
  const fromFile = found.from !== setting.flag && found.from !== setting.env;
  return { value: fromFile ? inHome(sources.home, found.value) : resolve(found.value), from: found.from };
}

/** The TLS settings of the options, the environment and the settings file (relative paths from the home). */
export async function tlsSettings(input: {
  options?: TlsOptions | undefined;
  env: Record<string, string | undefined>;
  settingsFile: string;
  home: string;
}): Promise<TlsSettings> {
  const { env, home } = input;
  const options = input.options ?? {};
  const file = await tlsSettingsFile(input.settingsFile);
  const sources = { env, file, home };
  const cert = tlsFile(SETTINGS.tlsCert, options.cert, sources);
  const key = tlsFile(SETTINGS.tlsKey, options.key, sources);
  if ((cert === undefined) !== (key === undefined)) {
    const [given, missing] =
      cert === undefined ? [key!, '--tls-cert (MCPCTL_TLS_CERT)'] : [cert, '--tls-key (MCPCTL_TLS_KEY)'];
    throw new TlsConfigError(
      `${given.from} is set but ${missing} is not: HTTPS needs both the certificate and its key`,
    );
  }
  const certsDir = tlsFile(SETTINGS.tlsCertsDir, options.certsDir, sources);
  const watchSeconds = settingValue(SETTINGS.tlsWatchSeconds, { env, file }, tlsError);
  return {
    ...(cert === undefined || key === undefined
      ? {}
      : { default: { cert: cert.value, key: key.value, from: `${cert.from} and ${key.from}` } }),
    domains: domainsOf(file, home),
    certsDir: certsDir?.value ?? join(home, 'certs'),
    certsDirOptional: certsDir === undefined,
    port: settingValue(SETTINGS.tlsPort, { env, file, flag: options.port }, tlsError),
    ...(options.host === undefined || options.host === '' ? {} : { host: options.host }),
    watchIntervalMs: Math.round(watchSeconds * 1000),
  };
}

/** The certificates per domain of `"tls": { "domains" }` (names in lower case). */
function domainsOf(file: SettingsFile, home: string): Record<string, CertificateFiles> {
  const fileFrom = (field: string) => `"tls.${field}" in ${file.path}`;
  const fileDomains = valueAtKey(file.values, 'tls.domains');
  if (
    fileDomains !== undefined &&
    (typeof fileDomains !== 'object' || fileDomains === null || Array.isArray(fileDomains))
  ) {
    throw new TlsConfigError(`${fileFrom('domains')} must be an object of domain → { "cert": file, "key": file }`);
  }
  const domains: Record<string, CertificateFiles> = {};
  for (const [domain, pair] of Object.entries((fileDomains ?? {}) as Record<string, unknown>)) {
    const { cert, key } = (pair ?? {}) as { cert?: unknown; key?: unknown };
    if (typeof cert !== 'string' || typeof key !== 'string') {
      throw new TlsConfigError(`${fileFrom(`domains["${domain}"]`)} must be { "cert": file, "key": file }`);
    }
    domains[domain.toLowerCase()] = {
      cert: inHome(home, cert),
      key: inHome(home, key),
      from: fileFrom(`domains["${domain}"]`),
    };
  }
  return domains;
}

/** The settings file, with its `"tls"` section checked to be an object. */
async function tlsSettingsFile(settingsFile: string): Promise<SettingsFile> {
  const file = await readSettingsFile(settingsFile);
  const tls = file.values.tls;
  if (tls !== undefined && (typeof tls !== 'object' || tls === null || Array.isArray(tls))) {
    throw new TlsConfigError(
      `"tls" in ${settingsFile} must be an object such as { "cert": "cert.pem", "key": "key.pem" }`,
    );
  }
  return file;
}

function inHome(home: string, path: string): string {
  return isAbsolute(path) ? path : join(home, path);
}

/** Whether the settings may give certificates: some are named, or the certificates folder exists. */
export async function mayServeHttps(settings: TlsSettings): Promise<boolean> {
  if (settings.default !== undefined || Object.keys(settings.domains).length > 0 || !settings.certsDirOptional)
    return true;
  return access(settings.certsDir).then(
    () => true,
    () => false,
  );
}

/**
 * The HTTPS address of `mcpctl serve`: `--tls-host`, else MCPCTL_TLS_HOST, else `"tls": { "host" }`
 * of the settings file; undefined: the plain HTTP address. Only `serve` reads it: the background
 * engine stays on loopback whatever the settings say.
 */
export async function tlsHostSetting(input: {
  given: string | undefined;
  env: Record<string, string | undefined>;
  settingsFile: string;
}): Promise<{ value: string; from: string } | undefined> {
  const file = await tlsSettingsFile(input.settingsFile);
  const fileHost = valueAtKey(file.values, 'tls.host');
  if (fileHost !== undefined && typeof fileHost !== 'string')
    throw new TlsConfigError(`"tls.host" in ${input.settingsFile} must be an address such as "0.0.0.0"`);
  return resolveSetting(SETTINGS.tlsHost, { env: input.env, file, flag: input.given }, tlsError);
}
