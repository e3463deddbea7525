/**
 * The certificates the engine's HTTPS listener serves: a default one (`--tls-cert`/`--tls-key`),
 * one per domain (`"tls": { "domains": … }` of engine-settings.json), and every certificate and key
 * pair of a certificates folder, known by the names the certificate itself carries. Which one a
 * client gets (SNI): its exact name, then a wildcard one label deep (`*.example.com` covers
 * `a.example.com`, not `a.b.example.com`), then the default. Each file is checked at load: a missing,
 * unreadable or malformed file, or a key that is not the certificate's, is a TlsConfigError that
 * names the file, what is wrong and what to do.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { TlsConfigError, type CertificateFiles } from './tls-settings.js';

export { TlsConfigError, type CertificateFiles };

export interface LoadedCertificate {
  files: CertificateFiles;
  context: SecureContext;
  /** the PEM texts, for the default context of the server */
  pem: { cert: string; key: string };
  x509: X509Certificate;
  /** the DNS names it is valid for (lower case; wildcards as `*.example.com`) */
  names: string[];
}

export interface CertificateSet {
  default: LoadedCertificate | undefined;
  /** by lower-case name; a wildcard certificate under `*.example.com` */
  byName: Map<string, LoadedCertificate>;
  /** every file read: a change to one reloads the set */
  files: string[];
  /** what works but deserves attention (an expired certificate) */
  warnings: string[];
}

export interface CertificateSources {
  /** the default certificate, served to a client whose name no other one covers */
  default?: CertificateFiles | undefined;
  /** domain → its certificate (the domain may be a wildcard) */
  domains?: Record<string, CertificateFiles> | undefined;
  /** a folder of certificate and key pairs */
  certsDir?: string | undefined;
  /** the certificates folder is the home's implicit one: its absence is no error */
  certsDirOptional?: boolean;
  now?: number;
}

/** Loads and checks every certificate of the sources. */
export async function loadCertificates(sources: CertificateSources): Promise<CertificateSet> {
  const now = sources.now ?? Date.now();
  const set: CertificateSet = { default: undefined, byName: new Map(), files: [], warnings: [] };
  const add = async (files: CertificateFiles, names?: string[]): Promise<LoadedCertificate> => {
    const loaded = await loadPair(files);
    set.files.push(files.cert, files.key);
    if (new Date(loaded.x509.validTo).getTime() < now)
      set.warnings.push(`the TLS certificate ${files.cert} expired on ${loaded.x509.validTo}; renew it`);
    for (const name of names ?? loaded.names) set.byName.set(name.toLowerCase(), loaded);
    return loaded;
  };
  if (sources.certsDir !== undefined) {
    for (const pair of await pairsIn(sources.certsDir, sources.certsDirOptional === true)) await add(pair);
  }
  for (const [domain, files] of Object.entries(sources.domains ?? {})) await add(files, [domain]);
  if (sources.default !== undefined) set.default = await add(sources.default, []);
  return set;
}

/** The certificate a client asking for `servername` gets. */
export function certificateFor(set: CertificateSet, servername: string | undefined): LoadedCertificate | undefined {
  if (servername === undefined || servername === '') return set.default;
  const name = servername.toLowerCase().replace(/\.$/, '');
  const exact = set.byName.get(name);
  if (exact !== undefined) return exact;
  const dot = name.indexOf('.');
  return (dot > 0 ? set.byName.get(`*${name.slice(dot)}`) : undefined) ?? set.default;
}

/** Whether a client asking for `host` gets a certificate that is valid for that name. */
export function coversHost(set: CertificateSet, host: string): boolean {
  const certificate = certificateFor(set, host);
  return certificate !== undefined && certificate.x509.checkHost(host) !== undefined;
}

/** Whether the set has any certificate at all. */
export function hasCertificates(set: CertificateSet): boolean {
  return set.default !== undefined || set.byName.size > 0;
}

async function loadPair(files: CertificateFiles): Promise<LoadedCertificate> {
  const certText = await readPem(files.cert, 'certificate', files.from);
  const keyText = await readPem(files.key, 'key', files.from);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certText);
  } catch {
    throw new TlsConfigError(
      `the TLS certificate ${files.cert} (${files.from}) is not a PEM certificate: give the file that starts with -----BEGIN CERTIFICATE----- (the full chain, leaf first)`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyText);
  } catch (error) {
    const encrypted = /passphrase|encrypted/i.test((error as Error).message);
    throw new TlsConfigError(
      encrypted
        ? `the TLS key ${files.key} (${files.from}) is encrypted: give an unencrypted key (\`openssl pkey -in ${files.key} -out key.pem\`)`
        : `the TLS key ${files.key} (${files.from}) is not a PEM private key: give the file that starts with -----BEGIN PRIVATE KEY----- (or RSA/EC PRIVATE KEY)`,
    );
  }
  if (!x509.checkPrivateKey(key)) {
    throw new TlsConfigError(
      `the TLS key ${files.key} does not belong to the certificate ${files.cert} (${subjectOf(x509)}; ${files.from}): give the key the certificate was issued for`,
    );
  }
  let context: SecureContext;
  try {
    context = createSecureContext({ cert: certText, key: keyText });
  } catch (error) {
    throw new TlsConfigError(
      `the TLS certificate ${files.cert} and key ${files.key} (${files.from}) cannot be used: ${(error as Error).message}`,
    );
  }
  return { files, context, pem: { cert: certText, key: keyText }, x509, names: namesOf(x509) };
}

async function readPem(file: string, what: 'certificate' | 'key', from: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'cannot be read (permission denied)'
          : `cannot be read (${code ?? (error as Error).message})`;
    throw new TlsConfigError(
      `the TLS ${what} file ${file} (${from}) ${why}: give the path of a readable PEM ${what} file`,
    );
  }
}

/** The DNS names of the certificate's subjectAltName, else its common name. */
function namesOf(x509: X509Certificate): string[] {
  const dns = (x509.subjectAltName ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
  if (dns.length > 0) return dns;
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(x509.subject)?.[1];
  return cn === undefined ? [] : [cn.toLowerCase()];
}

function subjectOf(x509: X509Certificate): string {
  return x509.subject.split('\n').join(', ');
}

const CERT_NAMES = ['fullchain.pem', 'cert.pem', 'tls.crt'];
const KEY_NAMES = ['privkey.pem', 'key.pem', 'tls.key'];

/**
 * The pairs of a certificates folder: `<name>.crt` or `<name>.pem` with `<name>.key`, and each
 * sub-folder holding fullchain.pem/privkey.pem (certbot), cert.pem/key.pem or tls.crt/tls.key
 * (a Kubernetes TLS secret).
 */
async function pairsIn(dir: string, optional: boolean): Promise<CertificateFiles[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (optional && code === 'ENOENT') return [];
    throw new TlsConfigError(
      `the certificates folder ${dir} cannot be read (${code ?? (error as Error).message}): give a folder of certificate and key files`,
    );
  }
  const from = `the certificates folder ${dir}`;
  const names = new Set(entries.filter((entry) => entry.isFile()).map((entry) => entry.name));
  const pairs: CertificateFiles[] = [];
  for (const name of [...names].sort()) {
    const base = name.replace(/\.(crt|pem)$/, '');
    if (base === name || !names.has(`${base}.key`) || CERT_NAMES.includes(name)) continue;
    pairs.push({ cert: join(dir, name), key: join(dir, `${base}.key`), from });
  }
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const sub = join(dir, entry.name);
    const cert = await firstFile(sub, CERT_NAMES);
    const key = await firstFile(sub, KEY_NAMES);
    if (cert !== undefined && key !== undefined) pairs.push({ cert, key, from });
  }
  return pairs;
}

async function firstFile(dir: string, names: string[]): Promise<string | undefined> {
  for (const name of names) {
    const path = join(dir, name);
    if ((await stat(path).catch(() => undefined))?.isFile() === true) return path;
  }
  return undefined;
}
