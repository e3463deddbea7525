/**
 * The CLI's own settings, declared for the registry (settings.ts): where it finds its service, how long
 * it waits, and where it keeps its compiled code.
 */
import { flagOne, number, text } from './setting-parsers.js';
import { defineSetting as define } from './settings-resolver.js';

/** The CLI's own settings: where it finds its service, and how long it waits. */
export const CLI_SETTINGS = {
  apiUrl: define({
    env: 'MCPCTL_API_URL',
    flag: '--api-url',
    parser: text,
    defaultText: 'the profile, else the local engine',
    doc: 'the `/v1` service the CLI talks to',
    audience: 'user',
    group: 'cli',
  }),
  apiKey: define({
    env: 'MCPCTL_API_KEY',
    parser: text,
    doc: "the service's API key; for `mcpctl serve`, the key the engine takes (at least 32 characters)",
    audience: 'user',
    group: 'cli',
  }),
  profile: define({
    env: 'MCPCTL_PROFILE',
    flag: '--profile',
    parser: text,
    defaultText: "the config file's `current`, else `default` (the local engine)",
    doc: 'the profile of the config file',
    audience: 'user',
    group: 'cli',
  }),
  config: define({
    env: 'MCPCTL_CONFIG',
    parser: text,
    defaultText: '`$XDG_CONFIG_HOME/mcpctl/config.json`, else `~/.config/mcpctl/config.json`',
    doc: 'the config file of profiles',
    audience: 'user',
    group: 'cli',
  }),
  requestTimeout: define({
    env: 'MCPCTL_REQUEST_TIMEOUT',
    flag: '--request-timeout',
    parser: number(0, { inclusive: false, allowed: 'a number of seconds > 0' }),
    default: 30,
    doc: 'seconds to wait for the service to answer a request',
    audience: 'user',
    group: 'cli',
  }),
  home: define({
    env: 'MCPCTL_HOME',
    parser: text,
    defaultText: '`$XDG_STATE_HOME/mcpctl`, else `~/.local/state/mcpctl`',
    doc: "the local engine's state folder (one engine per home)",
    audience: 'user',
    group: 'cli',
  }),
  compileCache: define({
    env: 'MCPCTL_COMPILE_CACHE',
    parser: text,
    defaultText: "the user's cache folder (`$XDG_CACHE_HOME/mcpctl`, `~/.cache/mcpctl`)",
    doc: "where the CLI keeps V8's compiled code of itself between runs on Node 20; `0` turns it off",
    audience: 'tuning',
    group: 'cli',
  }),
  debugCompileCache: define({
    env: 'MCPCTL_DEBUG_COMPILE_CACHE',
    parser: flagOne,
    default: false,
    defaultText: 'off',
    doc: '`1` shows on stderr what the compile cache does',
    audience: 'tuning',
    group: 'cli',
  }),
};
