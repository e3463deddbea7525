/**
 * Which files an `include` folder leaves out (dot-files, and what `.mcpctlignore` names) and which
 * shipped files look like credentials. Pure: the caller reads the ignore file and lists folders.
 */

/** The file beside a definition that leaves more out of its `include` folders (gitignore syntax). */
export const IGNORE_FILE = '.mcpctlignore';

/** Names that look like keys, tokens or passwords, by the file's own name (lower case). */
const CREDENTIAL_NAMES: readonly RegExp[] = [
  /\.(pem|key|p12|pfx|jks|keystore|ppk|tfstate)$/,
  /^id_(rsa|dsa|ecdsa|ed25519)/,
  /^(credentials|service[-_]?account).*\.json$/,
  /^\.env($|\.)/,
  /^\.(npmrc|pypirc|netrc|pgpass|git-credentials|htpasswd|dockercfg)$/,
  /^kubeconfig/,
  /^credentials$/,
];
/** Folders whose files are credentials whatever their names (`.ssh/config`, `.aws/credentials`). */
const CREDENTIAL_FOLDERS = new Set(['.ssh', '.aws', '.gnupg', '.kube', '.docker', '.azure', '.gcloud']);
/** Copies meant to be shipped: `.env.example` holds names, not values. */
const EXAMPLE_SUFFIX = /\.(example|sample|template|dist)$/;

/** True when a shipped file (POSIX path relative to the definition) looks like it holds a credential. */
export function looksLikeCredential(path: string): boolean {
  const parts = path.toLowerCase().split('/');
  const name = parts.at(-1) ?? '';
  if (EXAMPLE_SUFFIX.test(name)) return false;
  if (parts.slice(0, -1).some((part) => CREDENTIAL_FOLDERS.has(part))) return true;
  return CREDENTIAL_NAMES.some((pattern) => pattern.test(name));
}

/** A file or folder name a folder walk leaves out unless it is named: `.env`, `.git`, `.npmrc`. */
export function isDotName(name: string): boolean {
  return name.startsWith('.');
}

export interface IgnoreRules {
  /** true when `path` (POSIX, relative to the definition; folders end with `/`) is left out */
  ignores(path: string): boolean;
}

/** The rules of a `.mcpctlignore` text (gitignore syntax); none for undefined. The parser loads only when there is a file. */
export async function parseIgnoreRules(text: string | undefined): Promise<IgnoreRules> {
  if (text === undefined) return { ignores: () => false };
  const { default: ignore } = await import('ignore');
  const rules = ignore().add(text);
  return { ignores: (path) => path !== '' && path !== './' && rules.ignores(path) };
}
