/**
 * Alerting as the engine starts it: its settings read (channels, repeat interval, evaluation
 * interval), the channels checked (a bad one stops the start, naming its field), their secrets
 * hidden from the log, the alerts kept before the restart read back, and the service fed by the
 * engine's observers and started.
 */
import { SETTINGS, SettingError, resolveSetting, settingValue, type SettingsFile } from '../../shared/settings.js';
import { EngineConfigError } from '../engine-errors.js';
import type { Logger } from '../engine-log.js';
import type { Observers } from '../observability/events.js';
import type { SecretRegistry } from '../secret-registry.js';
import type { DeploymentService } from '../services.js';
import type { Store } from '../store/store.js';
import { AlertService } from './alert-service.js';
import { AlertConfigError, channelSecrets, parseChannels, type Channel } from './channels.js';

export { AlertService } from './alert-service.js';

export interface AlertSettings {
  channels: Channel[];
  intervalMs: number;
  repeatMs: number;
}

/** The alert settings of the environment and the settings file; a wrong one is an EngineConfigError. */
export function readAlertSettings(env: Record<string, string | undefined>, file: SettingsFile): AlertSettings {
  const sources = { env, file };
  try {
    const resolved = resolveSetting(SETTINGS.alertChannels, sources);
    const channels = parseChannels(resolved?.value, env, resolved?.from ?? 'alerts.channels');
    return {
      channels,
      intervalMs: settingValue(SETTINGS.alertInterval, sources) * 1000,
      repeatMs: settingValue(SETTINGS.alertRepeatMinutes, sources) * 60_000,
    };
  } catch (error) {
    if (error instanceof AlertConfigError || error instanceof SettingError) throw new EngineConfigError(error.message);
    throw error;
  }
}

export interface StartAlertsDeps {
  settings: AlertSettings;
  store: Store;
  deployments: DeploymentService;
  observers: Observers;
  secrets: SecretRegistry;
  logger: Logger;
  clock: () => number;
  engineUrl: string;
  /** where the alerts are kept across restarts */
  dir: string;
}

/** The alert service, evaluating; close() it at the engine's stop. */
export async function startAlerts(deps: StartAlertsDeps): Promise<AlertService> {
  const { settings } = deps;
  deps.secrets.add(SECRETS_OWNER, channelSecrets(settings.channels));
  const service = new AlertService({
    store: deps.store,
    deployments: deps.deployments,
    channels: settings.channels,
    logger: deps.logger,
    clock: deps.clock,
    engineUrl: deps.engineUrl,
    intervalMs: settings.intervalMs,
    repeatMs: settings.repeatMs,
    dir: deps.dir,
  });
  try {
    await service.restore();
  } catch (error) {
    deps.logger.error('the alerts kept before the restart could not be read', { error: String(error) });
  }
  service.start(deps.observers.add(service.observer));
  return service;
}

const SECRETS_OWNER = 'alert-channels';
