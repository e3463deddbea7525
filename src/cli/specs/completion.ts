/**
 * `mcpctl completion <shell>`: the shell completion script. Its handler module loads only when it
 * runs.
 */
import { Argument, Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import type { OptionsOf } from './options.js';

export function defineCompletion(parent: CommandUnknownOpts) {
  return parent
    .command('completion')
    .description('print a completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish'] as const))
    .addOption(new Option('--deployments', 'print the names of deployments, for the script').hideHelp())
    .addHelpText(
      'after',
      `
Examples:
  source <(mcpctl completion bash)      # this bash; for every one, save it in
                                        # ~/.local/share/bash-completion/completions/mcpctl
  source <(mcpctl completion zsh)       # this zsh (after compinit); or save it as _mcpctl in $fpath
  mcpctl completion fish | source       # this fish; or save it in ~/.config/fish/completions/

Deployment names (<server>.<env>) are completed from the service in use; the local engine is asked
only when it runs.`,
    );
}
export type CompletionOptions = OptionsOf<ReturnType<typeof defineCompletion>>;
