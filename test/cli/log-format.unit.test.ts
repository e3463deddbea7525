/**
 * How `mcpctl logs` shows lines: times alone within a day, dates too when the lines span days; the
 * line a follow ends with; and the filter the engine and the CLI share.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { LogLine } from '../../src/api/operations.js';
import { describeLogEnd, formatLogLine, logDatesNeeded } from '../../src/cli/commands/logs.js';
import { Output } from '../../src/cli/output.js';
import { compileLogFilter } from '../../src/shared/log-filter.js';

const out = new Output({
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  json: false,
  quiet: false,
  color: false,
  ci: true,
});

const line = (time: string, extra: Partial<LogLine> = {}): LogLine => ({ time, level: 'info', message: 'm', ...extra });

describe('log line times', () => {
  // times made from local dates, as the lines show local time wherever the tests run
  const at = (day: number, h: number, m: number, s: number, ms = 0) =>
    new Date(2026, 0, day, h, m, s, ms).toISOString();

  it('shows the local time alone, or the date and time when asked', () => {
    expect(formatLogLine(out, line(at(31, 23, 59, 58, 120)))).toBe('23:59:58.120 INFO  m\n');
    expect(formatLogLine(out, line(at(31, 23, 59, 58, 120)), true)).toBe('2026-01-31 23:59:58.120 INFO  m\n');
  });

  it('asks for dates only when a line is not from today, as when the lines span days', () => {
    const today = new Date(2026, 0, 31, 23, 59, 59, 999).getTime();
    expect(logDatesNeeded([], today)).toBe(false);
    expect(logDatesNeeded([line(at(31, 0, 0, 0)), line(at(31, 23, 59, 59, 999))], today)).toBe(false);
    expect(logDatesNeeded([line(at(30, 23, 59, 59, 999)), line(at(31, 0, 0, 0))], today)).toBe(true);
    expect(logDatesNeeded([line(at(30, 12, 0, 0))], today)).toBe(true);
  });
});

describe('the end of a follow', () => {
  it('says why nothing more will come', () => {
    const base = { deployment_id: 'deploy_a', url: 'u', deploy_time: 1, health_check: 'h' };
    expect(describeLogEnd('deploy_a', { ...base, status: 'stopped', reason: 'replaced by deploy_b' })).toBe(
      'the log ends: deploy_a stopped (replaced by deploy_b)',
    );
    expect(describeLogEnd('deploy_a', { ...base, status: 'failed', reason: 'no healthy instance' })).toBe(
      'the log ends: deploy_a failed: no healthy instance',
    );
    expect(describeLogEnd('deploy_a', undefined)).toBe('the log stream ended');
  });
});

describe('compileLogFilter', () => {
  const lines = [
    { level: 'debug', message: '→ POST tools/call echo', instance: 'i1' },
    { level: 'info', message: 'instance i2 healthy', instance: 'i2' },
    { level: 'warn', message: 'event=request rpc=tools/call is_error=true', instance: 'i1', request_id: 'req_abc' },
    { level: 'error', message: 'deployment failed' },
    { level: 'chatty', message: 'a level nobody knows' },
  ];
  const kept = async (filter: Parameters<typeof compileLogFilter>[0]) => {
    const keep = await compileLogFilter(filter);
    return lines.filter((l) => keep === undefined || keep(l)).map((l) => l.message);
  };

  it.each([
    [{}, 5],
    [{ level: 'debug' as const }, 5],
    [{ level: 'info' as const }, 4],
    [{ level: 'warn' as const }, 2],
    [{ level: 'error' as const }, 1],
    [{ grep: 'TOOLS/CALL' }, 2],
    [{ grep: '/^instance i\\d/' }, 1],
    [{ grep: '/FAILED/i' }, 1],
    [{ grep: 'req_abc' }, 1],
    [{ instance: 'i1' }, 2],
    [{ instance: 'i1', level: 'warn' as const }, 1],
  ])('%j keeps %i lines', async (filter, count) => {
    expect(await kept(filter)).toHaveLength(count);
  });

  it('lets everything through without a filter, and refuses what RE2 cannot run', async () => {
    expect(await compileLogFilter({})).toBeUndefined();
    await expect(compileLogFilter({ grep: '/(?=a)/' })).rejects.toThrow(/lookahead/);
    await expect(compileLogFilter({ grep: '/a/g' })).rejects.toThrow(/only the flags i, m and s/);
    await expect(compileLogFilter({ grep: 'x'.repeat(501) })).rejects.toThrow(/longer than 500/);
  });
});
