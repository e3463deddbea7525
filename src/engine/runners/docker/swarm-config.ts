/**
 * The Swarm settings of the docker runner: each from its environment variable, else from `swarm` in the
 * home's engine-settings.json, else the default. Checked here, without the daemon, so a mistake is named
 * (the variable, or the file and the key) before anything starts.
 *
 *   MCPCTL_SWARM=auto|off                  "swarm": { "enabled": true|false }
 *   MCPCTL_SWARM_SPREAD=<label>            "swarm": { "spread": "<label>" }      (node.labels.<label> unless it has a dot)
 *   MCPCTL_SWARM_MONITOR_SECONDS=<n>       "swarm": { "monitor_seconds": n }
 *   MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS   "swarm": { "health_interval_seconds": n }
 */
import type { SwarmSettings } from './service-spec.js';
import { RunnerConfigError } from '../runner.js';

export interface SwarmConfig {
  /** false when turned off; otherwise Swarm applies whenever the daemon is a Swarm manager */
  enabled: boolean;
  settings: Partial<SwarmSettings>;
}

export const SWARM_SETTING_KEYS = ['enabled', 'spread', 'monitor_seconds', 'health_interval_seconds'] as const;

/** The Swarm configuration from the environment over `section` (`swarm` of `settingsFile`); RunnerConfigError when a value is wrong. */
export function swarmConfig(
  env: Record<string, string | undefined>,
  section: unknown,
  settingsFile = 'engine-settings.json',
): SwarmConfig {
  const where = (key: string) => `"swarm.${key}" in ${settingsFile}`;
  if (section !== undefined && (typeof section !== 'object' || section === null || Array.isArray(section))) {
    throw new RunnerConfigError(
      `"swarm" in ${settingsFile} must be an object such as {"enabled": true, "spread": "region"}, not ${JSON.stringify(section)}`,
    );
  }
  const file = (section ?? {}) as Record<string, unknown>;
  const unknownKey = Object.keys(file).find((key) => !(SWARM_SETTING_KEYS as readonly string[]).includes(key));
  if (unknownKey !== undefined)
    throw new RunnerConfigError(`${where(unknownKey)} is not a setting; the keys are ${SWARM_SETTING_KEYS.join(', ')}`);

  const enabled = enabledOf(env.MCPCTL_SWARM, file.enabled, where('enabled'));
  const spread = textOf(env.MCPCTL_SWARM_SPREAD, file.spread, where('spread'));
  const monitor = secondsOf(
    env.MCPCTL_SWARM_MONITOR_SECONDS,
    'MCPCTL_SWARM_MONITOR_SECONDS',
    file.monitor_seconds,
    where('monitor_seconds'),
  );
  const interval = secondsOf(
    env.MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS,
    'MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS',
    file.health_interval_seconds,
    where('health_interval_seconds'),
  );
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
    },
  };
}

const isSet = (value: string | undefined): value is string => value !== undefined && value !== '';

function enabledOf(fromEnv: string | undefined, inFile: unknown, where: string): boolean {
  if (isSet(fromEnv)) {
    if (fromEnv !== 'auto' && fromEnv !== 'off')
      throw new RunnerConfigError(`MCPCTL_SWARM must be auto or off, not ${JSON.stringify(fromEnv)}`);
    return fromEnv === 'auto';
  }
  if (inFile === undefined) return true;
  if (typeof inFile !== 'boolean')
    throw new RunnerConfigError(`${where} must be true or false, not ${JSON.stringify(inFile)}`);
  return inFile;
}

function textOf(fromEnv: string | undefined, inFile: unknown, where: string): string | undefined {
  if (isSet(fromEnv)) return fromEnv;
  if (inFile === undefined) return undefined;
  if (typeof inFile !== 'string' || inFile.trim() === '')
    throw new RunnerConfigError(`${where} must be a node label such as "region", not ${JSON.stringify(inFile)}`);
  return inFile;
}

function secondsOf(fromEnv: string | undefined, envName: string, inFile: unknown, where: string): number | undefined {
  if (isSet(fromEnv)) {
    const seconds = Number(fromEnv);
    if (!Number.isFinite(seconds) || seconds <= 0)
      throw new RunnerConfigError(`${envName} must be a positive number, not ${JSON.stringify(fromEnv)}`);
    return seconds;
  }
  if (inFile === undefined) return undefined;
  if (typeof inFile !== 'number' || !Number.isFinite(inFile) || inFile <= 0)
    throw new RunnerConfigError(`${where} must be a positive number of seconds, not ${JSON.stringify(inFile)}`);
  return inFile;
}
