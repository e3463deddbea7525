/**
 * How `mcpctl logs` shows lines: times alone within a day, dates too when the lines span days; the
 * line a follow ends with; and the filter the engine and the CLI share.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { LogLine } from '../../src/api/operations.js';
import { describeLogEnd, formatLogLine, spansDays } from '../../src/cli/commands/logs.js';
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
  it('shows the time alone, or the date and time when asked', () => {
    expect(formatLogLine(out, line('2026-01-31T23:59:58.120Z'))).toBe('23:59:58.120 INFO  m\n');
    expect(formatLogLine(out, line('2026-01-31T23:59:58.120Z'), true)).toBe('2026-01-31 23:59:58.120 INFO  m\n');
  });

  it('asks for dates only when the lines span more than one day', () => {
    expect(spansDays([])).toBe(false);
    expect(spansDays([line('2026-01-31T00:00:00.000Z'), line('2026-01-31T23:59:59.999Z')])).toBe(false);
    expect(spansDays([line('2026-01-31T23:59:59.999Z'), line('2026-02-01T00:00:00.000Z')])).toBe(true);
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
