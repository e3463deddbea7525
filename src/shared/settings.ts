/**
 * Every `MCPCTL_*` setting, declared once: its environment variable, its key in the engine's
 * engine-settings.json (tuning knobs under `tuning`), its flag, default, parser and one line of docs.
 * Every reader resolves a setting through settings-resolver.ts; docs/settings.md, docs/tuning.md and
 * the README's table are written from this list (`npm run settings`). Loaded by the CLI at start-up,
 * so it holds data only.
 */
import type { Setting } from './settings-resolver.js';
import { CLI_SETTINGS } from './settings-cli.js';
import { ENGINE_SETTINGS, HTTPS_SETTINGS, INSTANCE_SETTINGS } from './settings-engine.js';
import { DOCKER_SETTINGS, KUBERNETES_SETTINGS } from './settings-runners.js';

export {
  resolveSetting,
  settingValue,
  settingValueOrDefault,
  SettingError,
  type ResolvedSetting,
  type ResolvedSettingOf,
  type Setting,
  type SettingSources,
  type SettingsFile,
} from './settings-resolver.js';

/** Every setting, by name. */
export const SETTINGS = {
  ...CLI_SETTINGS,
  ...ENGINE_SETTINGS,
  ...HTTPS_SETTINGS,
  ...DOCKER_SETTINGS,
  ...KUBERNETES_SETTINGS,
  ...INSTANCE_SETTINGS,
};

/** Every setting, in the order of the docs. */
export const ALL_SETTINGS: readonly Setting[] = Object.values(SETTINGS);
