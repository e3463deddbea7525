/**
 * `mcpctl logs [deployment] [--follow]`: the deployment's log lines (engine events, instance
 * output, and in development every MCP request). With --follow it keeps printing new lines until
 * the deployment stops, fails or is replaced (then a last line says which), or until Ctrl-C, which
 * ends it normally. --level, --grep and --instance are asked of the service and applied here too,
 * so a service that ignores them still shows only what was asked. With --json: one document
 * `{ lines }`, or with --follow one JSON line per log line (NDJSON), the only way a stream can be
 * machine-readable. What an instance or a client put in a line (a tool name with escape
 * sequences) is printed as visible text.
 */
import type { Deployment, LogLine } from '../../api/operations.js';
import { compileLogFilter, LogFilterError } from '../../shared/log-filter.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { UserError } from '../../shared/errors.js';
import type { Output } from '../output.js';
import { datesNeeded, formatTime, isToday } from '../render/format.js';
import { serviceText } from '../render/service-text.js';
import { deploymentIdOf } from '../steps/deployment-target.js';
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

/**
 * `12:03:04.120 INFO  i1  message  req_…` in local time, with the date first (`2026-01-31 12:03:04.120`)
 * when asked: the one time form, with milliseconds, as lines within a second keep their order.
 */
export function formatLogLine(out: Output, line: LogLine, withDate = false): string {
  const s = out.style;
  const time = serviceText(formatTime(line.time, { date: withDate, ms: true }));
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

/** Whether lines show their dates: when any is not from today (local time, as shown), so when they span days. */
export function logDatesNeeded(lines: readonly LogLine[], now: number = Date.now()): boolean {
  return datesNeeded(
    lines.map((line) => line.time),
    now,
  );
}

/** The last line of a follow that ended by itself: why nothing more will come. */
export function describeLogEnd(id: string, deployment: Deployment | undefined): string {
  switch (deployment?.status) {
    case 'stopped':
      return `the log ends: ${id} stopped${deployment.reason === undefined ? '' : ` (${deployment.reason})`}`;
    case 'failed':
      return `the log ends: ${id} failed${deployment.reason === undefined ? '' : `: ${deployment.reason}`}`;
    default:
      return 'the log stream ended';
  }
}

export async function logsCommand(
  ctx: CommandContext,
  target: string | undefined,
  options: LogsOptions,
): Promise<void> {
  const deploymentId = await deploymentIdOf(ctx, target, { file: options.file, command: 'logs' });
  const since = options.since === undefined ? undefined : parseSince(options.since);
  const wanted = { level: options.level, grep: options.grep, instance: options.instance };
  const keep = await compileLogFilter(wanted).catch((error: unknown) => {
    if (!(error instanceof LogFilterError)) throw error;
    throw new UserError(`--grep ${options.grep ?? ''} ${error.message}`, {
      hint: 'pass a text, or an expression between slashes such as /timeout|refused/i',
    });
  });
  const query = { since, limit: options.lines, ...wanted };
  await withApi(ctx, async (client) => {
    if (options.follow === true) {
      // The stream starts with the recent lines, then new ones as they come; dates appear from a
      // line that is not from today or not from the first line's day on.
      let first: number | undefined;
      let withDate = false;
      const write = (line: LogLine) => {
        if (keep !== undefined && !keep(line)) return;
        if (ctx.out.json) return ctx.out.jsonLine(line);
        first ??= Date.parse(line.time);
        withDate ||= !isToday(line.time) || (Number.isFinite(first) && !isToday(line.time, first));
        ctx.out.raw(formatLogLine(ctx.out, line, withDate));
      };
      await client.followLogs(deploymentId, write, ctx.signal, query);
      if (ctx.signal.aborted) return;
      const ended = await client.status(deploymentId).then(
        (answer) => answer.deployment,
        () => undefined,
      );
      ctx.out.notice(describeLogEnd(deploymentId, ended));
      return;
    }
    const read = await client.logs(deploymentId, query);
    const lines = keep === undefined ? read : read.filter(keep);
    const filtered = keep !== undefined;
    ctx.out.result(
      { lines },
      (p) => {
        if (lines.length === 0)
          p.line(
            filtered ? 'No log lines match.' : since === undefined ? 'No log lines yet.' : 'No log lines since then.',
          );
        const withDate = logDatesNeeded(lines);
        for (const line of lines) ctx.out.raw(formatLogLine(ctx.out, line, withDate));
      },
      { always: true },
    );
  });
}
