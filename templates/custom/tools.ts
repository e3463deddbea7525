/**
 * The functions behind the tools of server.yaml. Each receives the tool's arguments (already
 * checked against its inputSchema) and a context, and returns:
 *  - a string: the text of the answer;
 *  - any other JSON value: sent as JSON text, and as structured content when it is an object;
 *  - a full MCP tool result ({ content: [...], isError?: boolean }).
 * Throwing an Error answers the call with an error result carrying its message.
 *
 * Keep to TypeScript that only adds types (no enums or namespaces), so the file compiles as is.
 */

/** What every tool function receives besides its arguments. */
export interface ToolContext {
  /** the name of the tool being called */
  tool: string;
  /** the caller, when the client sends X-MCP-User-Id (the test agent sends its user_id) */
  user: { id: string | undefined };
  server: { name: string; version: string };
  /** aborted when the call is cancelled or times out: pass it to fetch() and the like */
  signal: AbortSignal;
}

export function __TOOL_EXPORT__(args: { title: string; max_length?: number }): string {
  const slug = args.title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const max = args.max_length ?? 60;
  return slug.length <= max ? slug : slug.slice(0, max).replace(/-[^-]*$/, '') || slug.slice(0, max);
}

export function roll_dice(args: { dice: string }): { dice: string; rolls: number[]; total: number } {
  const match = /^(\d+)d(\d+)$/.exec(args.dice);
  if (match === null) throw new Error(`"${args.dice}" is not NdM dice notation, such as 2d6`);
  const count = Number(match[1]);
  const sides = Number(match[2]);
  const rolls = Array.from({ length: count }, () => 1 + Math.floor(Math.random() * sides));
  return { dice: args.dice, rolls, total: rolls.reduce((sum, roll) => sum + roll, 0) };
}

const TASKS: Record<string, string[]> = {
  alice: ['Review the release checklist', 'Write the upgrade guide'],
  bob: ['Rotate the staging credentials'],
};

export async function myTasks(args: { limit?: number }, context: ToolContext): Promise<string> {
  const user = context.user.id;
  if (user === undefined) throw new Error('no user id: send the X-MCP-User-Id header to see your tasks');
  const tasks = (TASKS[user] ?? []).slice(0, args.limit);
  if (tasks.length === 0) return `${user} has no open tasks.`;
  return [`Open tasks of ${user}:`, ...tasks.map((task) => `- ${task}`)].join('\n');
}
