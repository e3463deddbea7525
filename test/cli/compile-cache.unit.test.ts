import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCacheDir } from '../../src/cli/compile-cache.js';

const home = () => '/home/ada';

describe('compileCacheDir', () => {
  it.each([
    ['linux', {}, join('/home/ada', '.cache', 'mcpctl')],
    ['linux', { XDG_CACHE_HOME: '/xdg' }, join('/xdg', 'mcpctl')],
    ['linux', { XDG_CACHE_HOME: '' }, join('/home/ada', '.cache', 'mcpctl')],
    ['darwin', { XDG_CACHE_HOME: '/xdg' }, join('/home/ada', 'Library', 'Caches', 'mcpctl')],
    [
      'win32',
      { LOCALAPPDATA: 'C:\\Users\\ada\\AppData\\Local' },
      join('C:\\Users\\ada\\AppData\\Local', 'mcpctl', 'Cache'),
    ],
    ['win32', {}, undefined],
    ['linux', { MCPCTL_COMPILE_CACHE: '/elsewhere' }, '/elsewhere'],
    ['darwin', { MCPCTL_COMPILE_CACHE: '/elsewhere' }, '/elsewhere'],
    ['linux', { MCPCTL_COMPILE_CACHE: '0' }, undefined],
    ['linux', { MCPCTL_COMPILE_CACHE: 'off' }, undefined],
    ['linux', { NODE_DISABLE_COMPILE_CACHE: '1' }, undefined],
    ['linux', { NODE_DISABLE_COMPILE_CACHE: '1', MCPCTL_COMPILE_CACHE: '/elsewhere' }, undefined],
  ] as const)('on %s with %j: %s', (platform, env, expected) => {
    expect(compileCacheDir(env, platform, home)).toBe(expected);
  });

  it('is off when there is no home folder to put it in', () => {
    const noHome = () => {
      throw new Error('no home');
    };
    expect(compileCacheDir({}, 'linux', noHome)).toBeUndefined();
    expect(compileCacheDir({ XDG_CACHE_HOME: '/xdg' }, 'linux', noHome)).toBe(join('/xdg', 'mcpctl'));
  });
});
