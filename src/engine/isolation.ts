/**
 * What the engine's runtime processes (build checks, test instances, the process runner's
 * instances) run under, chosen once when the engine starts: the bubblewrap sandbox where this
 * machine has it (MCPCTL_SANDBOX: auto, the default; `bubblewrap` to require it; `off`), and
 * control-group limits where the engine may make them. What it has is reported by `engine status`
 * and, when a deployment would run with less, in its notices.
 */
import { findCgroupLimiter } from '../runtime/host/cgroup-limits.js';
import type { Isolation } from '../runtime/host/isolation.js';
import { EngineConfigError } from './engine-errors.js';
import { SETTINGS, settingValue } from '../shared/settings.js';
import type { RuntimeModules } from './builder.js';
import { findSandbox, SandboxUnavailableError, type SandboxSetting } from '../runtime/host/sandbox.js';

/** What the engine says about its instances' isolation (the health answer's `isolation`). */
export interface IsolationReport {
  sandbox: 'bubblewrap' | 'none';
  /** how `resources` are enforced on the process runner */
  limits: 'cgroup v1' | 'cgroup v2' | 'node heap';
  /** why the sandbox or the limits are missing */
  reasons: string[];
}

export interface ChosenIsolation {
  isolation: Isolation;
  report: IsolationReport;
}

export function chooseIsolation(env: NodeJS.ProcessEnv, home: string): ChosenIsolation {
  const configError = (message: string) => new EngineConfigError(message);
  const setting: SandboxSetting = settingValue(SETTINGS.sandbox, { env }, configError);
  const readOnly = settingValue(SETTINGS.sandboxPaths, { env }, configError) ?? [];
  let found;
  try {
    found = findSandbox(setting, { home, readOnly, ...(env.PATH === undefined ? {} : { path: env.PATH }) });
  } catch (error) {
    if (error instanceof SandboxUnavailableError) throw new EngineConfigError(error.message);
    throw error;
  }
  // slots of an engine that was killed: their processes died with it
  found.sandbox?.clear();
  const limits = findCgroupLimiter(home);
  const isolation: Isolation = {
    ...(found.sandbox === undefined ? {} : { sandbox: found.sandbox }),
    ...(limits.limiter === undefined ? {} : { limiter: limits.limiter }),
  };
  const reasons = [found.reason, limits.reason].filter((reason): reason is string => reason !== undefined);
  return {
    isolation,
    report: {
      sandbox: found.sandbox === undefined ? 'none' : 'bubblewrap',
      limits: limits.limiter === undefined ? 'node heap' : limits.limiter.version === 2 ? 'cgroup v2' : 'cgroup v1',
      reasons,
    },
  };
}

/** The lines a deployment on the process runner gets when its isolation is weaker than asked. */
export function isolationNotices(
  report: IsolationReport | undefined,
  resources: { memoryMb?: number; cpus?: number } | undefined,
): string[] {
  if (report === undefined) return [];
  const notices: string[] = [];
  if (report.sandbox === 'none') {
    notices.push(
      `its instances run without a sandbox here (${report.reasons[0] ?? 'none available'}): a server can read what the engine's user can; run servers from less trusted authors on the Docker runner (--runner docker)`,
    );
  }
  if (resources !== undefined && report.limits === 'node heap') {
    notices.push(
      'resources: memory is limited by Node’s heap size only, and CPU not at all, on this machine (control groups cannot be written by the engine)',
    );
  }
  return notices;
}

/** The runtime whose every process (cold or warm) starts under the engine's isolation. */
export function isolatedRuntime(
  load: () => Promise<RuntimeModules | undefined>,
  env: NodeJS.ProcessEnv,
  home: string,
): { load: () => Promise<RuntimeModules | undefined>; report: IsolationReport } {
  const { isolation, report } = chooseIsolation(env, home);
  const wrapped = async (): Promise<RuntimeModules | undefined> => {
    const modules = await load();
    if (modules === undefined) return undefined;
    const { startRuntimeProcess, spawnWarmRuntimeProcess } = modules;
    return {
      ...modules,
      startRuntimeProcess: (options) => startRuntimeProcess({ isolation, ...options }),
      ...(spawnWarmRuntimeProcess === undefined
        ? {}
        : { spawnWarmRuntimeProcess: (options) => spawnWarmRuntimeProcess({ isolation, ...options }) }),
    };
  };
  return { load: wrapped, report };
}
