/**
 * Which certificates the engine serves over HTTPS: `mcpctl serve --tls-*`, else the MCPCTL_TLS_*
 * variables, else `"tls"` of the home's engine-settings.json, plus the home's `certs/` folder.
 * Read at every engine start, so it loads no TLS code: tls.ts (node:https) loads only when
 * there may be certificates.
 */
import { access, readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

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
export const DEFAULT_TLS_PORT = 0;

/** The TLS settings of the options, the environment and the settings file (relative paths from the home). */
export async function tlsSettings(input: {
  options?: TlsOptions | undefined;
  env: Record<string, string | undefined>;
  settingsFile: string;
  home: string;
}): Promise<TlsSettings> {
  const { env, settingsFile, home } = input;
  const options = input.options ?? {};
  const file = await tlsOfSettingsFile(settingsFile);
  const fileFrom = (field: string) => `"tls.${field}" in ${settingsFile}`;
  const pick = (
    given: string | undefined,
    flag: string,
    variable: string,
    field: string,
  ): { value: string; from: string } | undefined => {
    if (given !== undefined && given !== '') return { value: resolve(given), from: flag };
    const fromEnv = env[variable];
    if (fromEnv !== undefined && fromEnv !== '') return { value: resolve(fromEnv), from: variable };
    const fromFile = file[field];
    if (typeof fromFile === 'string' && fromFile !== '')
      return { value: inHome(home, fromFile), from: fileFrom(field) };
    return undefined;
  };
  const cert = pick(options.cert, '--tls-cert', 'MCPCTL_TLS_CERT', 'cert');
  const key = pick(options.key, '--tls-key', 'MCPCTL_TLS_KEY', 'key');
  if ((cert === undefined) !== (key === undefined)) {
    const [given, missing] =
      cert === undefined ? [key!, '--tls-cert (MCPCTL_TLS_CERT)'] : [cert, '--tls-key (MCPCTL_TLS_KEY)'];
    throw new TlsConfigError(
      `${given.from} is set but ${missing} is not: HTTPS needs both the certificate and its key`,
    );
  }
  const certsDir = pick(options.certsDir, '--tls-certs-dir', 'MCPCTL_TLS_CERTS_DIR', 'certs_dir');
  const domains: Record<string, CertificateFiles> = {};
  const fileDomains = file.domains;
  if (
    fileDomains !== undefined &&
    (typeof fileDomains !== 'object' || fileDomains === null || Array.isArray(fileDomains))
  ) {
    throw new TlsConfigError(`${fileFrom('domains')} must be an object of domain → { "cert": file, "key": file }`);
  }
  for (const [domain, pair] of Object.entries((fileDomains ?? {}) as Record<string, unknown>)) {
    const { cert: c, key: k } = (pair ?? {}) as { cert?: unknown; key?: unknown };
    if (typeof c !== 'string' || typeof k !== 'string') {
      throw new TlsConfigError(`${fileFrom(`domains["${domain}"]`)} must be { "cert": file, "key": file }`);
    }
    domains[domain.toLowerCase()] = {
      cert: inHome(home, c),
      key: inHome(home, k),
      from: fileFrom(`domains["${domain}"]`),
    };
  }
  return {
    ...(cert === undefined || key === undefined
      ? {}
      : { default: { cert: cert.value, key: key.value, from: `${cert.from} and ${key.from}` } }),
    domains,
    certsDir: certsDir?.value ?? join(home, 'certs'),
    certsDirOptional: certsDir === undefined,
    port: tlsPort(options.port, env.MCPCTL_TLS_PORT, file.port, fileFrom('port')),
    ...(options.host === undefined || options.host === '' ? {} : { host: options.host }),
    watchIntervalMs: watchInterval(env.MCPCTL_TLS_WATCH_SECONDS),
  };
}

function watchInterval(value: string | undefined): number {
  if (value === undefined || value === '') return 2_000;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new TlsConfigError(
      `MCPCTL_TLS_WATCH_SECONDS must be a number of seconds (0: never), not ${JSON.stringify(value)}`,
    );
  return Math.round(seconds * 1000);
}

function tlsPort(given: number | undefined, fromEnv: string | undefined, fromFile: unknown, fileFrom: string): number {
  const check = (value: unknown, from: string): number => {
    const port = typeof value === 'string' ? Number(value) : value;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new TlsConfigError(`${from} must be a port number from 0 to 65535, not ${JSON.stringify(value)}`);
    }
    return port;
  };
  if (given !== undefined) return check(given, '--tls-port');
  if (fromEnv !== undefined && fromEnv !== '') return check(fromEnv, 'MCPCTL_TLS_PORT');
  if (fromFile !== undefined) return check(fromFile, fileFrom);
  return DEFAULT_TLS_PORT;
}

async function tlsOfSettingsFile(settingsFile: string): Promise<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(settingsFile, 'utf8'));
  } catch {
    // missing or not JSON: the engine's own settings code says so
    return {};
  }
  const tls = (parsed as { tls?: unknown } | null)?.tls;
  if (tls === undefined) return {};
  if (typeof tls !== 'object' || tls === null || Array.isArray(tls)) {
    throw new TlsConfigError(
      `"tls" in ${settingsFile} must be an object such as { "cert": "cert.pem", "key": "key.pem" }`,
    );
  }
  return tls as Record<string, unknown>;
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
  if (input.given !== undefined && input.given !== '') return { value: input.given, from: '--tls-host' };
  const fromEnv = input.env.MCPCTL_TLS_HOST;
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, from: 'MCPCTL_TLS_HOST' };
  const fromFile = (await tlsOfSettingsFile(input.settingsFile)).host;
  if (fromFile === undefined || fromFile === '') return undefined;
  if (typeof fromFile !== 'string')
    throw new TlsConfigError(`"tls.host" in ${input.settingsFile} must be an address such as "0.0.0.0"`);
  return { value: fromFile, from: `"tls.host" in ${input.settingsFile}` };
}
