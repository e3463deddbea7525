/**
 * HTTPS for the engine: the listener beside the plain HTTP one, with the certificates of its
 * settings (tls-settings.ts). The listener picks each client's
 * certificate by SNI (certificates.ts) and reloads them when their files change or on reload()
 * (SIGHUP): new handshakes get the new certificates, open connections keep theirs.
 * Loaded only when the engine has certificates.
 */
import { unwatchFile, watchFile } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { Logger } from '../engine-log.js';
import { certificateFor, coversHost, hasCertificates, loadCertificates, type CertificateSet } from './certificates.js';
import { TlsConfigError, type TlsSettings } from './tls-settings.js';

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

/** The checked certificates of the settings, with the maker of its listener; undefined: HTTP only. */
export async function prepareTls(settings: TlsSettings) {
  const certificates = await loadTlsCertificates(settings);
  if (certificates === undefined) return undefined;
  return {
    settings,
    create: (rest: Omit<TlsListenerOptions, 'settings' | 'certificates'>) =>
      createTlsListener({ settings, certificates, ...rest }),
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
      logger.info('TLS certificates reloaded', {
        reason,
        names: [...next.byName.keys()],
        default: next.default?.files.cert,
      });
      return true;
    } catch (error) {
      logger.error('TLS certificates not reloaded; the previous ones are still served', {
        reason,
        error: (error as Error).message,
      });
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
