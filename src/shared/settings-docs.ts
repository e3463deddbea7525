/**
 * The pages written from the settings registry (settings.ts): docs/settings.md (every user setting),
 * docs/tuning.md (the tuning knobs and the `tuning` section of engine-settings.json) and the README's
 * table of variables. `npm run settings` writes them; a unit test fails when they differ from the
 * registry. Pure: text in, text out.
 */
import type { Setting, SettingGroup } from './settings-resolver.js';
import { ALL_SETTINGS } from './settings.js';

/** The README's generated table sits between these. */
export const README_MARKERS = { start: '<!-- settings:start -->', end: '<!-- settings:end -->' } as const;

/** The command that writes the generated pages, for messages. */
export const REGENERATE = 'npm run settings';

const GROUP_TITLES: Record<SettingGroup, string> = {
  cli: 'The CLI',
  engine: 'The engine',
  https: 'HTTPS',
  docker: 'The docker runner',
  swarm: 'Swarm (the docker runner on a Swarm manager)',
  kubernetes: 'The kubernetes runner',
  instance: 'Instances',
};

/** Groups whose settings the README shows on one row, linking their section of docs/settings.md. */
const README_GROUPED: readonly SettingGroup[] = ['https', 'docker', 'swarm', 'kubernetes'];

const GENERATED = `<!-- written by \`${REGENERATE}\` from src/shared/settings.ts: edit that file, not this one -->`;

const code = (text: string) => `\`${text}\``;
const cell = (text: string) => text.replaceAll('|', '\\|');

function defaultOf(setting: Setting): string {
  if (setting.defaultText !== undefined) return setting.defaultText;
  const value = setting.default;
  if (value === undefined) return '—';
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

/** `tls.port` as it is written in the file: `"tls": { "port" }`. */
function fileKeyOf(setting: Setting): string {
  if (setting.key === undefined) return '—';
  const [section, ...rest] = setting.key.split('.');
  return rest.length === 0 ? code(`"${section}"`) : code(`"${section}": { "${rest.join('.')}" }`);
}

function settingsOf(audience: Setting['audience'], group: SettingGroup): Setting[] {
  return ALL_SETTINGS.filter((setting) => setting.audience === audience && setting.group === group);
}

function groupsOf(audience: Setting['audience']): SettingGroup[] {
  const groups = Object.keys(GROUP_TITLES) as SettingGroup[];
  return groups.filter((group) => settingsOf(audience, group).length > 0);
}

/** The GitHub anchor of a heading. */
function anchorOf(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replaceAll(' ', '-');
}

function userTable(group: SettingGroup): string[] {
  const rows = settingsOf('user', group).map((setting) => {
    const flag = setting.flag === undefined ? '—' : code(setting.flag);
    const row = [code(setting.env), flag, fileKeyOf(setting), defaultOf(setting), setting.doc].map(cell);
    return `| ${row.join(' | ')} |`;
  });
  return ['| variable | flag | settings file | default | what it does |', '|---|---|---|---|---|', ...rows];
}

/** docs/settings.md: every user setting, by the part of mcpctl that reads it. */
export function settingsPage(): string {
  const lines = [
    '# Settings',
    '',
    GENERATED,
    '',
    'Every setting is read in one order: the command-line flag, else the environment variable, else the',
    "engine's settings file (`engine-settings.json` in the engine's home, `MCPCTL_HOME`), else the default.",
    'A value a setting does not take stops the command or the engine start with a message naming the flag,',
    'the variable or the file and the key, the value, and what the setting takes. Paths in the settings file',
    "are taken from the engine's home.",
    '',
    'For example, in `engine-settings.json`:',
    '',
    '```json',
    '{ "runner": "docker", "tls": { "cert": "cert.pem", "key": "key.pem" }, "swarm": { "spread": "zone" } }',
    '```',
    '',
    'Knobs that only change how the engine spends its resources are in [tuning.md](tuning.md).',
  ];
  for (const group of groupsOf('user')) lines.push('', `## ${GROUP_TITLES[group]}`, '', ...userTable(group));
  return `${lines.join('\n')}\n`;
}

/** docs/tuning.md: the knobs a user should not need, and the `tuning` section of the settings file. */
export function tuningPage(): string {
  const lines = [
    '# Tuning',
    '',
    GENERATED,
    '',
    "These settings change how mcpctl spends the machine's resources: queue sizes, pools, intervals. The",
    'defaults suit most hosts; change one when a measurement says so. Each is an environment variable and,',
    "where the engine reads it, a key of the engine's settings file (`engine-settings.json` in its home):",
    "most under one `tuning` section, the runners' own under their section. The variable wins over the file.",
    '',
    '```json',
    '{ "tuning": { "warm_pool": 2, "start_concurrency": 4 } }',
    '```',
    '',
    'The settings users set are in [settings.md](settings.md).',
  ];
  for (const group of groupsOf('tuning')) {
    lines.push('', `## ${GROUP_TITLES[group]}`, '', '| variable | settings file | default | what it does |');
    lines.push('|---|---|---|---|');
    for (const setting of settingsOf('tuning', group)) {
      const row = [code(setting.env), fileKeyOf(setting), defaultOf(setting), setting.doc].map(cell);
      lines.push(`| ${row.join(' | ')} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The README's table: one row per setting of the CLI and the engine, one per runner and HTTPS. */
export function readmeTable(): string {
  const rows: string[] = [];
  for (const group of groupsOf('user')) {
    const settings = settingsOf('user', group);
    if (README_GROUPED.includes(group)) {
      const names = settings.map((setting) => code(setting.env)).join(', ');
      const link = `[docs/settings.md](docs/settings.md#${anchorOf(GROUP_TITLES[group])})`;
      rows.push(`| ${names} | ${GROUP_TITLES[group].replace(/^The /, 'the ')}: ${link} | |`);
      continue;
    }
    for (const setting of settings)
      rows.push(`| ${[code(setting.env), setting.doc, defaultOf(setting)].map(cell).join(' | ')} |`);
  }
  return [
    README_MARKERS.start,
    '| variable | meaning | default |',
    '|---|---|---|',
    ...rows,
    '',
    'Flags and `engine-settings.json` keys of each: [docs/settings.md](docs/settings.md); the knobs that tune',
    'queues, pools and intervals: [docs/tuning.md](docs/tuning.md).',
    README_MARKERS.end,
  ].join('\n');
}

/** The README with its generated table, between the markers, written anew. */
export function withReadmeTable(readme: string): string {
  const start = readme.indexOf(README_MARKERS.start);
  const end = readme.indexOf(README_MARKERS.end);
  if (start === -1 || end < start) throw new Error(`README.md has no ${README_MARKERS.start} … ${README_MARKERS.end}`);
  return readme.slice(0, start) + readmeTable() + readme.slice(end + README_MARKERS.end.length);
}
