/**
 * A deploy that replaces a running deployment says so, and one whose definition comes from another
 * file than the running one's asks first: two definitions that happen to share a server name must
 * not silently take each other's place. On a terminal a question; elsewhere a refusal unless
 * `--replace` is given.
 */
import { resolve } from 'node:path';
import type { ApiClient } from '../../api/client.js';
import type { Deployment, Environment } from '../../api/operations.js';
import { UserError } from '../../shared/errors.js';
import type { CommandContext } from '../context.js';
import { askConfirm, canPrompt } from '../prompt.js';
import { formatAge } from '../render/format.js';

/** The running deployment a deploy takes the place of, as the output names it. */
export interface Replaced {
  deployment_id: string;
  mcp_id?: string | undefined;
  server: string;
  environment: Environment;
  /** when it was made, when the service says */
  created_at?: string | undefined;
  /** how long ago that was, in whole seconds */
  age_seconds?: number | undefined;
  /** the definition file it was built from, as that build named it, when the service says */
  file?: string | undefined;
}

export interface ReplacementCheck {
  server: string;
  environment: Environment;
  /** the server about to be deployed */
  mcpId: string;
  /** the definition file it is built from, absolute; undefined: the service is asked */
  file?: string | undefined;
  /** --replace */
  replace: boolean;
  now?: number;
}

/**
 * The running deployment (deployed or deploying) of the same server name in the same environment,
 * if any; asks or refuses when the new definition comes from another file than that one's. What
 * the service cannot say (an older service without the definition endpoint) counts as unknown,
 * never as different.
 */
export async function checkReplacement(
  ctx: CommandContext,
  client: ApiClient,
  check: ReplacementCheck,
): Promise<Replaced | undefined> {
  const running = await client.listDeployments({
    name: check.server,
    environment: check.environment,
    status: 'deployed,deploying',
  });
  const current = running.find((d) => d.environment === check.environment);
  if (current === undefined) return undefined;
  const [oldFile, newFile] = await Promise.all([
    current.mcp_id === undefined ? undefined : fileOf(client, current.mcp_id),
    check.file ?? fileOf(client, check.mcpId),
  ]);
  const replaced: Replaced = {
    deployment_id: current.deployment_id,
    mcp_id: current.mcp_id,
    server: check.server,
    environment: check.environment,
    ...(current.created_at === undefined ? {} : { created_at: current.created_at }),
    age_seconds: ageOf(current, check.now ?? Date.now()),
    ...(oldFile === undefined ? {} : { file: oldFile }),
  };
  // the same server (a rebuild of an unchanged definition) is no surprise, whatever the file
  if (current.mcp_id === check.mcpId || oldFile === undefined || newFile === undefined) return replaced;
  if (resolve(ctx.io.cwd, oldFile) === resolve(ctx.io.cwd, newFile)) return replaced;
  await confirmOtherFile(ctx, replaced, oldFile, newFile, check.replace);
  return replaced;
}

async function confirmOtherFile(
  ctx: CommandContext,
  replaced: Replaced,
  oldFile: string,
  newFile: string,
  replace: boolean,
): Promise<void> {
  if (replace) return;
  const what = `${replaced.server} in ${replaced.environment} runs ${replaced.deployment_id}, built from ${oldFile}; this definition is ${newFile}`;
  if (!canPrompt(ctx)) {
    throw new UserError(`${what}: deploying it would replace a server defined elsewhere`, {
      code: 'replace_refused',
      hint: `pass --replace to replace ${replaced.deployment_id}, or give this server another name`,
    });
  }
  const yes = await askConfirm(ctx, {
    message: `${what}. Replace ${replaced.deployment_id}?`,
    flag: '--replace',
    default: false,
  });
  if (!yes) {
    throw new UserError('nothing was deployed', {
      code: 'replace_refused',
      hint: `give this server another name, or pass --replace`,
    });
  }
}

async function fileOf(client: ApiClient, mcpId: string): Promise<string | undefined> {
  try {
    return (await client.serverSource(mcpId)).file;
  } catch {
    // an older service, or a server it no longer has: the file is unknown
    return undefined;
  }
}

function ageOf(d: Deployment, now: number): number | undefined {
  const made = Date.parse(d.created_at ?? '');
  return Number.isNaN(made) ? undefined : Math.max(0, Math.round((now - made) / 1000));
}

/** `replaces deploy_… of notes, 12 min old` */
export function describeReplaced(replaced: Replaced, now: number = Date.now()): string {
  const made = formatAge(replaced.created_at, now);
  const age = made === undefined ? '' : `, ${made} old`;
  const from = replaced.file === undefined ? '' : ` (from ${replaced.file})`;
  return `replaces ${replaced.deployment_id} of ${replaced.server}${from}${age}`;
}
