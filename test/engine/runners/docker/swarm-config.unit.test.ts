import { describe, expect, it } from 'vitest';
import { swarmConfig } from '../../../../src/engine/runners/docker/swarm-config.js';
import { RunnerConfigError } from '../../../../src/engine/runners/select.js';

const FILE = '/home/me/.mcpctl/engine-settings.json';

describe('the Swarm settings of the docker runner', () => {
  it('is on with the defaults when nothing is set', () => {
    expect(swarmConfig({}, undefined, FILE)).toEqual({ enabled: true, settings: {} });
  });

  it('reads "swarm" of the settings file', () => {
    const config = swarmConfig(
      {},
      { enabled: true, spread: 'zone', monitor_seconds: 3, health_interval_seconds: 1 },
      FILE,
    );
    expect(config).toEqual({
      enabled: true,
      settings: { spread: 'node.labels.zone', monitorMs: 3000, healthIntervalMs: 1000, healthStartMs: 10_000 },
    });
    expect(swarmConfig({}, { enabled: false }, FILE).enabled).toBe(false);
    expect(swarmConfig({}, { spread: 'node.hostname' }, FILE).settings.spread).toBe('node.hostname');
  });

  it('takes each environment variable over the file', () => {
    const env = {
      MCPCTL_SWARM: 'auto',
      MCPCTL_SWARM_SPREAD: 'rack',
      MCPCTL_SWARM_MONITOR_SECONDS: '5',
      MCPCTL_SWARM_HEALTH_INTERVAL_SECONDS: '',
    };
    const config = swarmConfig(
      env,
      { enabled: false, spread: 'zone', monitor_seconds: 3, health_interval_seconds: 2 },
      FILE,
    );
    expect(config).toEqual({
      enabled: true,
      settings: { spread: 'node.labels.rack', monitorMs: 5000, healthIntervalMs: 2000, healthStartMs: 20_000 },
    });
    expect(swarmConfig({ MCPCTL_SWARM: 'off' }, { enabled: true }, FILE).enabled).toBe(false);
  });

  it('names the file and the key of a wrong value', () => {
    const wrong = (section: unknown) => () => swarmConfig({}, section, FILE);
    expect(wrong('yes')).toThrow(RunnerConfigError);
    expect(wrong('yes')).toThrow(`"swarm" in ${FILE} must be an object`);
    expect(wrong({ enabled: 'yes' })).toThrow(`"swarm.enabled" in ${FILE} must be true or false, not "yes"`);
    expect(wrong({ spread: 3 })).toThrow(`"swarm.spread" in ${FILE} must be a node label such as "region", not 3`);
    expect(wrong({ spread: ' ' })).toThrow(`"swarm.spread" in ${FILE}`);
    expect(wrong({ monitor_seconds: '3' })).toThrow(
      `"swarm.monitor_seconds" in ${FILE} must be a positive number of seconds, not "3"`,
    );
    expect(wrong({ health_interval_seconds: 0 })).toThrow(
      `"swarm.health_interval_seconds" in ${FILE} must be a positive number of seconds, not 0`,
    );
    expect(wrong({ monitor: 3 })).toThrow(
      `"swarm.monitor" in ${FILE} is not a setting; the keys are enabled, spread, monitor_seconds, health_interval_seconds, tasks_volume_driver, tasks_volume_options`,
    );
    expect(wrong({ tasks_volume_options: { type: 'nfs', port: 2049 } })).toThrow(
      `"swarm.tasks_volume_options" in ${FILE} must be a JSON object of strings`,
    );
    expect(wrong({ tasks_volume_options: 'type=nfs' })).toThrow(`"swarm.tasks_volume_options" in ${FILE}`);
  });

  it('reads the driver and options of the task volume, as a JSON object in the variable', () => {
    const options = { type: 'nfs', o: 'addr=10.0.0.5,rw,nfsvers=4', device: ':/exports/mcpctl' };
    expect(swarmConfig({}, { tasks_volume_options: options }, FILE).settings).toEqual({
      tasksVolume: { options },
    });
    const env = {
      MCPCTL_SWARM_TASKS_VOLUME_DRIVER: 'local',
      MCPCTL_SWARM_TASKS_VOLUME_OPTIONS: JSON.stringify(options),
    };
    expect(swarmConfig(env, { tasks_volume_driver: 'other' }, FILE).settings).toEqual({
      tasksVolume: { driver: 'local', options },
    });
    expect(() => swarmConfig({ MCPCTL_SWARM_TASKS_VOLUME_OPTIONS: 'type=nfs' }, undefined, FILE)).toThrow(
      'MCPCTL_SWARM_TASKS_VOLUME_OPTIONS must be a JSON object of strings',
    );
  });

  it('names the environment variable of a wrong value', () => {
    expect(() => swarmConfig({ MCPCTL_SWARM: 'on' }, undefined, FILE)).toThrow(
      'MCPCTL_SWARM must be auto or off, not "on"',
    );
    expect(() => swarmConfig({ MCPCTL_SWARM_MONITOR_SECONDS: '-1' }, { monitor_seconds: 3 }, FILE)).toThrow(
      'MCPCTL_SWARM_MONITOR_SECONDS must be a positive number, not "-1"',
    );
  });
});
