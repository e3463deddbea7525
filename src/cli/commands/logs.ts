/**
 * `mcpctl logs <deployment_id> [--follow]`: the deployment's log lines (engine events, instance
 * output, and in development every MCP request). With --follow it keeps printing new lines until
 * Ctrl-C, which ends it normally. With --json: one document `{ lines }`, or with --follow one
 * JSON line per log line (NDJSON), the only way a stream can be machine-readable. What an instance
 * or a client put in a line (a tool name with escape sequences) is printed as visible text.
 */
import type { LogLine } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { UserError } from '../../shared/errors.js';
import type { Output } from '../output.js';
import { serviceText } from '../render/service-text.js';
import { requireDeploymentId } from '../steps/deployment-id.js';
import type { LogsOptions } from '../specs/service.js';

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `--since` as an ISO time: durations count back from `now`. */
export function parseSince(value: string, now: number = Date.now()): string {
  const duration = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(value.trim());
  if (duration !== null) return new Date(now - Number(duration[1]) * UNITS[duration[2]!]! * 1000).toISOString();
  const time = Date.parse(value);
  if (Number.isNaN(time)) {
    throw new UserError(`--since ${value} is neither a time nor a duration`, {
      hint: 'use a duration such as 10m or 2h, or a time such as 2026-01-31T12:00:00Z',
    });
  }
  return new Date(time).toISOString();
}

/** `12:03:04.120 INFO  i1  message  req_…` */
export function formatLogLine(out: Output, line: LogLine): string {
  const s = out.style;
  const time = serviceText(line.time.length >= 23 ? line.time.slice(11, 23) : line.time);
  const level = serviceText(line.level.toUpperCase().padEnd(5));
  const levelText =
    line.level === 'error'
      ? s.red(level)
      : line.level === 'warn'
        ? s.yellow(level)
        : line.level === 'debug'
          ? s.dim(level)
          : s.cyan(level);
  const instance = line.instance === undefined ? '' : `${s.magenta(serviceText(line.instance))}  `;
  const request = line.request_id === undefined ? '' : `  ${s.dim(serviceText(line.request_id))}`;
  return `${s.dim(time)} ${levelText} ${instance}${serviceText(line.message)}${request}\n`;
}

export async function logsCommand(ctx: CommandContext, deploymentId: string, options: LogsOptions): Promise<void> {
  requireDeploymentId(deploymentId);
  const since = options.since === undefined ? undefined : parseSince(options.since);
  const write = (line: LogLine) => (ctx.out.json ? ctx.out.jsonLine(line) : ctx.out.raw(formatLogLine(ctx.out, line)));
  await withApi(ctx, async (client) => {
    if (options.follow === true) {
      // The stream starts with the recent lines, then new ones as they come.
      await client.followLogs(deploymentId, write, ctx.signal, {
        ...(since === undefined ? {} : { since }),
        ...(options.lines === undefined ? {} : { limit: options.lines }),
      });
      if (!ctx.signal.aborted) ctx.out.notice('the log stream ended');
      return;
    }
    const lines = await client.logs(deploymentId, {
      ...(since === undefined ? {} : { since }),
      ...(options.lines === undefined ? {} : { limit: options.lines }),
    });
    ctx.out.result(
      { lines },
      (p) => {
        if (lines.length === 0) p.line(since === undefined ? 'No log lines yet.' : 'No log lines since then.');
        for (const line of lines) ctx.out.raw(formatLogLine(ctx.out, line));
      },
      { always: true },
    );
  });
}
