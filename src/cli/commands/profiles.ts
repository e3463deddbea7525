/**
 * `mcpctl config show` and `mcpctl config use <profile>`: where commands go, and which profile
 * they use when none is named. `default` is the local engine. Never prints a key, and never
 * starts the engine: it only says whether it runs.
 */
import type { CommandContext } from '../context.js';
import { chooseProfile, displayUrl, knownProfiles, LOCAL_PROFILE, planConnection, serviceProfile } from '../config.js';
import { configPath, readConfig, writeConfig, type LoadedConfig } from '../config-file.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { resolveSetting, SETTINGS } from '../../shared/settings.js';
import { requestTimeoutMs } from '../request-timeout.js';
import { formatSeconds } from '../render/format.js';

export interface ProfileRow {
  name: string;
  /** the local engine (`default`) */
  local: boolean;
  api_url?: string;
  key_saved?: boolean;
  current: boolean;
}

export interface ConfigShow {
  config_file: string;
  config_file_exists: boolean;
  profile: { name: string; source: string };
  service:
    | { local: true; home: string; running: boolean; url?: string; pid?: number }
    | { local: false; url: string; source: string; key: string | null };
  request_timeout_seconds: number;
  profiles: ProfileRow[];
}

async function localEngine(
  ctx: CommandContext,
): Promise<{ home: string; running: boolean; url?: string; pid?: number }> {
  const [{ homePaths, resolveHome }, { isEngineProcess, readEngineState }] = await Promise.all([
    import('../../engine/home.js'),
    import('../../engine/engine-lock.js'),
  ]);
  const paths = homePaths(resolveHome(ctx.io.env, ctx.io.cwd));
  const state = await readEngineState(paths);
  if (state === undefined || !isEngineProcess(state.pid)) return { home: paths.home, running: false };
  return { home: paths.home, running: true, url: state.url, pid: state.pid };
}

function profileRows(loaded: LoadedConfig, current: string): ProfileRow[] {
  const rows: ProfileRow[] = [];
  if (serviceProfile(loaded.config, LOCAL_PROFILE) === undefined)
    rows.push({ name: LOCAL_PROFILE, local: true, current: current === LOCAL_PROFILE });
  for (const name of Object.keys(loaded.config.profiles).sort()) {
    const profile = serviceProfile(loaded.config, name);
    if (profile === undefined) continue;
    rows.push({
      name,
      local: false,
      ...(profile.api_url === undefined ? {} : { api_url: displayUrl(profile.api_url) }),
      key_saved: profile.api_key !== undefined && profile.api_key !== '',
      current: current === name,
    });
  }
  return rows;
}

export async function configShowCommand(ctx: CommandContext): Promise<void> {
  const path = configPath(ctx.io.env);
  const loaded = await readConfig(path, (text) => ctx.out.warn(text));
  const plan = planConnection(ctx, loaded);
  const choice = chooseProfile(ctx, loaded.config);
  const service: ConfigShow['service'] = plan.local
    ? { local: true, ...(await localEngine(ctx)) }
    : { local: false, url: displayUrl(plan.url), source: plan.urlSource, key: plan.key?.source ?? null };
  const data: ConfigShow = {
    config_file: path,
    config_file_exists: loaded.exists,
    profile: { name: choice.name, source: choice.source },
    service,
    request_timeout_seconds: requestTimeoutMs(ctx) / 1000,
    profiles: profileRows(loaded, loaded.config.current ?? LOCAL_PROFILE),
  };
  ctx.out.result(
    data,
    (p) => {
      const where = service.local
        ? `the local engine (${service.running ? `running at ${service.url ?? '?'}, pid ${String(service.pid)}` : 'not running; the first command that needs it starts it'})`
        : `${service.url} (${service.source})`;
      p.fields([
        [
          'profile',
          choice.source === 'default' ? `${choice.name} (no profile chosen)` : `${choice.name} (${choice.source})`,
        ],
        ['service', where],
        [
          'key',
          service.local
            ? 'the local engine’s own'
            : (service.key ?? p.style.yellow(`none: run \`mcpctl login\` or set ${SETTINGS.apiKey.env}`)),
        ],
        ['state', service.local ? service.home : undefined],
        ['request timeout', `${formatSeconds(data.request_timeout_seconds) ?? ''}`],
        ['config file', loaded.exists ? path : `${path} (not written yet)`],
      ]);
      p.line();
      p.table(
        ['PROFILE', 'SERVICE', 'KEY', ''],
        data.profiles.map((row) => [
          row.name,
          row.local ? 'the local engine' : (row.api_url ?? ''),
          row.local ? '–' : row.key_saved === true ? 'saved' : 'none',
          row.current ? 'current' : '',
        ]),
      );
      if (choice.explicit)
        p.warn(`${choice.source.replace(/^from /, '')} chooses the profile here, not the current one of the file`);
      p.next('mcpctl config use <profile>   (default: the local engine)');
    },
    { quiet: () => choice.name },
  );
}

export async function configUseCommand(ctx: CommandContext, name: string): Promise<void> {
  const path = configPath(ctx.io.env);
  const loaded = await readConfig(path, (text) => ctx.out.warn(text));
  const config = loaded.config;
  const profile = serviceProfile(config, name);
  if (name !== LOCAL_PROFILE && profile === undefined) {
    throw new UserError(`there is no profile "${name}" in ${path}`, {
      exitCode: EXIT.config,
      code: 'bad_config',
      hint: `known profiles: ${knownProfiles(config)}; save another with: mcpctl login --profile ${name} --api-url <url>`,
    });
  }
  const before = config.current ?? LOCAL_PROFILE;
  if (name === LOCAL_PROFILE && profile === undefined) delete config.current;
  else config.current = name;
  const changed = before !== name;
  if (changed) await writeConfig(path, config);
  const target = profile?.api_url === undefined ? 'the local engine' : displayUrl(profile.api_url);
  const overridden =
    ctx.globals.profile !== undefined ? '--profile' : resolveSetting(SETTINGS.profile, { env: ctx.io.env })?.from;
  ctx.out.result({ profile: name, previous: before, changed, config_file: path }, (p) => {
    if (changed) p.success(`${name} is now the current profile: commands go to ${target} (before: ${before})`);
    else p.success(`${name} is already the current profile: commands go to ${target}`);
    if (overridden !== undefined) p.warn(`${overridden} is set here and wins over the current profile`);
    if (profile !== undefined && (profile.api_key === undefined || profile.api_key === '')) {
      p.warn(`profile ${name} has no saved key: run mcpctl login --profile ${name}`);
    }
  });
}
