/**
 * HTTPS for the engine: which certificates it serves (tlsSettings: `mcpctl serve --tls-*`, else the
 * MCPCTL_TLS_* variables, else `"tls"` of the home's engine-settings.json, plus the home's `certs/`
 * folder) and the HTTPS listener beside the plain HTTP one. The listener picks each client's
 * certificate by SNI (certificates.ts) and reloads them when their files change or on reload()
 * (SIGHUP): new handshakes get the new certificates, open connections keep theirs.
 * Loaded only when the engine has certificates.
 */
import { unwatchFile, watchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { isAbsolute, join, resolve } from 'node:path';
import type { Logger } from '../types.js';
import { certificateFor, coversHost, hasCertificates, loadCertificates, TlsConfigError, type CertificateFiles, type CertificateSet } from './certificates.js';

export { TlsConfigError };

/** What `mcpctl serve` was given; each field wins over the variables and the settings file. */
export interface TlsOptions {
  cert?: string | undefined;
  key?: string | undefined;
  /** the HTTPS port; 0 for any free one */
  port?: number | undefined;
  certsDir?: string | undefined;
}

export interface TlsSettings {
  default?: CertificateFiles;
  domains: Record<string, CertificateFiles>;
  certsDir: string;
  /** the folder is the home's own `certs/`, used when it exists */
  certsDirOptional: boolean;
  port: number;
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
  const pick = (given: string | undefined, flag: string, variable: string, field: string): { value: string; from: string } | undefined => {
    if (given !== undefined && given !== '') return { value: resolve(given), from: flag };
    const fromEnv = env[variable];
    if (fromEnv !== undefined && fromEnv !== '') return { value: resolve(fromEnv), from: variable };
    const fromFile = file[field];
    if (typeof fromFile === 'string' && fromFile !== '') return { value: inHome(home, fromFile), from: fileFrom(field) };
    return undefined;
  };
  const cert = pick(options.cert, '--tls-cert', 'MCPCTL_TLS_CERT', 'cert');
  const key = pick(options.key, '--tls-key', 'MCPCTL_TLS_KEY', 'key');
  if ((cert === undefined) !== (key === undefined)) {
    const [given, missing] = cert === undefined ? [key!, '--tls-cert (MCPCTL_TLS_CERT)'] : [cert, '--tls-key (MCPCTL_TLS_KEY)'];
    throw new TlsConfigError(`${given.from} is set but ${missing} is not: HTTPS needs both the certificate and its key`);
  }
  const certsDir = pick(options.certsDir, '--tls-certs-dir', 'MCPCTL_TLS_CERTS_DIR', 'certs_dir');
  const domains: Record<string, CertificateFiles> = {};
  const fileDomains = file.domains;
  if (fileDomains !== undefined && (typeof fileDomains !== 'object' || fileDomains === null || Array.isArray(fileDomains))) {
    throw new TlsConfigError(`${fileFrom('domains')} must be an object of domain → { "cert": file, "key": file }`);
  }
  for (const [domain, pair] of Object.entries((fileDomains ?? {}) as Record<string, unknown>)) {
    const { cert: c, key: k } = (pair ?? {}) as { cert?: unknown; key?: unknown };
    if (typeof c !== 'string' || typeof k !== 'string') {
      throw new TlsConfigError(`${fileFrom(`domains["${domain}"]`)} must be { "cert": file, "key": file }`);
    }
    domains[domain.toLowerCase()] = { cert: inHome(home, c), key: inHome(home, k), from: fileFrom(`domains["${domain}"]`) };
  }
  return {
    ...(cert === undefined || key === undefined ? {} : { default: { cert: cert.value, key: key.value, from: `${cert.from} and ${key.from}` } }),
    domains,
    certsDir: certsDir?.value ?? join(home, 'certs'),
    certsDirOptional: certsDir === undefined,
    port: tlsPort(options.port, env.MCPCTL_TLS_PORT, file.port, fileFrom('port')),
    watchIntervalMs: watchInterval(env.MCPCTL_TLS_WATCH_SECONDS),
  };
}

function watchInterval(value: string | undefined): number {
  if (value === undefined || value === '') return 2_000;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new TlsConfigError(`MCPCTL_TLS_WATCH_SECONDS must be a number of seconds (0: never), not ${JSON.stringify(value)}`);
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
    throw new TlsConfigError(`"tls" in ${settingsFile} must be an object such as { "cert": "cert.pem", "key": "key.pem" }`);
  }
  return tls as Record<string, unknown>;
}

function inHome(home: string, path: string): string {
  return isAbsolute(path) ? path : join(home, path);
}

/** The certificates of the settings; undefined when there are none (the engine then serves HTTP only). */
export async function loadTlsCertificates(settings: TlsSettings): Promise<CertificateSet | undefined> {
  const set = await loadCertificates({
    default: settings.default,
    domains: settings.domains,
    certsDir: settings.certsDir,
    certsDirOptional: settings.certsDirOptional,
  });
  return hasCertificates(set) ? set : undefined;
}

/** The settings and checked certificates of an engine, with the maker of its listener; undefined: HTTP only. */
export async function prepareTls(input: Parameters<typeof tlsSettings>[0]) {
  const settings = await tlsSettings(input);
  const certificates = await loadTlsCertificates(settings);
  if (certificates === undefined) return undefined;
  return {
    settings,
    create: (rest: Omit<TlsListenerOptions, 'settings' | 'certificates'>) => createTlsListener({ settings, certificates, ...rest }),
  };
}

export interface TlsListener {
  server: Server;
  /** the certificates served now */
  certificates(): CertificateSet;
  /** whether a client asking for `host` gets a certificate valid for it */
  covers(host: string): boolean;
  /** reads the certificates again; on a problem keeps the ones it has and says so (false) */
  reload(reason: string): Promise<boolean>;
  close(): void;
}

export interface TlsListenerOptions {
  settings: TlsSettings;
  certificates: CertificateSet;
  serverOptions: { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number };
  handler: Parameters<typeof createServer>[1];
  logger: Logger;
}

/** The HTTPS server (not yet listening) with its certificates, reloaded when their files change. */
export function createTlsListener(options: TlsListenerOptions): TlsListener {
  const { settings, logger } = options;
  let current = options.certificates;
  const defaultOf = (set: CertificateSet) => (set.default === undefined ? {} : set.default.pem);
  const server = createServer(
    {
      ...options.serverOptions,
      ...defaultOf(current),
      ALPNProtocols: ['http/1.1'],
      SNICallback: (servername, callback) => {
        const certificate = certificateFor(current, servername);
        if (certificate === undefined) callback(new Error(`no certificate for ${servername}`));
        else callback(null, certificate.context);
      },
    },
    options.handler,
  );
  for (const warning of current.warnings) logger.warn(warning);

  // one reload at a time, each reading the files as they are when it runs
  let queue: Promise<unknown> = Promise.resolve();
  const load = async (reason: string): Promise<boolean> => {
    try {
      const next = await loadTlsCertificates(settings);
      if (next === undefined) throw new TlsConfigError('no certificate is configured any more');
      if (next.default !== undefined) server.setSecureContext({ ...options.serverOptions, ...next.default.pem });
      unwatch();
      current = next;
      watch();
      for (const warning of next.warnings) logger.warn(warning);
      logger.info('TLS certificates reloaded', { reason, names: [...next.byName.keys()], default: next.default?.files.cert });
      return true;
    } catch (error) {
      logger.error('TLS certificates not reloaded; the previous ones are still served', { reason, error: (error as Error).message });
      return false;
    }
  };
  const reload = (reason: string): Promise<boolean> => {
    const run = queue.then(() => load(reason));
    queue = run;
    return run;
  };

  const interval = settings.watchIntervalMs;
  let watched: string[] = [];
  // a renewal writes several files: reload once they have all been written
  let settle: NodeJS.Timeout | undefined;
  const onChange = (now: { mtimeMs: number }, before: { mtimeMs: number }) => {
    if (now.mtimeMs === before.mtimeMs) return;
    clearTimeout(settle);
    settle = setTimeout(() => void reload('a certificate file changed'), 300).unref();
  };
  const watch = () => {
    if (interval <= 0) return;
    watched = [...new Set(current.files)];
    for (const file of watched) watchFile(file, { interval, persistent: false }, onChange);
  };
  const unwatch = () => {
    for (const file of watched) unwatchFile(file, onChange);
    watched = [];
  };
  watch();
  return {
    server,
    certificates: () => current,
    covers: (host) => coversHost(current, host),
    reload,
    close: () => {
      clearTimeout(settle);
      unwatch();
    },
  };
}
