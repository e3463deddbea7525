/**
 * The Swarm settings of the docker runner: each from its environment variable, else from `swarm` in the
 * home's engine-settings.json, else the default. Checked here, without the daemon, so a mistake is named
 * (the variable, or the file and the key) before anything starts.
 *
 *   MCPCTL_SWARM=auto|off                  "swarm": { "enabled": true|false }
 *   MCPCTL_SWARM_SPREAD=<label>            "swarm": { "spread": "<label>" }      (node.labels.<label> unless it has a dot)
 *   MCPCTL_SWARM_MONITOR_SECONDS=<n>       "swarm": { "monitor_seconds": n }
 *   MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS   "swarm": { "health_interval_seconds": n }
 *   MCPCTL_SWARM_TASKS_VOLUME_DRIVER       "swarm": { "tasks_volume_driver": "<driver>" }
 *   MCPCTL_SWARM_TASKS_VOLUME_OPTIONS      "swarm": { "tasks_volume_options": { "<name>": "<value>" } } (JSON in the variable)
 */
import type { SwarmSettings } from './service-spec.js';
import { RunnerConfigError } from '../runner.js';
import { SETTINGS, settingValue } from '../../../shared/settings.js';

export interface SwarmConfig {
  /** false when turned off; otherwise Swarm applies whenever the daemon is a Swarm manager */
  enabled: boolean;
  settings: Partial<SwarmSettings>;
}

export const SWARM_SETTING_KEYS = [
  'enabled',
  'spread',
  'monitor_seconds',
  'health_interval_seconds',
  'tasks_volume_driver',
  'tasks_volume_options',
] as const;

/** The Swarm configuration from the environment over `section` (`swarm` of `settingsFile`); RunnerConfigError when a value is wrong. */
export function swarmConfig(
  env: Record<string, string | undefined>,
  section: unknown,
  settingsFile = 'engine-settings.json',
): SwarmConfig {
  checkSection(section, settingsFile);
  const sources = { env, file: { path: settingsFile, values: { swarm: section } } };
  const enabled = settingValue(SETTINGS.swarm, sources, runnerError) === 'auto';
  const spread = settingValue(SETTINGS.swarmSpread, sources, runnerError);
  const monitor = settingValue(SETTINGS.swarmMonitorSeconds, sources, runnerError);
  const interval = settingValue(SETTINGS.swarmHealthIntervalSeconds, sources, runnerError);
  const driver = settingValue(SETTINGS.swarmTasksVolumeDriver, sources, runnerError);
  const options = settingValue(SETTINGS.swarmTasksVolumeOptions, sources, runnerError);
  return {
    enabled,
    settings: {
      ...(spread === undefined ? {} : { spread: spread.includes('.') ? spread : `node.labels.${spread}` }),
      ...(monitor === undefined ? {} : { monitorMs: Math.round(monitor * 1000) }),
      ...(interval === undefined
        ? {}
        : {
            healthIntervalMs: Math.round(interval * 1000),
            healthStartMs: Math.max(Math.round(interval * 1000) * 10, 5000),
          }),
      ...(driver === undefined && options === undefined
        ? {}
        : {
            tasksVolume: { ...(driver === undefined ? {} : { driver }), ...(options === undefined ? {} : { options }) },
          }),
    },
  };
}

const runnerError = (message: string) => new RunnerConfigError(message);

/** `swarm` of the settings file is an object of known keys. */
function checkSection(section: unknown, settingsFile: string): void {
  if (section !== undefined && (typeof section !== 'object' || section === null || Array.isArray(section))) {
    throw new RunnerConfigError(
      `"swarm" in ${settingsFile} must be an object such as {"enabled": true, "spread": "region"}, not ${JSON.stringify(section)}`,
    );
  }
  const unknownKey = Object.keys(section ?? {}).find((key) => !(SWARM_SETTING_KEYS as readonly string[]).includes(key));
  if (unknownKey !== undefined) {
    throw new RunnerConfigError(
      `"swarm.${unknownKey}" in ${settingsFile} is not a setting; the keys are ${SWARM_SETTING_KEYS.join(', ')}`,
    );
  }
}
