/**
 * Which deployment a command is about, from what the user typed: a deployment id, the stable name
 * `<server>.<env>` (any case; `prod`, `stg` and `dev` for the environments), the server name alone,
 * or a name seen in one of the deployment's URLs (the staging `stg-…` name, a `*.localhost` host, a
 * domain, or the URL itself). With nothing typed, the definition file of the folder (or `--file`)
 * names the server. Several candidates are offered in a picker on a terminal and listed in an
 * error elsewhere, as a pipeline must never act on a guess.
 */
import type { ApiClient } from '../../api/client.js';
import { DEPLOYMENT_ID_PATTERN, MCP_ID_PATTERN, type Deployment, type Environment } from '../../api/operations.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { askChoice, canPrompt } from '../prompt.js';
import { stableNameOf } from '../render/deployment.js';
import { environmentOf } from '../specs/options.js';
import { definitionPath } from './definition-path.js';

export { stableNameOf };

export interface ResolveDeploymentOptions {
  /** the definition file that names the server when no value is given (default: ./server.yaml) */
  file?: string | undefined;
  /** true when a person can pick among several candidates */
  interactive: boolean;
  /** the folder relative paths are read from (default: the process's) */
  cwd?: string;
  /** the command the candidates are listed with in an error (`mcpctl status …`) */
  command?: string;
  /** asks the person to pick one; default: a select prompt on the process's terminal */
  choose?: (candidates: Candidate[]) => Promise<Deployment>;
  /** told which file and server were used when the user named neither */
  note?: (text: string) => void;
}

/** A deployment that what was typed may mean, with the name it is best called by. */
export interface Candidate {
  name: string;
  deployment: Deployment;
}

/** `http://host/d/<name>/mcp` → `<name>` */
function pathName(url: string): string | undefined {
  const match = /\/d\/([^/?#]+)/.exec(url);
  return match?.[1] === undefined ? undefined : decodeURIComponent(match[1]).toLowerCase();
}

function hostName(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Every name a deployment answers to, in lower case. */
export function namesOf(deployment: Deployment, serverName: string | undefined): Set<string> {
  const names = new Set<string>([deployment.deployment_id.toLowerCase()]);
  const own = pathName(deployment.url);
  if (own !== undefined) names.add(own);
  for (const url of deployment.stable_urls ?? []) {
    const path = pathName(url);
    const host = hostName(url);
    if (path !== undefined) names.add(path);
    // the engine's own address names every deployment: only a host that is the deployment's counts
    if (path === undefined && host !== undefined) names.add(host);
  }
  if (deployment.domain !== undefined && deployment.domain !== null) names.add(deployment.domain.toLowerCase());
  const server = serverName?.toLowerCase() ?? stableNameOf(deployment)?.replace(/\.[a-z]+$/, '');
  if (server !== undefined) {
    names.add(server);
    if (deployment.environment !== undefined) names.add(`${server}.${deployment.environment}`);
  }
  return names;
}

/**
 * What was typed, as the names compare: lower case, an environment alias written out
 * (`notes.prod` → `notes.production`), a URL reduced to the name in it.
 */
export function normalizeName(value: string): string {
  let name = value.trim().toLowerCase();
  if (/^https?:\/\//.test(name)) name = pathName(name) ?? hostName(name) ?? name;
  name = name.replace(/\.localhost$/, '');
  const dot = name.lastIndexOf('.');
  if (dot > 0) {
    const environment = environmentOf(name.slice(dot + 1));
    if (environment !== undefined) name = `${name.slice(0, dot)}.${environment}`;
  }
  return name;
}

const running = (d: Deployment) => d.status === 'deployed' || d.status === 'deploying';

/**
 * The deployments a name may mean, one per stable name: its running one (deployed or deploying)
 * before stopped or failed ones, the newest first. `deployments` is newest first, as the service lists them.
 */
export function candidatesFor(
  deployments: readonly Deployment[],
  wanted: string,
  serverNames: ReadonlyMap<string, string> = new Map(),
): Candidate[] {
  const best = new Map<string, Deployment>();
  for (const deployment of deployments) {
    const server = deployment.mcp_id === undefined ? undefined : serverNames.get(deployment.mcp_id);
    if (!namesOf(deployment, server).has(wanted)) continue;
    const name = stableNameOf(deployment) ?? stableFromServer(deployment, server) ?? deployment.deployment_id;
    const held = best.get(name);
    if (held === undefined || (!running(held) && running(deployment))) best.set(name, deployment);
  }
  return [...best].map(([name, deployment]) => ({ name, deployment }));
}

function stableFromServer(deployment: Deployment, server: string | undefined): string | undefined {
  return server === undefined || deployment.environment === undefined
    ? undefined
    : `${server.toLowerCase()}.${deployment.environment}`;
}

/**
 * The deployment `value` names (an id, `<server>.<env>`, a server name, or a name of its URLs), or
 * with no value the one of the definition file's server in the file's default environment.
 * Throws a UserError (exit 2) when nothing matches, or when several do and no one can pick.
 */
export async function resolveDeployment(
  client: ApiClient,
  value: string | undefined,
  options: ResolveDeploymentOptions,
): Promise<Deployment> {
  if (value !== undefined && DEPLOYMENT_ID_PATTERN.test(value.trim())) {
    return (await client.status(value.trim())).deployment!;
  }
  if (value !== undefined) refuseServerId(value.trim());
  const all = await client.listDeployments();
  // a service that does not give stable URLs: the server names come from its list of servers
  const names = all.every((d) => d.stable_urls !== undefined && d.stable_urls.length > 0)
    ? new Map<string, string>()
    : new Map((await client.listServers()).map((s) => [s.mcp_id, s.name]));
  let candidates: Candidate[];
  let wanted: string;
  if (value === undefined) {
    const fromFile = await fileTarget(options);
    wanted = `${fromFile.server.toLowerCase()}.${fromFile.environment}`;
    candidates = candidatesFor(all, wanted, names);
    // none in the file's default environment: the server's deployments in any other one
    if (candidates.length === 0) {
      candidates = candidatesFor(all, fromFile.server.toLowerCase(), names);
      if (candidates.length > 0)
        options.note?.(`${wanted} has no deployment; ${fromFile.server} is deployed elsewhere`);
    }
  } else {
    wanted = normalizeName(value);
    if (wanted === '') throw new UserError('the deployment name is empty', { hint: HINT });
    candidates = candidatesFor(all, wanted, names);
  }
  const [first] = candidates;
  if (first === undefined) {
    throw new UserError(`no deployment is named ${wanted}`, {
      code: 'not_found',
      hint: `\`mcpctl ls\` lists the deployments and their names (${HINT})`,
    });
  }
  if (candidates.length === 1) return first.deployment;
  if (!options.interactive) throw ambiguous(wanted, candidates, options.command ?? 'status');
  return (options.choose ?? chooseOnTerminal)(candidates);
}

/** A server (mcp_…) id where a deployment is wanted: a server may have several, in several environments. */
function refuseServerId(value: string): void {
  if (!MCP_ID_PATTERN.test(value)) return;
  throw new UserError(`not a deployment: ${value}`, {
    hint: `that is a server id; \`mcpctl ls --server ${value}\` lists its deployments, each with its <server>.<env> name`,
  });
}

const HINT = 'a deploy_… id, <server>.<env> such as notes.production, or the server name';

function ambiguous(wanted: string, candidates: readonly Candidate[], command: string): UserError {
  return new UserError(`${wanted} names ${candidates.length} deployments; say which one`, {
    code: 'ambiguous',
    exitCode: EXIT.usage,
    problems: candidates.map((c) => ({ message: `mcpctl ${command} ${c.name}   (${describe(c.deployment)})` })),
    hint: 'run one of the commands above',
  });
}

function describe(d: Deployment): string {
  return `${d.deployment_id}, ${d.status}`;
}

async function chooseOnTerminal(candidates: Candidate[]): Promise<Deployment> {
  const { select } = await import('@inquirer/prompts');
  return select({
    message: 'Which deployment?',
    choices: candidates.map((c) => ({ value: c.deployment, name: `${c.name}  ${describe(c.deployment)}` })),
  });
}

/** The server the definition file names, and the environment its deploy section picks. */
async function fileTarget(options: ResolveDeploymentOptions): Promise<{ server: string; environment: Environment }> {
  const cwd = options.cwd ?? process.cwd();
  const { path, shown } = await definitionPath(cwd, options.file, { purpose: 'to name the deployment' });
  const { loadDefinition } = await import('../../definition/load.js');
  const { definition } = await loadDefinition(path, { cwd });
  const environment = definition.deploy?.environment ?? 'development';
  if (options.file === undefined) options.note?.(`the deployment of ${definition.name}, as ${shown} names it`);
  return { server: definition.name, environment };
}

/**
 * The id of the deployment a command's argument names, for the commands that send it in their
 * requests: an id is taken as typed, without a request; anything else is looked up.
 */
export async function deploymentIdOf(
  ctx: CommandContext,
  value: string | undefined,
  options: { file?: string | undefined; command: string },
): Promise<string> {
  if (value !== undefined && DEPLOYMENT_ID_PATTERN.test(value.trim())) return value.trim();
  if (value !== undefined) refuseServerId(value.trim());
  const deployment = await withApi(ctx, (client) =>
    resolveDeployment(client, value, deploymentTargetOptions(ctx, options)),
  );
  return deployment.deployment_id;
}

/** The options of resolveDeployment for a command: the working folder, and a picker where one can be shown. */
export function deploymentTargetOptions(
  ctx: CommandContext,
  options: { file?: string | undefined; command: string },
): ResolveDeploymentOptions {
  return {
    file: options.file,
    command: options.command,
    cwd: ctx.io.cwd,
    interactive: canPrompt(ctx),
    note: (text) => ctx.out.notice(text),
    choose: async (candidates) => {
      const picked = await askChoice(ctx, {
        message: 'Which deployment?',
        flag: 'a deployment name',
        choices: candidates.map((c) => ({
          value: c.deployment.deployment_id,
          name: `${c.name}  ${describe(c.deployment)}`,
        })),
      });
      return candidates.find((c) => c.deployment.deployment_id === picked)!.deployment;
    },
  };
}
