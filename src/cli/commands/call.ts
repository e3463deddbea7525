/**
 * `mcpctl call <target> <tool> [--arg key=value]… [--json '{…}']`: calls one tool of an MCP server
 * and prints its result as a person reads it (`--json`: the result as the server answered it). The
 * arguments are typed by the tool's input schema (steps/tool-arguments.ts). A result the tool marks
 * as an error exits 1, so a script can tell it from a success; a call that never reached the tool
 * exits with the code of what stopped it.
 */
import { EXIT, ExitError, UserError } from '../../shared/errors.js';
import type { CommandContext } from '../context.js';
import { printToolResult, resultLines, type ToolResultView } from '../render/tool-result.js';
import { serviceText } from '../render/service-text.js';
import { listTools, openTarget, type McpSession } from '../steps/mcp-target.js';
import { missingArguments, toolArguments, type ArgumentSchema } from '../steps/tool-arguments.js';
import type { CallOptions } from '../specs/mcp.js';

export async function callCommand(
  ctx: CommandContext,
  target: string,
  tool: string,
  options: CallOptions,
): Promise<void> {
  const session = await openTarget(ctx, target, {
    headers: options.header,
    userId: options.userId,
    timeoutSeconds: options.timeout,
    command: 'call',
  });
  let result: ToolResultView;
  try {
    const values = await argumentsFor(ctx, session, tool, options);
    result = await session.request((client) =>
      client.callTool(
        { name: tool, arguments: values },
        { timeout: Math.round(options.timeout * 1000), signal: ctx.signal },
      ),
    );
  } finally {
    await session.close();
  }
  ctx.out.result(result, (p) => printToolResult(p, result), { quiet: () => resultLines(result) });
  if (result.isError === true) {
    ctx.out.error(`${serviceText(tool)} of ${session.label} answered with an error (the result above)`);
    throw new ExitError(EXIT.internal);
  }
}

/** The call's arguments, checked against the tool's input schema before anything is sent. */
async function argumentsFor(
  ctx: CommandContext,
  session: McpSession,
  tool: string,
  options: CallOptions,
): Promise<Record<string, unknown>> {
  const tools = await listTools(ctx, session, options.timeout);
  const found = tools.find((t) => t.name === tool);
  if (found === undefined) {
    throw new UserError(`${session.label} has no tool named ${serviceText(tool)}`, {
      code: 'unknown_tool',
      problems:
        tools.length === 0
          ? [{ message: 'it offers no tools' }]
          : tools.map((t) => ({ message: t.title === undefined ? t.name : `${t.name}  (${t.title})` })),
      hint: tools.length === 0 ? undefined : 'call one of the tools above; `mcpctl tools` shows their arguments',
    });
  }
  const schema = found.inputSchema as ArgumentSchema | undefined;
  const args = toolArguments(schema, options.arg ?? [], options.json);
  const hint = `\`mcpctl tools ${session.label}\` shows the arguments of ${tool}`;
  if (args.problems.length > 0) {
    throw new UserError(`the arguments of ${tool} are not what it takes`, { problems: args.problems, hint });
  }
  const missing = missingArguments(schema, args.values);
  if (missing.length > 0) {
    throw new UserError(`${tool} needs ${missing.join(', ')}`, {
      hint: `add ${missing.map((key) => `--arg ${key}=…`).join(' ')}; ${hint}`,
    });
  }
  if (args.unknown.length > 0) ctx.out.warn(`${tool} does not list ${args.unknown.join(', ')} among its arguments`);
  return args.values;
}
