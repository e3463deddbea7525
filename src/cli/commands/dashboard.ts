/**
 * `mcpctl dashboard [--no-open]`: the engine's dashboard. Asks the engine for a one-time login code
 * (`POST /v1/dashboard/codes`, with the API key) and prints the page's URL that carries it; on a
 * desktop it also opens that URL in the browser. The code goes in the URL's fragment, which a
 * browser never sends to a server, and works once within a minute, so the API key never reaches
 * the browser's history. `--json` prints `{ url, expires_at }` and opens nothing: the code is for
 * whoever reads the document.
 */
import type { DashboardCode } from '../../api/dashboard.js';
import { withApi } from '../api-errors.js';
import { isCI, type CommandContext } from '../context.js';
import type { DashboardOptions } from '../specs/service.js';

export async function dashboardCommand(ctx: CommandContext, options: DashboardOptions): Promise<void> {
  const answer: DashboardCode = await withApi(ctx, (client) => client.dashboardCode());
  const opener =
    options.open && !ctx.globals.json
      ? browserOpener({ env: ctx.io.env, platform: process.platform, tty: ctx.io.stdout.isTTY === true })
      : undefined;
  if (opener !== undefined) await openDetached(opener, answer.url);
  ctx.out.result(
    { url: answer.url, expires_at: answer.expires_at },
    (p) => {
      p.success(`the dashboard: ${answer.url}`);
      p.line(p.style.dim('the link logs a browser in once, within a minute; run `mcpctl dashboard` again for another'));
      if (opener !== undefined) p.line(p.style.dim('opening it in your browser'));
    },
    { quiet: () => answer.url },
  );
}

export interface OpenerContext {
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
  /** stdout is a terminal: someone is at the desktop */
  tty: boolean;
}

/**
 * The program that opens a URL in the desktop's browser, or undefined where there is no desktop to
 * open it on: output not on a terminal, CI, or a Linux/BSD session without a display (over SSH).
 */
export function browserOpener(context: OpenerContext): { command: string; args: string[] } | undefined {
  const { env, platform } = context;
  if (!context.tty || isCI(env)) return undefined;
  if (platform === 'darwin') return { command: 'open', args: [] };
  // `start` is a command of cmd itself; its first quoted argument is a window title, hence the empty one
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] };
  const display = (env.DISPLAY ?? '') !== '' || (env.WAYLAND_DISPLAY ?? '') !== '';
  return display ? { command: 'xdg-open', args: [] } : undefined;
}

/** Starts the opener and lets it go: whatever happens to it, the URL is printed anyway. */
async function openDetached(opener: { command: string; args: string[] }, url: string): Promise<void> {
  const { spawn } = await import('node:child_process');
  try {
    const child = spawn(opener.command, [...opener.args, url], {
      detached: true,
      stdio: 'ignore',
      windowsHide: true,
      // cmd reads its own command line: the empty title must reach it as written
      windowsVerbatimArguments: opener.command === 'cmd',
    });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no such program: the printed URL is the way in
  }
}
