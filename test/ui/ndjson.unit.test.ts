import { describe, expect, it } from 'vitest';
import { NdjsonSplitter, parseJsonLine } from '../../src/ui/ndjson.js';

describe('the NDJSON splitter', () => {
  it('gives each complete line, keeping a line cut between chunks for the next', () => {
    const splitter = new NdjsonSplitter();
    expect(splitter.push('{"a":1}\n{"b"')).toEqual(['{"a":1}']);
    expect(splitter.push(':2}\n')).toEqual(['{"b":2}']);
    expect(splitter.push('{"c":3}\n{"d":4}\n')).toEqual(['{"c":3}', '{"d":4}']);
  });

  it('drops the empty keep-alive lines and a carriage return', () => {
    const splitter = new NdjsonSplitter();
    expect(splitter.push('\n\n{"a":1}\r\n\n')).toEqual(['{"a":1}']);
    expect(splitter.push('\n')).toEqual([]);
  });

  it('gives a last line without a line break at the end', () => {
    const splitter = new NdjsonSplitter();
    expect(splitter.push('{"a":1}\n{"b":2}')).toEqual(['{"a":1}']);
    expect(splitter.end()).toEqual(['{"b":2}']);
    expect(splitter.end()).toEqual([]);
  });

  it('parses objects and skips anything else', () => {
    expect(parseJsonLine('{"message":"hi"}')).toEqual({ message: 'hi' });
    expect(parseJsonLine('[1]')).toBeUndefined();
    expect(parseJsonLine('null')).toBeUndefined();
    expect(parseJsonLine('{"broken"')).toBeUndefined();
  });
});
