/**
 * Shell completion scripts for bash, zsh and fish, written from a model of the commander program
 * (its commands, options, option choices and arguments), so they list what the CLI accepts today.
 * Where a deployment is expected, the script asks `mcpctl completion <shell> --deployments` for the
 * names of the deployments (`<server>.<env>`): quietly, and nothing when no engine runs. Pure.
 */

/** An option as completion needs it. */
export interface CompletionOption {
  /** `-e`, `--env` */
  flags: string[];
  takesValue: boolean;
  /** the values it takes, when fixed */
  choices?: string[] | undefined;
  /** its value is a deployment */
  deployment?: boolean | undefined;
}

/** A command (the program itself has the empty path) and what may follow it. */
export interface CompletionNode {
  path: string[];
  subcommands: string[];
  options: CompletionOption[];
  /** the first argument: a deployment, fixed choices, or anything else (files) */
  argument?: { deployment: boolean; choices?: string[] | undefined } | undefined;
}

export type Shell = 'bash' | 'zsh' | 'fish';

/** The script for `shell`. `nodes` starts with the program; its options hold for every command. */
export function completionScript(shell: Shell, nodes: readonly CompletionNode[], version: string): string {
  switch (shell) {
    case 'bash':
      return bashScript(nodes, version);
    case 'zsh':
      return zshScript(nodes, version);
    case 'fish':
      return fishScript(nodes, version);
  }
}

/** A shell word: safe inside single quotes, which no name or choice of mcpctl contains. */
const word = (text: string): string => text.replace(/[^A-Za-z0-9_.:/@=+,-]/g, '');
const key = (node: CompletionNode): string => node.path.map(word).join(' ');

/** The helpers bash and zsh share: plain `case` statements over `path/word`, answered with echo. */
function sharedHelpers(nodes: readonly CompletionNode[]): string {
  const [root] = nodes;
  // the program's own options hold for every command, but for --help (each has its own) and --version
  const global = (root?.options ?? []).filter((o) => !o.flags.includes('--help') && !o.flags.includes('--version'));
  const subs = nodes.flatMap((node) => node.subcommands.map((sub) => `${key(node)}/${word(sub)}`));
  const valueCases: string[] = [];
  const choiceCases: string[] = [];
  const optionLines: string[] = [];
  const argumentLines: string[] = [];
  for (const node of nodes) {
    const path = key(node);
    const own = node === root ? node.options : [...node.options, ...global];
    optionLines.push(`    '${path}') echo '${own.flatMap((o) => o.flags.map(word)).join(' ')}' ;;`);
    for (const option of node.options) {
      if (!option.takesValue) continue;
      const pattern = option.flags.map((flag) => `'${node === root ? '*' : path}/${word(flag)}'`).join('|');
      valueCases.push(pattern.replaceAll(`'*/`, `*'/`));
      const values = option.deployment === true ? '@deployment' : (option.choices ?? []).map(word).join(' ');
      if (values !== '') choiceCases.push(`    ${pattern.replaceAll(`'*/`, `*'/`)}) echo '${values}' ;;`);
    }
    if (node.argument !== undefined) {
      const values = node.argument.deployment ? '@deployment' : (node.argument.choices ?? []).map(word).join(' ');
      if (values !== '') argumentLines.push(`    '${path}') echo '${values}' ;;`);
    }
  }
  return `# Is $2 a command under the command path $1?
_mcpctl_is_command() {
  case "$1/$2" in
    ${subs.map((s) => `'${s}'`).join('|') || "''"}) return 0 ;;
  esac
  return 1
}

_mcpctl_commands() {
  case "$1" in
${nodes
  .filter((node) => node.subcommands.length > 0)
  .map((node) => `    '${key(node)}') echo '${node.subcommands.map(word).join(' ')}' ;;`)
  .join('\n')}
  esac
}

_mcpctl_options() {
  case "$1" in
${optionLines.join('\n')}
  esac
}

# Does option $2 of the command path $1 take a value?
_mcpctl_takes_value() {
  case "$1/$2" in
    ${valueCases.join('|') || "''"}) return 0 ;;
  esac
  return 1
}

# The values of option $2 of the command path $1 (@deployment: the names of deployments)
_mcpctl_values() {
  case "$1/$2" in
${choiceCases.join('\n')}
  esac
}

# What the arguments of the command path $1 take
_mcpctl_arguments() {
  case "$1" in
${argumentLines.join('\n')}
  esac
}

_mcpctl_deployments() {
  command mcpctl completion "$1" --deployments 2>/dev/null
}

# The words to offer for the command line before the word being completed ($@).
_mcpctl_candidates() {
  local shell="$1" path="" value="" w
  shift
  for w in "$@"; do
    if [ -n "$value" ]; then value=""; continue; fi
    case "$w" in
      -*=*) ;;
      -*) _mcpctl_takes_value "$path" "$w" && value="$w" ;;
      *) _mcpctl_is_command "$path" "$w" && path="\${path:+$path }$w" ;;
    esac
  done
  local values
  if [ -n "$value" ]; then
    values="$(_mcpctl_values "$path" "$value")"
  elif [ "\${_mcpctl_current#-}" != "$_mcpctl_current" ]; then
    values="$(_mcpctl_options "$path")"
  else
    values="$(_mcpctl_commands "$path")"
    [ -n "$values" ] || values="$(_mcpctl_arguments "$path")"
  fi
  if [ "$values" = '@deployment' ]; then
    _mcpctl_deployments "$shell"
  else
    echo "$values"
  fi
}
`;
}

function bashScript(nodes: readonly CompletionNode[], version: string): string {
  return `# bash completion for mcpctl ${version}, written by \`mcpctl completion bash\`.
# Load it in this shell:  source <(mcpctl completion bash)
# Load it in every shell: mcpctl completion bash > ~/.local/share/bash-completion/completions/mcpctl
${sharedHelpers(nodes)}
_mcpctl() {
  local _mcpctl_current="\${COMP_WORDS[COMP_CWORD]}"
  local candidates
  candidates="$(_mcpctl_candidates bash "\${COMP_WORDS[@]:1:COMP_CWORD-1}")"
  # shellcheck disable=SC2207
  COMPREPLY=($(compgen -W "$candidates" -- "$_mcpctl_current"))
}
complete -o default -o nosort -F _mcpctl mcpctl 2>/dev/null || complete -o default -F _mcpctl mcpctl
`;
}

function zshScript(nodes: readonly CompletionNode[], version: string): string {
  return `#compdef mcpctl
# zsh completion for mcpctl ${version}, written by \`mcpctl completion zsh\`.
# Load it in this shell:  source <(mcpctl completion zsh)
# Load it in every shell: mcpctl completion zsh > "\${fpath[1]}/_mcpctl"  (then start a new shell)
${sharedHelpers(nodes)}
_mcpctl() {
  local _mcpctl_current="\${words[CURRENT]}"
  local -a candidates
  candidates=(\${="$(_mcpctl_candidates zsh "\${(@)words[2,CURRENT-1]}")"})
  if (( \${#candidates} )); then
    compadd -Q -- "\${candidates[@]}"
  else
    _files
  fi
}
if [ "\${funcstack[1]:-}" = _mcpctl ]; then
  _mcpctl "$@"
else
  compdef _mcpctl mcpctl
fi
`;
}

function fishScript(nodes: readonly CompletionNode[], version: string): string {
  const [root] = nodes;
  const lines: string[] = [];
  for (const node of nodes) {
    const condition = node === root ? '__fish_use_subcommand' : `__mcpctl_at '${key(node)}'`;
    if (node.subcommands.length > 0) {
      lines.push(`complete -c mcpctl -f -n "${condition}" -a '${node.subcommands.map(word).join(' ')}'`);
    }
    if (node.argument?.deployment === true) {
      lines.push(`complete -c mcpctl -f -n "${condition}" -a '(__mcpctl_deployments)'`);
    } else if (node.argument?.choices !== undefined) {
      lines.push(`complete -c mcpctl -f -n "${condition}" -a '${node.argument.choices.map(word).join(' ')}'`);
    }
    for (const option of node.options) {
      const short = option.flags.find((flag) => /^-[^-]$/.test(flag));
      const long = option.flags.find((flag) => flag.startsWith('--'));
      const names = [
        short === undefined ? '' : `-s ${word(short.slice(1))}`,
        long === undefined ? '' : `-l ${word(long.slice(2))}`,
      ];
      const values =
        option.deployment === true
          ? ` -x -a '(__mcpctl_deployments)'`
          : option.choices !== undefined
            ? ` -x -a '${option.choices.map(word).join(' ')}'`
            : option.takesValue
              ? ' -r'
              : '';
      const where = node === root ? '' : ` -n "${condition}"`;
      lines.push(`complete -c mcpctl${where} ${names.filter(Boolean).join(' ')}${values}`);
    }
  }
  return `# fish completion for mcpctl ${version}, written by \`mcpctl completion fish\`.
# Load it in this shell:  mcpctl completion fish | source
# Load it in every shell: mcpctl completion fish > ~/.config/fish/completions/mcpctl.fish

# Whether the commands on the line so far are exactly $argv (\`engine start\`).
function __mcpctl_at
    set -l path
    for w in (commandline -opc)[2..-1]
        string match -q -- '-*' $w; and continue
        set -l next (string trim -- "$path $w")
        contains -- $next ${nodes
          .slice(1)
          .map((node) => `'${key(node)}'`)
          .join(' ')}; and set path $next
    end
    test "$path" = "$argv[1]"
end

function __mcpctl_deployments
    command -q mcpctl; and command mcpctl completion fish --deployments 2>/dev/null
end

${lines.join('\n')}
`;
}
