/* eslint-disable no-control-regex -- these tests look for control characters */
import { describe, expect, it } from 'vitest';
import {
  jsonText,
  serviceData,
  serviceLines,
  serviceText,
  terminalSafe,
} from '../../../src/cli/render/service-text.js';

describe('serviceText', () => {
  it('shows escape sequences, line breaks and bidirectional overrides as visible text', () => {
    expect(serviceText('\u001b]0;pwned\u0007')).toBe('\\x1b]0;pwned\\x07');
    expect(serviceText('a\u001b[2Jb')).toBe('a\\x1b[2Jb');
    expect(serviceText('fake\r\nINFO  forged line')).toBe('fake\\r\\nINFO  forged line');
    expect(serviceText('\u009b2J \u007f \u202egnp.exe')).toBe('\\x9b2J \\x7f \\u202egnp.exe');
    expect(serviceText('tab\tstays, ünïcode stays')).toBe('tab\tstays, ünïcode stays');
  });

  it('keeps line breaks in serviceLines only', () => {
    expect(serviceLines('one\ntwo\u001b[2J\r')).toBe('one\ntwo\\x1b[2J\\r');
  });

  it('escapes every string of an answer, keys too, and leaves other values', () => {
    expect(serviceData({ name: 'x\u001b[8m', n: 1, list: ['\u0007'], nested: { 'k\u001b': null } })).toEqual({
      name: 'x\\x1b[8m',
      n: 1,
      list: ['\\x07'],
      nested: { 'k\\x1b': null },
    });
  });
});

describe('jsonText', () => {
  it('is JSON of the same value, with no character a terminal acts on', () => {
    const value = { name: '\u001b[2J\u009b\u007f\u202e' };
    const text = jsonText(value);
    expect(JSON.parse(text)).toEqual(value);
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
  });
});

describe('terminalSafe', () => {
  it('keeps the colour sequences when styled, and shows every other sequence as text', () => {
    expect(terminalSafe('\u001b[31merror\u001b[39m \u001b[2J\n', true)).toBe('\u001b[31merror\u001b[39m \\x1b[2J\n');
    expect(terminalSafe('\u001b[31merror\u001b[39m', false)).toBe('\\x1b[31merror\\x1b[39m');
    expect(terminalSafe('plain\ttext\n', false)).toBe('plain\ttext\n');
  });
});
