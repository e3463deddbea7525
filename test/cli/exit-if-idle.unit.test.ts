import { describe, expect, it, vi } from 'vitest';
import { exitIfIdle, type ExitHost } from '../../src/cli/exit-if-idle.js';

function host(overrides: Partial<ExitHost> = {}): ExitHost & { exits: number; flushes: number } {
  const stdout = { writableLength: 0 };
  const stderr = { writableLength: 0 };
  const state = {
    exits: 0,
    flushes: 0,
    stdout,
    stderr,
    // the streams the host has (an override's too), so each case fails on its own condition only
    activeHandles: (): unknown[] => [state.stdout, state.stderr],
    activeResources: () => ['PipeWrap', 'TTYWrap'],
    compileCache: {},
    exit: () => {
      state.exits += 1;
    },
    ...overrides,
  };
  return state;
}

describe('exitIfIdle', () => {
  it('exits when only stdout and stderr are open and nothing is queued', () => {
    const h = host();
    expect(exitIfIdle(h)).toBe(true);
    expect(h.exits).toBe(1);
  });

  it('exits when stdout and stderr are files (no handles at all)', () => {
    const h = host({ activeHandles: () => [], activeResources: () => [] });
    expect(exitIfIdle(h)).toBe(true);
  });

  it.each([
    ['output still queued for stdout', { stdout: { writableLength: 12 } }],
    ['output still queued for stderr', { stderr: { writableLength: 3 } }],
    ['a timer', { activeResources: () => ['PipeWrap', 'Timeout'] }],
    ['a socket', { activeResources: () => ['TCPSocketWrap'] }],
    ['a file operation', { activeResources: () => ['FSReqCallback'] }],
    ['a handle that is not stdout or stderr (stdin being read, a child’s pipe)', { activeHandles: () => [{}] }],
    ['no way to list the handles', { activeHandles: undefined }],
  ] as const)('keeps the natural exit with %s', (_what, overrides) => {
    const h = host(overrides);
    expect(exitIfIdle(h)).toBe(false);
    expect(h.exits).toBe(0);
  });

  it('writes Node’s own compile cache before exiting', () => {
    const order: string[] = [];
    const flushCompileCache = vi.fn(() => order.push('flush'));
    const h = host({
      compileCache: { enableCompileCache: () => undefined, flushCompileCache },
      exit: () => order.push('exit'),
    });
    expect(exitIfIdle(h)).toBe(true);
    expect(order).toEqual(['flush', 'exit']);
  });

  it('keeps the natural exit where Node has a compile cache it cannot be asked to write', () => {
    const h = host({ compileCache: { enableCompileCache: () => undefined } });
    expect(exitIfIdle(h)).toBe(false);
    expect(h.exits).toBe(0);
  });
});
