/**
 * Owner and mode checks for the engine's private files: MCPCTL_HOME (its store holds every
 * deployment's values) and the files holding keys (engine.json, engine-settings.json, TLS keys,
 * the secret deployments' request-state keys are derived from).
 * Another user who can write there could replace the API key or a deployment's code, so that is
 * refused; one who could only read gets the mode tightened, with a warning. POSIX only: on Windows
 * access is by ACL and nothing is checked.
 */
import { chmodSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { HomePaths } from './home.js';
import { REQUEST_STATE_SECRET_FILE } from './deployments/request-state-keys.js';
import { EngineConfigError } from './engine-errors.js';

export type PrivateKind = 'folder' | 'file';

export interface ModeCheck {
  /** why the path must not be used (another owner, writable by others); the caller refuses */
  refuse?: string;
  /** what was tightened (readable by others before), for a warning */
  tightened?: string;
}

const PRIVATE_MODE: Record<PrivateKind, number> = { folder: 0o700, file: 0o600 };

/** The current user, or undefined where there are no POSIX owners. */
function currentUid(): number | undefined {
  return process.platform === 'win32' || typeof process.getuid !== 'function' ? undefined : process.getuid();
}

/**
 * Checks one path that must be the current user's alone. A missing path is fine (it is created
 * private). Group or others' write, or another owner, is a refusal; group or others' read or
 * execute is removed (chmod), which `tighten: false` only reports.
 */
export function checkPrivatePath(path: string, kind: PrivateKind, options: { tighten?: boolean } = {}): ModeCheck {
  const uid = currentUid();
  if (uid === undefined) return {};
  let info: Stats;
  try {
    info = statSync(path);
  } catch {
    return {};
  }
  const mode = info.mode & 0o777;
  const octal = mode.toString(8).padStart(3, '0');
  if (info.uid !== uid) {
    return {
      refuse: `${path} belongs to another user (uid ${info.uid}, not ${uid}): whoever owns it can read and change the engine's keys and state`,
    };
  }
  if ((mode & 0o022) !== 0) {
    return {
      refuse: `${path} can be written by ${(mode & 0o002) !== 0 ? 'every user' : 'its group'} (mode ${octal}): they could replace the engine's keys or a deployment's code`,
    };
  }
  if ((mode & 0o077) === 0) return {};
  const wanted = PRIVATE_MODE[kind];
  if (options.tighten === false)
    return { tightened: `${path} can be read by other users (mode ${octal}); it should be ${wanted.toString(8)}` };
  chmodSync(path, wanted);
  return { tightened: `${path} could be read by other users (mode ${octal}); its mode is now ${wanted.toString(8)}` };
}

/** What to do about an unsafe private path, as the sentence that ends an error. */
export function privatePathHint(path: string, kind: PrivateKind): string {
  return `make it yours alone (\`chown $(id -u) ${path} && chmod ${PRIVATE_MODE[kind].toString(8)} ${path}\`), or set MCPCTL_HOME to a folder only you can write`;
}

/**
 * The engine's home and its key files, checked before the engine starts. Throws EngineConfigError
 * when another user owns them or can write them; returns a warning for each one it made private.
 */
export function secureHome(paths: HomePaths): string[] {
  const warnings: string[] = [];
  const checks: Array<[string, PrivateKind]> = [
    [paths.home, 'folder'],
    [paths.settingsFile, 'file'],
    [paths.stateFile, 'file'],
    [paths.storeDir, 'folder'],
    [join(paths.home, REQUEST_STATE_SECRET_FILE), 'file'],
  ];
  for (const [path, kind] of checks) {
    const check = checkPrivatePath(path, kind);
    if (check.refuse !== undefined)
      throw new EngineConfigError(`the engine will not start: ${check.refuse}; ${privatePathHint(path, kind)}`);
    if (check.tightened !== undefined) warnings.push(check.tightened);
  }
  return warnings;
}
