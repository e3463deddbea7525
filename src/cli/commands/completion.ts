/**
 * `mcpctl completion bash|zsh|fish`: prints a completion script written from the commander program
 * itself, so every command, option and choice it lists is one the CLI has. With the hidden
 * `--deployments` (what the script runs while a deployment is being completed) it prints the names
 * of the deployments, `<server>.<env>`, one a line: never starting the local engine, and nothing at
 * all when no service answers.
 */
import type { Command, Help, Option } from 'commander';
import type { CommandContext } from '../context.js';
import { completionScript, type CompletionNode, type CompletionOption, type Shell } from '../render/completion.js';
import type { CompletionOptions } from '../specs/completion.js';
import { ENVIRONMENTS } from '../specs/options.js';
import { VERSION } from '../../shared/version.js';

export async function completionCommand(ctx: CommandContext, shell: Shell, options: CompletionOptions): Promise<void> {
  if (options.deployments === true) {
    const names = await deploymentNames(ctx).catch(() => []);
    if (names.length > 0) ctx.out.raw(`${names.join('\n')}\n`);
    return;
  }
  const { createProgram } = await import('../main.js');
  const program = createProgram({ io: ctx.io, signal: ctx.signal }) as unknown as Command;
  ctx.out.raw(completionScript(shell, describeProgram(program), VERSION));
}

/** The program as completion sees it: every visible command, with its options and first argument. */
export function describeProgram(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const visit = (command: Command, path: string[]) => {
    const help: Help = command.createHelp();
    const subcommands = help.visibleCommands(command).filter((sub) => sub.name() !== 'help');
    const first = command.registeredArguments[0];
    const deploymentArgument = first !== undefined && /^deployment/.test(first.name());
    nodes.push({
      path,
      subcommands: subcommands.map((sub) => sub.name()),
      options: help.visibleOptions(command).map(describeOption),
      ...(first === undefined
        ? {}
        : { argument: { deployment: deploymentArgument, ...(first.argChoices ? { choices: first.argChoices } : {}) } }),
    });
    for (const sub of subcommands) visit(sub, [...path, sub.name()]);
  };
  visit(program, []);
  return nodes;
}

function describeOption(option: Option): CompletionOption {
  const described: CompletionOption = {
    flags: [option.short, option.long].filter((flag): flag is string => flag !== undefined),
    takesValue: option.required || option.optional,
  };
  const value = option.flags.split(/\s+/).at(-1) ?? '';
  if (option.argChoices !== undefined) described.choices = option.argChoices;
  // an environment is parsed (prod, stg and dev are accepted too), not chosen: offer the full names
  else if (value === '<environment>') described.choices = [...ENVIRONMENTS];
  // `alerts --deployment <deployment_id>`: its value is a deployment
  if (described.takesValue && /deployment/.test(value)) described.deployment = true;
  return described;
}

/**
 * The names of the deployments of the service this command would use. The local engine is asked
 * only when it already runs: completing a word must not start it.
 */
async function deploymentNames(ctx: CommandContext): Promise<string[]> {
  const { configPath, readConfig } = await import('../config-file.js');
  const { planConnection, connect } = await import('../config.js');
  const plan = planConnection(ctx, await readConfig(configPath(ctx.io.env)));
  if (plan.local) {
    const { findRunningEngine } = await import('../local-engine.js');
    const { homePaths, resolveHome } = await import('../../engine/home.js');
    if ((await findRunningEngine(homePaths(resolveHome(ctx.io.env)), { patienceMs: 2000 })) === undefined) return [];
  }
  const { client } = await connect(ctx);
  try {
    const [servers, deployments] = await Promise.all([client.listServers(), client.listDeployments()]);
    const nameOf = new Map(servers.map((server) => [server.mcp_id, server.name]));
    const names = new Set<string>();
    for (const deployment of deployments) {
      const server = deployment.mcp_id === undefined ? undefined : nameOf.get(deployment.mcp_id);
      if (server !== undefined && deployment.environment !== undefined)
        names.add(`${server}.${deployment.environment}`);
    }
    return [...names].sort();
  } finally {
    await client.close();
  }
}
