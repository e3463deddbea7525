/**
 * `mcpctl engine start|stop|status|logs`: the background engine of this MCPCTL_HOME.
 */
import { open, readFile, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { CommandContext } from '../context.js';
import { requestTimeoutMs } from '../request-timeout.js';
import { EXIT, ExitError, UserError } from '../../shared/errors.js';
import { SETTINGS } from '../../shared/settings.js';
import type { Printer } from '../output.js';
import { formatSeconds, formatTime } from '../render/format.js';
import type { EngineStatus } from '../local-engine.js';
import type { UnreadableHealth } from '../../engine/engine-lock.js';
import type { EngineLogsOptions } from '../specs/engine.js';

async function pathsOf(ctx: CommandContext) {
  const { homePaths, resolveHome } = await import('../../engine/home.js');
  return homePaths(resolveHome(ctx.io.env, ctx.io.cwd));
}

export async function engineStartCommand(ctx: CommandContext): Promise<void> {
  const { startBackgroundEngine } = await import('../local-engine.js');
  const paths = await pathsOf(ctx);
  const progress = await ctx.out.progress('starting the local engine…');
  let result;
  try {
    result = await startBackgroundEngine(
      paths,
      { ...ctx.io.env, [SETTINGS.home.env]: paths.home },
      { patienceMs: requestTimeoutMs(ctx) },
    );
  } catch (error) {
    progress.fail('the local engine did not start');
    throw error;
  }
  progress.stop();
  const { state, started } = result;
  const data = {
    running: true,
    started,
    url: state.url,
    pid: state.pid,
    version: state.version,
    home: paths.home,
    log_file: paths.logFile,
  };
  ctx.out.result(
    data,
    (p) => {
      p.success(
        started
          ? `the local engine is running at ${state.url}`
          : `the local engine was already running at ${state.url}`,
      );
      p.fields([
        ['pid', state.pid],
        ['version', state.version],
        ['state', paths.home],
      ]);
      p.next('stop it with `mcpctl engine stop`');
    },
    { quiet: () => state.url },
  );
}

export async function engineStopCommand(ctx: CommandContext): Promise<void> {
  const { stopLocalEngine } = await import('../local-engine.js');
  const paths = await pathsOf(ctx);
  const progress = await ctx.out.progress('stopping the local engine…');
  const result = await stopLocalEngine(paths);
  progress.stop();
  if (result.forced === true) ctx.out.warn(`the engine (pid ${result.pid}) did not stop in time and was killed`);
  ctx.out.result(
    { stopped: result.stopped, ...(result.pid === undefined ? {} : { pid: result.pid }), home: paths.home },
    (p) => {
      if (result.stopped)
        p.success(`stopped the local engine (pid ${result.pid}); its deployments come back at the next start`);
      else p.line('the local engine was not running');
    },
  );
}

export async function engineStatusCommand(ctx: CommandContext): Promise<void> {
  const { localEngineStatus } = await import('../local-engine.js');
  const paths = await pathsOf(ctx);
  const status = await localEngineStatus(paths, {
    patienceMs: requestTimeoutMs(ctx),
    notice: (text) => ctx.out.notice(text),
  });
  ctx.out.result(
    status,
    (p) => {
      if (!status.running) {
        p.line('the local engine is not running');
        p.fields([['state', status.home]]);
        p.next('start it with `mcpctl engine start` (any command that needs it starts it too)');
        return;
      }
      p.success(`the local engine is running at ${status.url}`);
      p.fields(runningEngineFields(status));
      renderUnreadable(p, status.unreadable_records ?? []);
    },
    { quiet: () => (status.running ? 'running' : 'stopped') },
  );
  // a script asks `mcpctl engine status || mcpctl engine start`: not running is not success
  if (!status.running) throw new ExitError(EXIT.transient);
}

/** The fields `mcpctl engine status` shows for a running engine. */
export function runningEngineFields(status: EngineStatus): [string, string | number | undefined][] {
  return [
    ['https', status.https_url],
    ['pid', status.pid],
    ['version', status.version],
    ['uptime', formatSeconds(Math.floor(status.uptime_seconds ?? 0))],
    ['mode', status.mode === 'foreground' ? 'foreground (mcpctl serve)' : 'background'],
    ['runner', status.runner ?? 'process'],
    ['swarm', status.swarm],
    ['state', status.home],
    ['log', status.log_file],
    ...(status.warm_pool === undefined ? [] : [['warm processes', warmPoolText(status.warm_pool)] as [string, string]]),
    ...(status.isolation === undefined ? [] : [['isolation', isolationText(status.isolation)] as [string, string]]),
  ];
}

/**
 * The store's files the engine could not read: their deployments and servers are missing from
 * every list until each is fixed (or removed) and moved back, and the engine restarted.
 */
function renderUnreadable(p: Printer, files: UnreadableHealth[]): void {
  if (files.length === 0) return;
  p.line();
  const howMany = files.length === 1 ? '1 record' : `${files.length} records`;
  p.warn(`${howMany} could not be read and ${files.length === 1 ? 'was' : 'were'} moved aside:`);
  for (const f of files) {
    const when = f.moved_at === undefined ? '' : ` (moved ${formatTime(f.moved_at)})`;
    p.line(`  ${f.kind}${when}: ${f.file}`);
    if (f.reason !== undefined) p.line(`    ${p.style.dim(`why: ${f.reason}`)}`);
    if (f.restore_to !== undefined) p.line(`    ${p.style.dim(`goes back to: ${f.restore_to}`)}`);
  }
  p.next(
    'to restore one: fix the file (or delete it to give it up), move it back where it goes, and restart the engine (`mcpctl engine stop`, then any command)',
  );
}

/** `bubblewrap sandbox, cgroup v1 limits`, or what is missing and what to do instead. */
export function isolationText(isolation: NonNullable<EngineStatus['isolation']>): string {
  const sandbox = isolation.sandbox === 'none' ? 'no sandbox' : `${isolation.sandbox} sandbox`;
  const limits = isolation.limits === 'node heap' ? 'memory limited by Node’s heap only' : `${isolation.limits} limits`;
  const missing =
    isolation.sandbox === 'none'
      ? ' — servers can read what the engine’s user can; use --runner docker for less trusted ones'
      : '';
  const why = isolation.reasons.length === 0 ? '' : ` (${isolation.reasons.join('; ')})`;
  return `${sandbox}, ${limits}${why}${missing}`;
}

export async function engineLogsCommand(ctx: CommandContext, options: EngineLogsOptions): Promise<void> {
  const paths = await pathsOf(ctx);
  const count = options.lines ?? 200;
  const text = await readFile(paths.logFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined && options.follow !== true) {
    throw new UserError(`no engine log yet at ${paths.logFile}`, { hint: 'the log starts with `mcpctl engine start`' });
  }
  const lines = (text ?? '')
    .split('\n')
    .filter((line) => line !== '')
    .slice(-count);
  if (options.follow !== true) {
    ctx.out.result(
      { lines: lines.map(parseLine) },
      (p) => {
        for (const line of lines) printLine(p, line);
      },
      { always: true },
    );
    return;
  }
  // Following: one line per log line (JSON lines with --json), until Ctrl-C.
  const emit = (line: string) => ctx.out.raw(`${ctx.out.json ? line : formatLine(line)}\n`);
  lines.forEach(emit);
  await followFile(paths.logFile, Buffer.byteLength(text ?? ''), emit, ctx.signal);
}

/** Polls the file for appended lines; starts over when it shrinks (rotated). */
async function followFile(
  file: string,
  from: number,
  emit: (line: string) => void,
  signal: AbortSignal,
): Promise<void> {
  let offset = from;
  let partial = '';
  while (!signal.aborted) {
    const size = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    if (size < offset) offset = 0;
    if (size > offset) {
      const handle = await open(file, 'r');
      try {
        const buffer = Buffer.alloc(size - offset);
        await handle.read(buffer, 0, buffer.length, offset);
        offset = size;
        const chunk = partial + buffer.toString('utf8');
        const parts = chunk.split('\n');
        partial = parts.pop() ?? '';
        parts.filter((line) => line !== '').forEach(emit);
      } finally {
        await handle.close();
      }
    }
    await delay(250, undefined, { signal }).catch(() => {});
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return { message: line };
  }
}

function printLine(p: Printer, line: string): void {
  p.line(formatLine(line));
}

/** `time level message key=value …` for a JSON line; other lines (a crash's stderr) as they are. */
function formatLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (entry === null || typeof entry !== 'object') return line;
  const { time, level, msg, ...rest } = entry;
  const fields = Object.entries(rest)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  const text = (value: unknown) =>
    typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
  // the engine's log outlives days and restarts: every line with its date, in local time as elsewhere
  const shown = typeof time === 'string' ? formatTime(time, { date: true, ms: true }) : text(time);
  return `${shown} ${text(level).padEnd(5)} ${text(msg)}${fields === '' ? '' : `  ${fields}`}`;
}

/** `2 of 2 ready`, `1 of 2 ready, 1 loading`, `off` */
function warmPoolText(pool: { size: number; ready: number; warming: number }): string {
  if (pool.size === 0) return `off (${SETTINGS.warmPool.env}=0)`;
  return `${pool.ready} of ${pool.size} ready${pool.warming > 0 ? `, ${pool.warming} loading` : ''}`;
}
