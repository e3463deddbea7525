/**
 * Where the engine keeps its state (MCPCTL_HOME) and the names of the files in it.
 * Pure apart from reading the user's home folder.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { SETTINGS, settingValue } from '../shared/settings.js';

/**
 * The engine's state folder: `MCPCTL_HOME`, else `$XDG_STATE_HOME/mcpctl`, else
 * `~/.local/state/mcpctl`. A relative MCPCTL_HOME is taken from `cwd`.
 */
export function resolveHome(env: Record<string, string | undefined>, cwd = '.'): string {
  const explicit = settingValue(SETTINGS.home, { env });
  if (explicit !== undefined) return resolve(cwd, explicit);
  const xdg = env.XDG_STATE_HOME;
  // The XDG spec says relative values are invalid and must be ignored.
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, 'mcpctl');
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  return join(home, '.local', 'state', 'mcpctl');
}

export interface HomePaths {
  home: string;
  /** the running engine's address, pid and key (mode 0600); removed when it stops */
  stateFile: string;
  /** the key and port kept across restarts (mode 0600) */
  settingsFile: string;
  /** held by the one engine of this home */
  lockFile: string;
  /** the background engine's log (JSON lines) */
  logFile: string;
  storeDir: string;
  bundlesDir: string;
}

export function homePaths(home: string): HomePaths {
  return {
    home,
    stateFile: join(home, 'engine.json'),
    settingsFile: join(home, 'engine-settings.json'),
    lockFile: join(home, 'engine.lock'),
    logFile: join(home, 'engine.log'),
    storeDir: join(home, 'store'),
    bundlesDir: join(home, 'bundles'),
  };
}
