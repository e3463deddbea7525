/**
 * The request log of `mcpctl dev`: a line per MCP request, readable on a terminal, JSON on stderr
 * with --json, stderr only with --stdio. What a client sent (a tool name, arguments) and what the
 * server answered are shown with their control characters as text: anyone who can call the server
 * writes into this log.
 */
import type { CommandContext } from '../context.js';
import type { LogEntry, RuntimeLogger } from '../../runtime/server/logger.js';
import { formatMs, formatTime } from '../render/format.js';
import { jsonText, serviceText } from '../render/service-text.js';

type Style = CommandContext['out']['style'];

export function createDevLogger(ctx: CommandContext, stdio: boolean): RuntimeLogger {
  return {
    debug: ctx.globals.debug,
    log(entry: LogEntry) {
      if (entry.level === 'debug' && !ctx.globals.debug) return;
      if (ctx.out.json) {
        ctx.out.stderr(`${jsonText({ time: new Date().toISOString(), ...entry })}\n`);
        return;
      }
      if (ctx.out.quiet && entry.level === 'info') return;
      const line = formatEntry(entry, stdio ? ctx.out.errStyle : ctx.out.style);
      if (stdio) ctx.out.stderr(`${line}\n`);
      else ctx.out.raw(`${line}\n`);
    },
  };
}

/** One request as a line (and its params and result below it with --debug). */
export function formatEntry(entry: LogEntry, style: Style): string {
  const time = formatTime(new Date().toISOString(), { date: false });
  const text = (value: unknown) => serviceText(String(value));
  if (entry.event !== 'request') {
    const detail = typeof entry.error === 'string' ? `: ${text(entry.error)}` : '';
    const event = text(entry.event);
    return `${style.dim(time)}  ${entry.level === 'error' ? style.red(event) : style.yellow(event)}${detail}`;
  }
  const status = typeof entry.status === 'number' ? entry.status : 0;
  const rpc = typeof entry.rpc === 'string' ? entry.rpc : `${String(entry.method)} ${String(entry.path)}`;
  const what = text(typeof entry.target === 'string' ? `${rpc} ${entry.target}` : rpc);
  const statusText = status >= 400 ? style.red(String(status)) : String(status);
  const ms = typeof entry.duration_ms === 'number' ? entry.duration_ms : 0;
  const parts = [style.dim(time), what, statusText, style.dim(formatMs(ms) ?? '')];
  if (typeof entry.user_id === 'string') parts.push(style.dim(`user=${text(entry.user_id)}`));
  if (typeof entry.error === 'string') parts.push(style.red(text(entry.error)));
  else if (entry.is_error === true) parts.push(style.red('error result'));
  let line = parts.join('  ');
  if (entry.params !== undefined) line += `\n    params ${jsonText(entry.params)}`;
  if (entry.result !== undefined) line += `\n    result ${jsonText(entry.result)}`;
  return line;
}
