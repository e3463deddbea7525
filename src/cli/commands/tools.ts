/**
 * `mcpctl tools <target>`: the tools an MCP server offers, with their arguments. The target is a
 * definition file (served for the command alone), an MCP URL, or a deployment (steps/mcp-target.ts).
 * `--json`: the server's list as it answered it; `-q`: the names alone.
 */
import type { CommandContext } from '../context.js';
import { printTools } from '../render/tool-list.js';
import { listTools, openTarget, terminalWidth } from '../steps/mcp-target.js';
import type { ToolsOptions } from '../specs/mcp.js';

export async function toolsCommand(ctx: CommandContext, target: string, options: ToolsOptions): Promise<void> {
  const session = await openTarget(ctx, target, {
    headers: options.header,
    userId: options.userId,
    timeoutSeconds: options.timeout,
    command: 'tools',
  });
  try {
    const tools = await listTools(ctx, session, options.timeout);
    ctx.out.result({ tools }, (p) => printTools(p, session.label, tools, terminalWidth(ctx)), {
      quiet: () => tools.map((tool) => tool.name),
    });
  } finally {
    await session.close();
  }
}
