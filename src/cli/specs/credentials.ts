/**
 * Where commands go and with which key: `login`, `logout` and `config show|use`. Each definition names
 * the command, its arguments, options and help; its handler module loads only when it runs.
 */
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { OptionsOf } from './options.js';

export function defineLogin(parent: CommandUnknownOpts) {
  return parent
    .command('login')
    .description(
      'save an API key for a /v1 service in a profile (the key is never an argument); says when the current profile changes',
    )
    .option('--with-key', 'read the key from stdin instead of a hidden prompt');
}
export type LoginOptions = OptionsOf<ReturnType<typeof defineLogin>>;

export function defineLogout(parent: CommandUnknownOpts) {
  return parent
    .command('logout')
    .description('remove the saved key of a profile; commands that named none go to the local engine again');
}

export function defineConfig(parent: CommandUnknownOpts) {
  return parent
    .command('config')
    .description('where commands go: profiles of the config file ("default" is the local engine)');
}

export function defineConfigShow(parent: CommandUnknownOpts) {
  return parent
    .command('show')
    .description('show the profile, service and key source commands use, and every profile (never a key)');
}

export function defineConfigUse(parent: CommandUnknownOpts) {
  return parent
    .command('use')
    .description('make a profile the current one; "default" is the local engine')
    .argument('<profile>', 'a profile saved by `mcpctl login`, or default');
}
