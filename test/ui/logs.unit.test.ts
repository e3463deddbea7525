import { describe, expect, it } from 'vitest';
import type { LogLine } from '../../src/ui/api-types.js';
import { appendCapped, filterLogLines, toLogLine } from '../../src/ui/logs.js';

const lines: LogLine[] = [
  { time: 't1', level: 'debug', message: 'tools/call get_forecast', instance: 'i1' },
  { time: 't2', level: 'info', message: 'instance healthy', instance: 'i2' },
  { time: 't3', level: 'warn', message: 'slow answer', request_id: 'req_abc' },
  { time: 't4', level: 'error', message: 'Tool "get_forecast" failed' },
];

describe('the log tail', () => {
  it('keeps the lines at a level or above', () => {
    expect(filterLogLines(lines, 'debug', '')).toHaveLength(4);
    expect(filterLogLines(lines, 'warn', '').map((l) => l.time)).toEqual(['t3', 't4']);
    expect(filterLogLines(lines, 'error', '').map((l) => l.time)).toEqual(['t4']);
  });

  it('filters by text in the message, instance or request id, in any case', () => {
    expect(filterLogLines(lines, 'debug', 'GET_FORECAST').map((l) => l.time)).toEqual(['t1', 't4']);
    expect(filterLogLines(lines, 'debug', 'i2').map((l) => l.time)).toEqual(['t2']);
    expect(filterLogLines(lines, 'debug', 'req_abc').map((l) => l.time)).toEqual(['t3']);
    expect(filterLogLines(lines, 'error', 'slow')).toEqual([]);
  });

  it('keeps the newest lines up to the cap', () => {
    expect(appendCapped([1, 2, 3], [4, 5], 4)).toEqual([2, 3, 4, 5]);
    expect(appendCapped([1], [2], 4)).toEqual([1, 2]);
  });

  it('reads a streamed object as a line, and skips what is not one', () => {
    expect(toLogLine({ time: 't', level: 'info', message: 'm', instance: 'i1', extra: 1 })).toEqual({
      time: 't',
      level: 'info',
      message: 'm',
      instance: 'i1',
    });
    expect(toLogLine({ message: 'no level' })).toEqual({ time: '', level: 'info', message: 'no level' });
    expect(toLogLine({ level: 'info' })).toBeUndefined();
    expect(toLogLine(undefined)).toBeUndefined();
  });
});
