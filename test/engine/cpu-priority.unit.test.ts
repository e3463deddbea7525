import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ENGINE_NICE,
  engineNice,
  sessionOf,
  yieldToInstances,
  type PriorityHost,
} from '../../src/engine/cpu-priority.js';

/** /proc as a map of paths; writes are recorded, and a path named in `failing` throws. */
function fakeProc(
  files: Record<string, string>,
  options: { failing?: string[]; pid?: number } = {},
): PriorityHost & { written: Record<string, string> } {
  const written: Record<string, string> = {};
  return {
    pid: options.pid ?? 4242,
    written,
    read(path) {
      if (options.failing?.includes(path) === true || files[path] === undefined)
        throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return files[path];
    },
    write(path, text) {
      if (options.failing?.includes(`write ${path}`) === true)
        throw Object.assign(new Error(`EACCES: ${path}`), { code: 'EACCES' });
      written[path] = text;
    },
  };
}

// pid (comm) state ppid pgrp session …: a command name may hold spaces and parentheses
const statOf = (pid: number, session: number) =>
  `${pid} (node (x) y) S 1 ${session} ${session} 0 -1 4194560 1190 0 0 0 12 3 0 0 20 0 11 0\n`;

describe('the engine CPU priority', () => {
  it('reads MCPCTL_ENGINE_NICE: unset is the default, 0 is off, anything but 0–19 is named and the default used', () => {
    expect(engineNice({ env: {} })).toEqual({ nice: DEFAULT_ENGINE_NICE });
    expect(engineNice({ env: { MCPCTL_ENGINE_NICE: ' ' } })).toEqual({ nice: DEFAULT_ENGINE_NICE });
    expect(engineNice({ env: { MCPCTL_ENGINE_NICE: '0' } })).toEqual({ nice: 0 });
    expect(engineNice({ env: { MCPCTL_ENGINE_NICE: '19' } })).toEqual({ nice: 19 });
    for (const bad of ['-1', '20', '2.5', 'low']) {
      const read = engineNice({ env: { MCPCTL_ENGINE_NICE: bad } });
      expect(read.nice).toBe(DEFAULT_ENGINE_NICE);
      expect(read.problem).toBe(
        `MCPCTL_ENGINE_NICE must be a whole number from 0 (off) to 19, not "${bad}"; using ${DEFAULT_ENGINE_NICE}`,
      );
    }
  });

  it('finds the session in /proc/<pid>/stat after the command, whatever the command holds', () => {
    expect(sessionOf(statOf(4242, 4242))).toBe(4242);
    expect(sessionOf(statOf(4242, 77))).toBe(77);
    expect(sessionOf('garbage')).toBeUndefined();
  });

  it('lowers its autogroup only when it leads its own session, and leaves everything as it was where it cannot', () => {
    const leader = fakeProc({
      '/proc/self/autogroup': '/autogroup-12 nice 0\n',
      '/proc/self/stat': statOf(4242, 4242),
    });
    expect(yieldToInstances(5, leader)).toBe('lowered');
    expect(leader.written).toEqual({ '/proc/self/autogroup': '5' });

    // in the foreground it shares the terminal's group: lowering that would slow the shell too
    const foreground = fakeProc({
      '/proc/self/autogroup': '/autogroup-12 nice 0\n',
      '/proc/self/stat': statOf(4242, 900),
    });
    expect(yieldToInstances(5, foreground)).toBe('not a session leader');
    expect(foreground.written).toEqual({});

    const off = fakeProc({ '/proc/self/autogroup': '/autogroup-12 nice 0\n', '/proc/self/stat': statOf(4242, 4242) });
    expect(yieldToInstances(0, off)).toBe('off');
    expect(off.written).toEqual({});

    // no autogroups (another system, or a kernel built without them), or a /proc it may not write
    expect(yieldToInstances(5, fakeProc({ '/proc/self/stat': statOf(4242, 4242) }))).toBe('not supported');
    const readOnly = fakeProc(
      { '/proc/self/autogroup': '/autogroup-12 nice 0\n', '/proc/self/stat': statOf(4242, 4242) },
      { failing: ['write /proc/self/autogroup'] },
    );
    expect(yieldToInstances(5, readOnly)).toBe('not supported');
  });
});
